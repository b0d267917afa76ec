"""The per-partition join: spec validation, side checks, output layout and semantics."""

from __future__ import annotations

from collections import Counter

import pytest
from glue_incremental.join import (
    JOIN_TYPES,
    JoinInputError,
    JoinSpec,
    JoinSpecError,
    join_partitions,
    validate_sides,
)
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

LEFT_SCHEMA = "dt string, id int, value string, l_only int"
RIGHT_SCHEMA = "dt string, id int, value string, r_only string"
OUT_SCHEMA = "dt string, id int, left_value string, l_only int, right_value string, r_only string"


# --------------------------------------------------------------------------- the spec


def test_spec_normalises_and_validates_at_construction():
    spec = JoinSpec(["id"], "INNER", ["dt"])
    assert spec == JoinSpec(("id",), "inner", ("dt",))
    assert JoinSpec("id, kind", "full", "dt,hour").join_keys == ("id", "kind")
    assert JoinSpec(("dt", "id"), "left", ("dt",)).equality_columns == ("dt", "id")
    assert JoinSpec(("id",), "left", ("dt", "hour")).equality_columns == ("dt", "hour", "id")
    assert JOIN_TYPES == ("inner", "left", "full")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((("id",), "outer", ("dt",)), "join_type must be one of inner, left, full, got 'outer'"),
        ((("id",), "right", ("dt",)), "got 'right'"),
        ((("id",), None, ("dt",)), "got None"),
        (((), "inner", ("dt",)), "join_keys must name at least one column"),
        ((("id",), "inner", ()), "partition_by must name at least one column"),
        ((("id", "id"), "inner", ("dt",)), "join_keys repeats a column"),
        ((("id",), "inner", ("dt", "")), "partition_by must be non-empty column names"),
        ((("id",), "inner", 5), "partition_by must be a sequence of column names"),
    ],
)
def test_invalid_specs_are_rejected_with_a_clear_message(args, message):
    with pytest.raises(JoinSpecError, match=message.replace("(", r"\(")):
        JoinSpec(*args)


# --------------------------------------------------------------------------- side checks


def _df(spark, rows, schema):
    return spark.createDataFrame(rows, schema)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("left_schema", "right_schema", "side", "column", "fragment"),
    [
        ("dt string, value int", RIGHT_SCHEMA, "left", "id", "join key is missing"),
        (LEFT_SCHEMA, "dt string, ID int", "right", "id", "found 'ID'"),
        ("id int, value int", RIGHT_SCHEMA, "left", "dt", "partition column is missing"),
        (LEFT_SCHEMA, "dt date, id int", "right", "dt", "partition column type date differs"),
        (LEFT_SCHEMA, "dt string, id bigint", "right", "id", "join key type bigint differs"),
        ("dt string, id int, x int, X int", RIGHT_SCHEMA, "left", "X", "appears twice"),
        (
            "dt string, id int, value int, left_value int",
            RIGHT_SCHEMA,
            "left",
            "left_value",
            "output column 'left_value' would collide with 'left_value' "
            "(from the left side's 'value')",
        ),
    ],
)
def test_bad_sides_name_the_side_and_column(
    spark, left_schema, right_schema, side, column, fragment
):
    spec = JoinSpec(("id",), "inner", ("dt",))
    left, right = _df(spark, [], left_schema), _df(spark, [], right_schema)
    with pytest.raises(JoinInputError) as raised:
        validate_sides(left, right, spec)
    assert (raised.value.side, raised.value.column) == (side, column)
    assert fragment in str(raised.value)
    assert str(raised.value).startswith(f"{side} side, column {column!r}: ")


@pytest.mark.spark
def test_validating_sides_and_building_the_join_launch_no_spark_job(spark):
    sc = spark.sparkContext
    sc.setJobGroup("join-validate", "join-validate")
    try:
        left = _df(spark, [("d", 1, "a", 1)], LEFT_SCHEMA)
        right = _df(spark, [("d", 1, "b", "x")], RIGHT_SCHEMA)
        layout = validate_sides(left, right, JoinSpec(("id",), "full", ("dt",)))
        join_partitions(left, right, JoinSpec(("id",), "full", ("dt",)))
    finally:
        sc._jsc.clearJobGroup()
    assert sc.statusTracker().getJobIdsForGroup("join-validate") == []
    assert layout.names == ["dt", "id", "left_value", "l_only", "right_value", "r_only"]


# --------------------------------------------------------------------------- semantics

LEFT_ROWS = [
    ("d1", 1, "l1", 10),
    ("d1", 2, "l2", 20),
    ("d2", 1, "l3", 30),  # id 1 exists on the right only in d1: never joins across partitions
    (None, 5, "l5", 50),  # the null partition is a partition
    ("d1", None, "lnull", 60),  # a null key matches nothing
]
RIGHT_ROWS = [
    ("d1", 1, "r1", "a"),
    ("d1", 1, "r1b", "b"),  # two matches: two rows
    ("d1", 3, "r3", "c"),
    (None, 5, "r5", "e"),
    ("d1", None, "rnull", "f"),
]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("join_type", "expected"),
    [
        (
            "inner",
            [
                ("d1", 1, "l1", 10, "r1", "a"),
                ("d1", 1, "l1", 10, "r1b", "b"),
                (None, 5, "l5", 50, "r5", "e"),
            ],
        ),
        (
            "left",
            [
                ("d1", 1, "l1", 10, "r1", "a"),
                ("d1", 1, "l1", 10, "r1b", "b"),
                ("d1", 2, "l2", 20, None, None),
                ("d2", 1, "l3", 30, None, None),
                (None, 5, "l5", 50, "r5", "e"),
                ("d1", None, "lnull", 60, None, None),
            ],
        ),
        (
            "full",
            [
                ("d1", 1, "l1", 10, "r1", "a"),
                ("d1", 1, "l1", 10, "r1b", "b"),
                ("d1", 2, "l2", 20, None, None),
                ("d2", 1, "l3", 30, None, None),
                ("d1", 3, None, None, "r3", "c"),  # right-only: partition and key coalesced
                (None, 5, "l5", 50, "r5", "e"),
                ("d1", None, "lnull", 60, None, None),
                ("d1", None, None, None, "rnull", "f"),
            ],
        ),
    ],
)
def test_join_types_within_partitions(spark, join_type, expected):
    left = _df(spark, LEFT_ROWS, LEFT_SCHEMA)
    right = _df(spark, RIGHT_ROWS, RIGHT_SCHEMA)
    joined = join_partitions(left, right, JoinSpec(("id",), join_type, ("dt",)))
    assert joined.columns == ["dt", "id", "left_value", "l_only", "right_value", "r_only"]
    assertDataFrameEqual(joined, _df(spark, expected, OUT_SCHEMA))


@pytest.mark.spark
def test_multi_level_partitions_keys_overlapping_partitions_and_column_order(spark):
    left = _df(
        spark,
        [("k1", "2024-01-01", 3, 1.5), ("k2", "2024-01-01", 4, 2.5)],
        "key string, date string, hour int, score double",
    )
    right = _df(
        spark,
        [(3, "2024-01-01", "k1", True), (4, "2024-01-01", "k1", False)],
        "hour int, date string, key string, flag boolean",
    )
    spec = JoinSpec(("date", "key"), "full", ("date", "hour"))
    joined = join_partitions(left, right, spec)
    expected = _df(
        spark,
        [
            ("2024-01-01", 3, "k1", 1.5, True),
            ("2024-01-01", 4, "k2", 2.5, None),
            ("2024-01-01", 4, "k1", None, False),
        ],
        "date string, hour int, key string, score double, flag boolean",
    )
    assert joined.columns == expected.columns
    assertDataFrameEqual(joined, expected)


@pytest.mark.spark
def test_both_sides_derived_from_one_dataframe_do_not_clash(spark):
    base = _df(spark, [("d1", 1, "x", 1), ("d1", 2, "y", 2)], LEFT_SCHEMA)
    left = base.where("id = 1")
    right = base.withColumnRenamed("l_only", "r_only").withColumn("r_only", F.lit("z"))
    joined = join_partitions(left, right, JoinSpec(("id",), "left", ("dt",)))
    assertDataFrameEqual(joined, _df(spark, [("d1", 1, "x", 1, "x", "z")], OUT_SCHEMA))


@pytest.mark.spark
def test_an_empty_side_gives_the_declared_layout(spark):
    left = _df(spark, [("d1", 1, "l1", 10)], LEFT_SCHEMA)
    right = _df(spark, [], RIGHT_SCHEMA)
    for join_type, count in (("inner", 0), ("left", 1), ("full", 1)):
        joined = join_partitions(left, right, JoinSpec(("id",), join_type, ("dt",)))
        assert joined.count() == count
        assertDataFrameEqual(joined.limit(0), _df(spark, [], OUT_SCHEMA))


# --------------------------------------------------------------------------- property


def _reference(left, right, join_type):
    """Pure Python per-partition join: partitions null-safe, keys SQL '='."""
    out = []
    matched_right = set()
    for lrow in left:
        matches = [
            (j, rrow)
            for j, rrow in enumerate(right)
            if rrow[0] == lrow[0] and lrow[1] is not None and rrow[1] == lrow[1]
        ]
        for j, rrow in matches:
            matched_right.add(j)
            out.append((lrow[0], lrow[1], lrow[2], rrow[2]))
        if not matches and join_type in ("left", "full"):
            out.append((lrow[0], lrow[1], lrow[2], None))
    if join_type == "full":
        out += [(r[0], r[1], None, r[2]) for j, r in enumerate(right) if j not in matched_right]
    return out


_rows = st.lists(
    st.tuples(
        st.sampled_from(["p1", "p2", None]), st.sampled_from([1, 2, None]), st.integers(0, 9)
    ),
    max_size=6,
)


@pytest.mark.spark
@given(left=_rows, right=_rows, join_type=st.sampled_from(JOIN_TYPES))
def test_property_join_matches_a_per_partition_reference(spark, left, right, join_type):
    left_df = _df(spark, left, "p string, k int, v int")
    right_df = _df(spark, right, "p string, k int, v int")
    joined = join_partitions(left_df, right_df, JoinSpec(("k",), join_type, ("p",)))
    assert joined.columns == ["p", "k", "left_v", "right_v"]
    assert Counter(tuple(r) for r in joined.collect()) == Counter(
        _reference(left, right, join_type)
    )
