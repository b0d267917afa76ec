"""Incremental JDBC reads against a real PostgreSQL: bounds, pushdown, errors."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from glue_incremental.sources.jdbc import (
    JdbcSource,
    SourceUnavailable,
    column_names,
    incremental_query,
    literal,
    quote_table,
    read_incremental,
)

from tests.harness.endpoint import free_port
from tests.harness.postgres import statements_since

pytestmark = pytest.mark.postgres

BOUNDARY = datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC)
MICRO = timedelta(microseconds=1)


def _table(postgres, columns: str, rows: list[tuple], *, schema: str = "public") -> str:
    """A fresh table named after a uuid, filled with ``rows``; returns ``schema.name``."""
    name = f"{schema}.t_{uuid.uuid4().hex[:10]}"
    postgres.execute(f"CREATE TABLE {name} ({columns})")
    if rows:
        marks = ", ".join(["%s"] * len(rows[0]))
        postgres.execute(f"INSERT INTO {name} VALUES ({marks})", rows, many=True)
    return name


def _source(postgres, table: str, **overrides) -> JdbcSource:
    settings = {"user": postgres.user, "password": postgres.password, **overrides}
    return JdbcSource(postgres.jdbc_url, table, **settings)


def _ids(frame) -> list[int]:
    return sorted(row["id"] for row in frame.select("id").collect())


def _log_offset(postgres) -> int:
    return statements_since(postgres, 0)[1]


def _received(postgres, offset: int, table: str) -> list[str]:
    """SELECTs PostgreSQL received since ``offset`` that mention ``table``."""
    statements, _ = statements_since(postgres, offset)
    bare = table.split(".")[-1]
    return [s for s in statements if bare in s and s.lstrip().upper().startswith("SELECT")]


@pytest.fixture
def orders(postgres):
    """ids 1..6: two rows share the boundary value, one row has no watermark."""
    before = BOUNDARY - timedelta(hours=1)
    return _table(
        postgres,
        "id integer PRIMARY KEY, updated_at timestamptz, amount numeric(10,2)",
        [
            (1, before, Decimal("1.00")),
            (2, before, Decimal("2.00")),
            (3, BOUNDARY, Decimal("3.00")),
            (4, BOUNDARY, Decimal("4.00")),  # committed later, same value: must not be lost
            (5, BOUNDARY + timedelta(hours=1), Decimal("5.00")),
            (6, None, Decimal("6.00")),
        ],
    )


def test_first_run_without_lower_bound_reads_every_row(spark, postgres, orders):
    frame = read_incremental(
        spark, _source(postgres, orders), watermark_column="updated_at", lower_bound=None
    )
    assert _ids(frame) == [1, 2, 3, 4, 5, 6]
    assert frame.columns == ["id", "updated_at", "amount"]


def test_incremental_read_keeps_every_row_sharing_the_boundary_value(spark, postgres, orders):
    frame = read_incremental(
        spark,
        _source(postgres, orders),
        watermark_column="updated_at",
        lower_bound=BOUNDARY,
        include_null_watermarks=False,
    )
    assert _ids(frame) == [3, 4, 5]


def test_the_database_receives_the_watermark_predicate(spark, postgres, orders):
    offset = _log_offset(postgres)
    frame = read_incremental(
        spark,
        _source(postgres, orders),
        watermark_column="updated_at",
        lower_bound=BOUNDARY,
        upper_bound=BOUNDARY + timedelta(minutes=30),
        include_null_watermarks=False,
    )
    assert _ids(frame) == [3, 4]
    received = _received(postgres, offset, orders)
    predicate = (
        "WHERE (\"updated_at\" >= TIMESTAMP WITH TIME ZONE '2024-05-01 12:00:00.500000+00:00' "
        "AND \"updated_at\" < TIMESTAMP WITH TIME ZONE '2024-05-01 12:30:00.500000+00:00')"
    )
    # Schema probe (WHERE 1=0) and the row read both carry the predicate inside the subquery:
    # PostgreSQL did the filtering, not a Spark-side Filter.
    reads = [s for s in received if "1=0" not in s]
    assert reads, received
    assert all(predicate in s for s in reads), reads
    statements, _ = statements_since(postgres, offset)
    assert "SET TIME ZONE 'UTC'" in statements


def test_null_watermark_rows_are_read_only_when_asked(spark, postgres, orders):
    source = _source(postgres, orders)
    with_nulls = read_incremental(
        spark, source, watermark_column="updated_at", lower_bound=BOUNDARY
    )
    without = read_incremental(
        spark,
        source,
        watermark_column="updated_at",
        lower_bound=BOUNDARY,
        include_null_watermarks=False,
    )
    assert _ids(with_nulls) == [3, 4, 5, 6]
    assert _ids(without) == [3, 4, 5]
    full_without = read_incremental(
        spark,
        source,
        watermark_column="updated_at",
        lower_bound=None,
        include_null_watermarks=False,
    )
    assert _ids(full_without) == [1, 2, 3, 4, 5]


def test_timestamp_bounds_are_exact_to_the_microsecond(spark, postgres):
    naive = BOUNDARY.replace(tzinfo=None)
    table = _table(
        postgres,
        "id integer, aware timestamptz, wall timestamp",
        [
            (1, BOUNDARY - MICRO, naive - MICRO),
            (2, BOUNDARY, naive),
            (3, BOUNDARY + MICRO, naive + MICRO),
        ],
    )
    source = _source(postgres, table)
    pairs = (("aware", BOUNDARY), ("aware", naive), ("wall", naive), ("wall", BOUNDARY))
    for column, bound in pairs:
        lower = read_incremental(spark, source, watermark_column=column, lower_bound=bound)
        assert _ids(lower) == [2, 3], (column, bound)
        window = read_incremental(
            spark, source, watermark_column=column, lower_bound=bound, upper_bound=bound + MICRO
        )
        assert _ids(window) == [2], (column, bound)  # upper bound is exclusive
    # Values come back as the same instants (timestamp without time zone = UTC wall time).
    rows = read_incremental(spark, source, watermark_column="aware", lower_bound=BOUNDARY)
    got = {r["id"]: (r["aware"], r["wall"]) for r in rows.collect()}
    expected = BOUNDARY.astimezone().replace(tzinfo=None)  # PySpark yields local naive values
    assert got[2] == (expected, expected)


@pytest.mark.parametrize("partition_column", ["id", "day"])
def test_parallel_read_returns_the_same_rows_in_two_range_queries(
    spark, postgres, partition_column
):
    from pyspark.testing.utils import assertDataFrameEqual

    rows = [(i, date(2024, 1, 1) + timedelta(days=i), f"r{i}") for i in range(1, 21)]
    rows.append((21, None, "no watermark"))
    table = _table(postgres, "id bigint, day date, label text", rows)
    serial = read_incremental(
        spark, _source(postgres, table), watermark_column="day", lower_bound=date(2024, 1, 5)
    )
    offset = _log_offset(postgres)
    parallel = read_incremental(
        spark,
        _source(postgres, table, num_partitions=2, partition_column=partition_column),
        watermark_column="day",
        lower_bound=date(2024, 1, 5),
    )
    assert parallel.rdd.getNumPartitions() == 2
    assert _ids(parallel) == [*range(4, 21), 21]  # one action: the statements below
    received = _received(postgres, offset, table)
    bounds = [s for s in received if f'MIN("{partition_column}")' in s and "1=0" not in s]
    assert len(bounds) == 1 and "\"day\" >= DATE '2024-01-05'" in bounds[0], received
    ranges = [s for s in received if "1=0" not in s and "MIN(" not in s]
    assert len(ranges) == 2, ranges
    assert all("\"day\" >= DATE '2024-01-05'" in s for s in ranges), ranges
    quoted = f'"{partition_column}"'
    assert any(f"{quoted} < " in s for s in ranges), ranges
    assert any(f"{quoted} >= " in s for s in ranges), ranges
    assertDataFrameEqual(parallel, serial)


def test_parallel_read_of_an_empty_range_is_empty(spark, postgres):
    table = _table(postgres, "id bigint, n bigint", [(1, 10), (2, 20)])
    frame = read_incremental(
        spark,
        _source(postgres, table, num_partitions=2, partition_column="id"),
        watermark_column="n",
        lower_bound=100,
        include_null_watermarks=False,
    )
    assert frame.collect() == []


def test_injection_in_a_string_bound_is_a_literal(spark, postgres):
    attack = "x' OR '1'='1"
    backslash_attack = "q\\' OR 1=1 --"
    table = _table(
        postgres,
        "id integer, code text",
        [(1, "a"), (2, "m"), (3, attack), (4, "z"), (5, backslash_attack)],
    )
    source = _source(postgres, table)
    first = read_incremental(
        spark, source, watermark_column="code", lower_bound=attack, include_null_watermarks=False
    )
    assert _ids(first) == [3, 4]
    second = read_incremental(
        spark,
        source,
        watermark_column="code",
        lower_bound=backslash_attack,
        upper_bound=attack,
        include_null_watermarks=False,
    )
    assert _ids(second) == [5]
    assert postgres.execute(f"SELECT count(*) FROM {table}")[0][0] == 5


def test_bad_password_is_one_clear_error_without_the_password(spark, postgres, orders):
    secret = "wrong-Secret-42"
    source = _source(postgres, orders, password=secret)
    with pytest.raises(SourceUnavailable) as caught:
        read_incremental(spark, source, watermark_column="updated_at", lower_bound=None)
    message = str(caught.value)
    assert "password authentication failed" in message
    assert "\n" not in message
    assert secret not in message and secret not in repr(caught.value)
    assert secret not in repr(source)
    assert caught.value.url == postgres.jdbc_url
    assert caught.value.sqlstate == "28P01"


def test_unreachable_database_is_source_unavailable(spark, postgres):
    url = f"jdbc:postgresql://127.0.0.1:{free_port()}/source?password=hunter2"
    source = JdbcSource(url, "public.orders", user="glue")
    with pytest.raises(SourceUnavailable) as caught:
        read_incremental(spark, source, watermark_column="updated_at", lower_bound=None)
    message = str(caught.value)
    assert "Connection refused" in message
    assert "hunter2" not in message and "\n" not in message


def test_missing_table_is_source_unavailable_naming_the_table(spark, postgres):
    missing = f"public.missing_{uuid.uuid4().hex[:8]}"
    with pytest.raises(SourceUnavailable) as caught:
        column_names(spark, _source(postgres, missing))
    assert missing in str(caught.value)
    assert caught.value.table == missing and caught.value.sqlstate == "42P01"
    with pytest.raises(SourceUnavailable, match=missing):
        read_incremental(spark, _source(postgres, missing), watermark_column="w", lower_bound=1)


def test_column_names_probes_the_schema_without_reading_rows(spark, postgres, orders):
    offset = _log_offset(postgres)
    assert column_names(spark, _source(postgres, orders)) == ["id", "updated_at", "amount"]
    received = _received(postgres, offset, orders)
    assert received, "no statement reached the database"
    assert all("WHERE 1=0" in s for s in received), received


def test_bounds_render_as_typed_literals_and_bad_input_is_rejected():
    source = JdbcSource("jdbc:postgresql://db:5432/app", 'public."Odd ""Name"""')
    assert quote_table(source.table) == '"public"."Odd ""Name"""'
    assert source.driver_class == "org.postgresql.Driver"
    assert literal(datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)) == (
        "TIMESTAMP WITH TIME ZONE '2024-01-02 03:04:05.000006+00:00'"
    )
    assert literal(datetime(2024, 1, 2)) == "TIMESTAMP '2024-01-02 00:00:00.000000'"
    assert literal(date(2024, 1, 2)) == "DATE '2024-01-02'"
    assert literal(Decimal("1E+3")) == "1000"
    assert literal(-7) == "-7"
    assert literal("it's") == "'it''s'"
    assert literal("a\\'b") == "E'a\\\\''b'"
    assert incremental_query(
        source, watermark_column="w", lower_bound=3, columns=["id", 'we"ird']
    ) == ('SELECT "id", "we""ird" FROM "public"."Odd ""Name""" WHERE (("w" >= 3) OR "w" IS NULL)')
    assert incremental_query(source, watermark_column="w", lower_bound=None) == (
        'SELECT * FROM "public"."Odd ""Name"""'
    )
    for bad in (True, object(), float("nan"), Decimal("NaN"), timedelta(1)):
        with pytest.raises((TypeError, ValueError)):
            literal(bad)
    for table in ("orders; DROP TABLE x", "a.b.c.d", "", '"open', "x y"):
        with pytest.raises(ValueError):
            JdbcSource("jdbc:postgresql://db/app", table)
    with pytest.raises(ValueError, match="jdbc:"):
        JdbcSource("postgresql://db/app", "t")
    with pytest.raises(ValueError, match="partition_column"):
        JdbcSource("jdbc:postgresql://db/app", "t", num_partitions=2)
