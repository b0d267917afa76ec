"""The incremental load from a real PostgreSQL table."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.load.job import SchemaError
from glue_incremental.sources.jdbc import SourceUnavailable
from glue_incremental.watermarks import Watermarks, create_table
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.testing import assertDataFrameEqual

from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, read_parquet, run_load_at
from tests.harness.postgres import statements_since

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
COLUMNS = ["id", "part", "updated_at", "value"]


@pytest.fixture
def table(postgres):
    with orders_table(postgres, prefix="orders") as name:
        yield name


def full_refresh(spark, postgres, table):
    """The reference, without the job: the table's current rows (one per primary key)."""
    rows = postgres.execute(f"select id, part, updated_at, value from {table}")
    return spark.createDataFrame(rows, "id long, part string, updated_at timestamp, value string")


def run_pg(spark, config, store, run_id: str, at: datetime = T0, job_name: str = "pg") -> dict:
    """One run of the load job ``job_name`` as ``run_id``, the clock at ``at``; its summary."""
    return run_load_at(
        spark,
        config,
        job_name=job_name,
        run_id=run_id,
        clock=FixedClock(at.timestamp()),
        store=store,
    )


def test_incremental_run_pushes_the_watermark_predicate_down_to_the_database(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path)
    upsert(postgres, table, [(1, "a", T0, "x")])
    run_pg(spark, config, store, "jr_1")
    _, offset = statements_since(postgres, 0)

    run_pg(spark, config, store, "jr_2", T0 + timedelta(minutes=1))

    received, _ = statements_since(postgres, offset)
    reads = [sql for sql in received if table in sql and "WHERE" in sql and "1=0" not in sql]
    assert reads, received
    assert any(
        '"updated_at" >= TIMESTAMP WITH TIME ZONE \'2024-05-01 11:30:00' in sql for sql in reads
    ), reads


def test_rows_sharing_the_boundary_value_and_late_rows_in_the_lookback_are_not_lost(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path)
    upsert(postgres, table, [(1, "a", T0, "x"), (2, "b", T0 - timedelta(hours=1), "y")])
    run_pg(spark, config, store, "jr_1")

    upsert(
        postgres,
        table,
        [
            (3, "a", T0, "same-timestamp-as-the-cursor"),
            (4, "b", T0 - timedelta(minutes=10), "late-but-inside-the-lookback"),
            (2, "c", T0 + timedelta(seconds=1), "updated-and-moved"),
        ],
    )
    summary = run_pg(spark, config, store, "jr_2", T0 + timedelta(minutes=1))

    assert summary["records_read"] == 4  # 1 re-read at the boundary + 3 changes
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        full_refresh(spark, postgres, table),
    )
    assert store.get_watermark("pg")["watermarks"]["cursor"] == T0 + timedelta(seconds=1)


def test_the_cursor_keeps_microseconds(spark, postgres, table, tmp_path, store):
    config = jdbc_config(postgres, table, tmp_path, lookback=timedelta(0))
    moment = T0 + timedelta(microseconds=123456)
    upsert(postgres, table, [(1, "a", moment, "x")])

    run_pg(spark, config, store, "jr_1")

    assert store.get_watermark("pg")["watermarks"]["cursor"] == moment


def test_a_missing_key_column_fails_before_reading_with_its_name(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path, primary_key=("order_id",))

    with pytest.raises(SchemaError, match="order_id"):
        run_pg(spark, config, store, "jr_1")

    assert not (tmp_path / "target").exists()


def test_bad_credentials_give_one_clear_error(spark, postgres, table, tmp_path, store):
    config = jdbc_config(postgres, table, tmp_path, source_password="wrong")

    with pytest.raises(SourceUnavailable) as raised:
        run_pg(spark, config, store, "jr_1")

    assert "password authentication failed" in str(raised.value)
    assert "wrong" not in str(raised.value)
    assert store.get_watermark("pg") is None


ROWS = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=8),
        st.sampled_from(["a", "b"]),
        # Minutes relative to "now" at the time of the change: negative = late commit.
        st.integers(min_value=-20, max_value=5),
        st.sampled_from(["p", "q", "r"]),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=max(3, settings().max_examples // 4))
@given(st.lists(ROWS, min_size=1, max_size=3))
def test_property_jdbc_incremental_runs_equal_a_full_refresh(
    spark, postgres, tmp_path_factory, aws, batches
):
    create_table()
    store = Watermarks()
    table = f"prop_{uuid.uuid4().hex[:8]}"
    postgres.execute(
        f"create table {table} (id bigint primary key, part text, updated_at timestamptz, value text)"
    )
    tmp = tmp_path_factory.mktemp("jdbc")
    config = jdbc_config(postgres, table, tmp)
    now = T0
    try:
        for number, batch in enumerate(batches, start=1):
            now += timedelta(hours=1)
            # Late commits stay inside the 30-minute lookback; equal timestamps are common.
            upsert(
                postgres,
                table,
                [(k, p, now + timedelta(minutes=m), f"{v}{number}") for k, p, m, v in batch],
            )
            run_pg(spark, config, store, f"jr_{number}", now, job_name=table)
        assertDataFrameEqual(
            read_parquet(spark, config.target_path, COLUMNS),
            full_refresh(spark, postgres, table),
        )
    finally:
        postgres.execute(f"drop table {table}")


def test_a_column_added_then_widened_in_postgres_between_runs_reaches_the_target(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path)
    upsert(postgres, table, [(1, "a", T0, "x")])
    run_pg(spark, config, store, "jr_1")
    postgres.execute(f"alter table {table} add column qty integer")
    postgres.execute(
        f"insert into {table} values (2, 'a', %s, 'y', 7)", [T0 + timedelta(seconds=1)]
    )

    added = run_pg(spark, config, store, "jr_2", T0 + timedelta(minutes=1))

    postgres.execute(f"alter table {table} alter column qty type bigint")
    postgres.execute(
        f"insert into {table} values (3, 'b', %s, 'z', 3000000000)", [T0 + timedelta(seconds=2)]
    )
    widened = run_pg(spark, config, store, "jr_3", T0 + timedelta(minutes=2))

    assert added["schema_changes"] == ["added qty int"]
    assert widened["schema_changes"] == ["widened qty int to bigint"]
    seen = spark.read.option("mergeSchema", "true").parquet(config.target_path)
    assert dict(seen.dtypes)["qty"] == "bigint"
    assert {r["id"]: r["qty"] for r in seen.collect()} == {1: None, 2: 7, 3: 3_000_000_000}
