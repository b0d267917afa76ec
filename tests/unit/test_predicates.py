"""Partition predicates: escaping, grouping, validation, one action per side, real pruning.

Injection attempts are proven harmless by evaluating the predicate with Spark
against a tiny DataFrame: only the intended rows match. Pruning is proven on
the executed plan (``PartitionFilters``) and on the files the scan read.
"""

from __future__ import annotations

import itertools
from datetime import date
from decimal import Decimal

import pytest
from glue_incremental.partitions.predicates import (
    DEFAULT_MAX_PREDICATE_LENGTH,
    InvalidPartitionValue,
    MissingPartitionColumn,
    PartitionError,
    PartitionTypeMismatch,
    PredicateTooLarge,
    affected_partitions,
    filter_partitions,
    normalise_partitions,
    partition_filter,
    quote_identifier,
    scanned_files,
    sql_string_literal,
    to_sql_predicate,
    validate_partition_values,
)
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from tests.harness.collect_loop import collect_loop_predicates

NASTY = [
    "x' or 1=1 --",
    "x",
    "it's",
    "its",
    "'",
    "''",
    "\\",
    "\\'",
    "a\\b",
    "ab",
    "a\\%b",
    "a%b",
    "\\u0041",
    "A",
    'say "hi"',
    "tab\tnew\nline",
    "') OR ('1'='1",
    "`c` IS NOT NULL OR 'a' = 'a",
    "",
    "é漢字",
]


# --------------------------------------------------------------------------- SQL text


def test_two_levels_group_by_the_first_and_list_the_second():
    partitions = [("2024-01-01", "02"), ("2024-01-02", "05"), ("2024-01-01", "01")]
    assert to_sql_predicate(partitions, ["date", "hour"]) == (
        "(`date` = '2024-01-01' AND `hour` IN ('01','02')) "
        "OR (`date` = '2024-01-02' AND `hour` = '05')"
    )


def test_one_level_is_a_single_in_list_and_duplicates_collapse():
    assert to_sql_predicate(["b", "a", "b"], ["date"]) == "`date` IN ('a','b')"
    assert to_sql_predicate([("a",)], ["date"]) == "`date` = 'a'"


def test_leading_values_with_the_same_sub_list_are_merged():
    partitions = [(d, h) for d in ("2024-01-01", "2024-01-02") for h in ("00", "01")]
    assert to_sql_predicate(partitions, ["date", "hour"]) == (
        "`date` IN ('2024-01-01','2024-01-02') AND `hour` IN ('00','01')"
    )


def test_three_levels_nest_and_nulls_use_is_null():
    partitions = [("a", "x", "1"), ("a", "y", "1"), ("b", "x", "2"), (None, "x", None)]
    assert to_sql_predicate(partitions, ["p", "q", "r"]) == (
        "(`p` = 'a' AND `q` IN ('x','y') AND `r` = '1') "
        "OR (`p` = 'b' AND `q` = 'x' AND `r` = '2') "
        "OR (`p` IS NULL AND `q` = 'x' AND `r` IS NULL)"
    )
    assert to_sql_predicate([("a",), (None,)], ["p"]) == "(`p` = 'a' OR `p` IS NULL)"


def test_no_partitions_selects_nothing():
    assert to_sql_predicate([], ["date"]) == "false"


def test_identifiers_are_backtick_quoted_and_values_escaped():
    assert quote_identifier("we`ird col") == "`we``ird col`"
    assert sql_string_literal("it's") == "'it\\'s'"
    assert sql_string_literal("a\\b") == "'a\\\\b'"
    assert sql_string_literal(date(2024, 1, 2)) == "'2024-01-02'"
    assert sql_string_literal(7) == "'7'"
    assert sql_string_literal("a'b", escaped_string_literals=True) == "CAST(X'612762' AS STRING)"


def test_typed_values_render_as_text():
    assert (
        to_sql_predicate([(date(2024, 1, 2), 3)], ["d", "h"]) == "`d` = '2024-01-02' AND `h` = '3'"
    )


def test_malformed_partitions_are_rejected():
    with pytest.raises(PartitionError, match="expected 2"):
        to_sql_predicate([("a",)], ["date", "hour"])
    with pytest.raises(PartitionError, match="repeat"):
        to_sql_predicate([("a", "b")], ["date", "date"])
    with pytest.raises(InvalidPartitionValue):
        to_sql_predicate([({"a": 1},)], ["date"])


def test_too_long_a_predicate_raises_with_its_length_and_the_limit():
    partitions = [(f"2024-{d:03d}", f"{d:03d}") for d in range(80)]  # nothing merges
    with pytest.raises(PredicateTooLarge) as raised:
        to_sql_predicate(partitions, ["date", "hour"])
    assert raised.value.limit == DEFAULT_MAX_PREDICATE_LENGTH == 2048
    assert raised.value.length == len(
        to_sql_predicate(partitions, ["date", "hour"], max_length=None)
    )
    assert raised.value.length > 2048
    assert "2048" in str(raised.value)
    with pytest.raises(PredicateTooLarge):
        to_sql_predicate([("a",)], ["date"], max_length=5)


def test_ten_thousand_partitions_build_one_predicate_grouped_by_the_first_column():
    # Speed is make bench's to judge, never a timed test's; this checks the shape at scale.
    worst = [(f"2024-{i:05d}", f"{i * 7 % 24:02d}") for i in range(10_000)]  # nothing merges
    hourly = [(f"day-{i // 24:04d}", f"{i % 24:02d}") for i in range(10_000)]
    for partitions in (worst, hourly):
        text = to_sql_predicate(partitions, ["date", "hour"], max_length=None)
        assert text.count("'") >= 2 * 417
    # a day with all 24 hours collapses into one IN list
    assert len(to_sql_predicate(hourly, ["date", "hour"], max_length=None)) < 10_000


# --------------------------------------------------------------------------- evaluated by Spark


def _matches(spark, rows, columns, predicates):
    """For each predicate (SQL text or Column), the set of row indexes it matches; one job."""
    schema = StructType(
        [StructField("i", IntegerType())] + [StructField(c, StringType()) for c in columns]
    )
    df = spark.createDataFrame([(i, *row) for i, row in enumerate(rows)], schema)
    flags = [
        (F.expr(p) if isinstance(p, str) else p).alias(f"m{n}") for n, p in enumerate(predicates)
    ]
    result = df.select("i", *flags).collect()
    return [{r["i"] for r in result if r[f"m{n}"]} for n in range(len(predicates))]


@pytest.mark.spark
def test_injection_attempts_match_only_their_own_row(spark):
    rows = [(value,) for value in NASTY] + [(None,)]
    single = [to_sql_predicate([(value,)], ["c"]) for value in NASTY]
    pairs = [to_sql_predicate([(a,), (b,)], ["c"]) for a, b in itertools.pairwise(NASTY)]
    columns = [partition_filter([(value,)], ["c"]) for value in NASTY]
    matched = _matches(spark, rows, ["c"], single + pairs + columns)
    for i in range(len(NASTY)):
        assert matched[i] == {i}, (NASTY[i], single[i])
        assert matched[len(single) + len(pairs) + i] == {i}
    for i in range(len(pairs)):
        assert matched[len(single) + i] == {i, i + 1}
    # None matches the null row only
    assert _matches(spark, rows, ["c"], [to_sql_predicate([None], ["c"])]) == [{len(NASTY)}]


@pytest.mark.spark
def test_doubling_the_quote_is_not_an_escape_in_spark_sql(spark):
    """Why quotes are backslash-escaped: Spark concatenates 'it' 's' into 'its'."""
    assert spark.sql("SELECT 'it''s' AS v").first().v == "its"
    literal = sql_string_literal("it's")
    assert spark.sql(f"SELECT {literal} AS v").first().v == "it's"


@pytest.mark.spark
def test_weird_identifiers_and_two_levels_with_nasty_values(spark):
    columns = ["da`te", "ho ur"]
    rows = [(a, b) for a in NASTY[:6] for b in NASTY[6:10]]
    wanted = [rows[1], rows[7], rows[13]]
    predicate = to_sql_predicate(wanted, columns)
    (matched,) = _matches(spark, rows, columns, [predicate])
    assert matched == {1, 7, 13}


@pytest.mark.spark
def test_escaped_string_literals_mode_uses_hex_literals(spark):
    key = "spark.sql.parser.escapedStringLiterals"
    predicates = [
        to_sql_predicate([(value,)], ["c"], escaped_string_literals=True) for value in NASTY
    ]
    spark.conf.set(key, "true")
    try:
        matched = _matches(spark, [(value,) for value in NASTY], ["c"], predicates)
    finally:
        spark.conf.unset(key)
    assert matched == [{i} for i in range(len(NASTY))]


_text = st.sampled_from(NASTY) | st.text(max_size=4)
_value = st.none() | _text


@pytest.mark.spark
@given(
    levels=st.integers(1, 3),
    data=st.data(),
)
def test_property_sql_and_column_predicates_match_exactly_the_listed_partitions(
    spark, levels, data
):
    columns = [f"p{i}" for i in range(levels)]
    candidates = data.draw(
        st.lists(st.tuples(*[_value] * levels), min_size=1, max_size=12, unique=True)
    )
    chosen = data.draw(st.lists(st.sampled_from(candidates), max_size=len(candidates)))
    expected = {i for i, row in enumerate(candidates) if row in set(chosen)}
    matched = _matches(
        spark,
        candidates,
        columns,
        [
            to_sql_predicate(chosen, columns, max_length=None),
            partition_filter(chosen, columns),
        ],
    )
    assert matched == [expected, expected]


# --------------------------------------------------------------------------- validation


def test_invalid_values_for_their_column_type_name_column_and_value():
    schema = StructType(
        [
            StructField("date", DateType()),
            StructField("hour", IntegerType()),
            StructField("region", StringType()),
        ]
    )
    cases = [
        (("2024-13-45", "1", "eu"), "date", "2024-13-45", "date"),
        (("2024-01-01", "abc", "eu"), "hour", "abc", "int"),
        (("2024-01-01", "99999999999", "eu"), "hour", "99999999999", "int"),
        (("2024/01/01", "1", "eu"), "date", "2024/01/01", "date"),
        (("2024-01-01", "1", 5), "region", 5, "string"),
    ]
    for row, column, value, kind in cases:
        with pytest.raises(InvalidPartitionValue) as raised:
            validate_partition_values([row], ["date", "hour", "region"], schema)
        message = str(raised.value)
        assert "\n" not in message
        assert repr(column) in message and repr(value) in message and kind in message
        assert (raised.value.column, raised.value.value, raised.value.type) == (column, value, kind)


def test_valid_values_are_converted_to_their_column_type():
    schema = StructType(
        [
            StructField("d", DateType()),
            StructField("h", IntegerType()),
            StructField("b", BooleanType()),
            StructField("n", DecimalType(5, 2)),
            StructField("t", TimestampType()),
            StructField("big", LongType()),
        ]
    )
    columns = ["d", "h", "b", "n", "t", "big"]
    typed = validate_partition_values(
        [
            ("2024-01-02", "03", "true", "1.5", "2024-01-02 03:00:00", 2**40),
            (
                date(2024, 1, 2),
                3,
                True,
                Decimal("1.50"),
                "2024-01-02T03:00:00+00:00",
                "1099511627776",
            ),
            (None, None, None, None, None, None),
        ],
        columns,
        schema,
    )
    assert len(typed) == 2  # the first two are the same partition once typed
    assert typed[0][:4] == (date(2024, 1, 2), 3, True, Decimal("1.5"))
    assert typed[1] == (None,) * 6
    with pytest.raises(InvalidPartitionValue, match="decimal places"):
        validate_partition_values([("2024-01-02", 1, True, "1.234", None, 1)], columns, schema)
    with pytest.raises(MissingPartitionColumn, match="'nope'"):
        validate_partition_values([("x",)], ["nope"], schema)


# --------------------------------------------------------------------------- affected partitions


def _frame(spark, rows, schema="p1 string, p2 string, v int"):
    return spark.createDataFrame(rows, schema)


@pytest.mark.spark
def test_affected_partitions_unions_both_sides_including_partitions_only_one_side_has(spark):
    left = _frame(spark, [("a", "1", 1), ("a", "1", 2), ("b", "2", 3)])
    right = _frame(spark, [("c", "9", 4), ("a", "1", 5), (None, "1", 6)])
    assert affected_partitions(left, right, columns=["p1", "p2"]) == [
        ("a", "1"),
        ("b", "2"),
        ("c", "9"),
        (None, "1"),
    ]
    assert affected_partitions(columns=["p1"]) == []


@pytest.mark.spark
def test_affected_partitions_checks_columns_and_types_per_side(spark):
    left = _frame(spark, [("a", "1", 1)])
    right = _frame(spark, [("a", 1, 1)], "p1 string, P2 int, v int")
    with pytest.raises(MissingPartitionColumn) as raised:
        affected_partitions(left, right, columns=["p1", "p2"], names=["left", "right"])
    assert raised.value.side == "right" and raised.value.column == "p2"
    assert "right: partition column 'p2' is missing (did you mean 'P2'" in str(raised.value)
    with pytest.raises(MissingPartitionColumn, match=r"^frame 1: partition column 'p2'"):
        affected_partitions(left, right, columns=["p1", "p2"])
    typed = _frame(spark, [("a", 1, 1)], "p1 string, p2 int, v int")
    with pytest.raises(PartitionTypeMismatch, match=r"'p2'.*left: string, right: int"):
        affected_partitions(left, typed, columns=["p1", "p2"], names=["left", "right"])


def _jobs(spark, group, action):
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        result = action()
    finally:
        sc._jsc.clearJobGroup()
    return len(sc.statusTracker().getJobIdsForGroup(group)), result


def _hourly(spark, days, hours=24):
    return (
        spark.range(days * hours, numPartitions=2)
        .select(
            F.format_string("2024-%05d", (F.col("id") / hours).cast("int")).alias("partition1"),
            F.format_string("%02d", F.col("id") % hours).alias("partition2"),
            F.col("id").alias("v"),
        )
        .coalesce(1)
    )


@pytest.mark.spark
def test_jobs_do_not_grow_with_partition_count_unlike_a_collect_per_value_loop(spark):
    columns = ["partition1", "partition2"]
    ours = {}
    for days in (1, 417):  # 24 and 10,008 partitions per side
        left, right = _hourly(spark, days), _hourly(spark, days).where("v % 2 = 0")
        jobs, found = _jobs(
            spark,
            f"ours-{days}",
            lambda a=left, b=right: affected_partitions(a, b, columns=columns),
        )
        assert len(found) == days * 24
        ours[days] = jobs
    assert ours[1] == ours[417] <= 2  # one action for both sides (AQE may split it in 2 jobs)

    seed = {}
    for days in (2, 6):
        left, right = _hourly(spark, days, hours=2), _hourly(spark, days, hours=2)
        seed[days], _ = _jobs(
            spark,
            f"seed-{days}",
            lambda a=left, b=right: collect_loop_predicates(a, b, as_written=True),
        )
    # 2 actions up front, then 2 more for every first-level partition
    assert seed[6] - seed[2] >= 2 * (6 - 2)
    assert seed[2] >= 2 + 2 * 2 > ours[417]


@pytest.mark.spark
def test_the_collect_loop_as_written_misses_partitions_only_the_second_table_has(spark):
    table1 = _frame(spark, [("d1", "01", 1)], "partition1 string, partition2 string, v int")
    table2 = _frame(spark, [("d2", "05", 1)], "partition1 string, partition2 string, v int")
    _, seed_predicate, _ = collect_loop_predicates(table1, table2, as_written=True)
    assert "d2" not in seed_predicate  # table2's new partition is never reloaded
    ours = affected_partitions(table1, table2, columns=["partition1", "partition2"])
    assert ours == [("d1", "01"), ("d2", "05")]


# --------------------------------------------------------------------------- pruning on files


@pytest.fixture(scope="module")
def dataset(spark, tmp_path_factory):
    """date (inferred DateType) / hour (inferred int, one null) partitions, 2 files each."""
    root = tmp_path_factory.mktemp("predicates") / "table"
    rows = [(i, f"2024-01-0{1 + i % 3}", None if i % 4 == 3 else f"{i % 2:02d}") for i in range(24)]
    (
        spark.createDataFrame(rows, "v int, date string, hour string")
        .repartition(2)
        .write.partitionBy("date", "hour")
        .parquet(str(root))
    )
    return str(root)


def _read(spark, path):
    df = spark.read.parquet(path)
    assert dict(df.dtypes)["date"] == "date" and dict(df.dtypes)["hour"] == "int"
    return df


def _partition_dirs(files):
    return {f.rsplit("/", 1)[0].split("/table/", 1)[1] for f in files}


@pytest.mark.spark
@pytest.mark.parametrize("decoys", [0, 10_000], ids=["literal", "ten-thousand-semi-join"])
def test_filter_partitions_prunes_files_in_both_paths(spark, dataset, decoys):
    df = _read(spark, dataset)
    wanted = [("2024-01-01", "00"), ("2024-01-03", None)]
    # decoys: partitions that do not exist, pushing the list over the literal limit
    partitions = wanted + [("2030-01-01", str(i)) for i in range(decoys)]
    filtered = filter_partitions(df, partitions, ["date", "hour"])
    rows = filtered.collect()

    expected = {
        r.v
        for r in df.collect()
        if (str(r.date), r.hour) in {("2024-01-01", 0), ("2024-01-03", None)}
    }
    assert {r.v for r in rows} == expected and expected
    (scan,) = scanned_files(filtered)
    assert scan.partition_filters
    plan = filtered._jdf.queryExecution().executedPlan().toString()
    if decoys:
        assert "dynamicpruningexpression" in plan
        assert any("dynamicpruning" in f for f in scan.partition_filters)
    else:
        assert "dynamicpruning" not in plan
        assert "2024-01-01" in " ".join(scan.partition_filters)
    assert scan.partitions == 2
    assert _partition_dirs(scan.files) == {
        "date=2024-01-01/hour=00",
        "date=2024-01-03/hour=__HIVE_DEFAULT_PARTITION__",
    }
    # df.inputFiles() ignores pruning on a path-based table: why scanned_files exists
    assert len(filtered.inputFiles()) == len(df.inputFiles()) > len(scan.files)


@pytest.mark.spark
def test_the_sql_predicate_prunes_the_same_way_spark_evaluates_push_down_predicates(spark, dataset):
    df = _read(spark, dataset)
    filtered = df.where(to_sql_predicate([("2024-01-02", "01")], ["date", "hour"]))
    values = sorted(r.v for r in filtered.collect())
    assert values == sorted(
        r.v for r in df.collect() if str(r.date) == "2024-01-02" and r.hour == 1
    )
    (scan,) = scanned_files(filtered)
    assert scan.partitions == 1 and _partition_dirs(scan.files) == {"date=2024-01-02/hour=01"}


@pytest.mark.spark
def test_filter_partitions_rejects_invalid_values_before_running_anything(spark, dataset):
    df = _read(spark, dataset)
    jobs, _ = _jobs(spark, "invalid", lambda: None)
    with pytest.raises(InvalidPartitionValue, match=r"'2024-13-45' for column 'date' of type date"):
        _jobs(
            spark, "invalid", lambda: filter_partitions(df, [("2024-13-45", 1)], ["date", "hour"])
        )
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup("invalid")) == jobs == 0
    assert filter_partitions(df, [], ["date", "hour"]).collect() == []


def test_normalise_partitions_sorts_nulls_last_and_dedupes():
    assert normalise_partitions([("b", None), ("a", "2"), ("b", "1"), ("a", "2")], ["x", "y"]) == [
        ("a", "2"),
        ("b", "1"),
        ("b", None),
    ]
