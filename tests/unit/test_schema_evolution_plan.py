"""``schema.evolution.plan``: a source schema against the target's, on plain StructType data."""

from __future__ import annotations

import re

import pytest
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.schema.evolution import (
    RESCUED_COLUMN,
    Added,
    Missing,
    Rescued,
    Retyped,
    SchemaChangeError,
    Widened,
    is_widening,
    plan,
)
from pyspark.sql.types import (
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

SIMPLE: dict[str, DataType] = {
    "smallint": ShortType(),
    "int": IntegerType(),
    "bigint": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "date": DateType(),
    "timestamp": TimestampType(),
}


def ddl(text: str) -> StructType:
    """``"id int, v decimal(5,2)"`` as a StructType, without a SparkSession."""
    fields = []
    for column in re.split(r",\s*(?![^()]*\))", text):
        name, type_name = column.split()
        decimal = re.fullmatch(r"decimal\((\d+),(\d+)\)", type_name)
        data_type = DecimalType(*map(int, decimal.groups())) if decimal else SIMPLE[type_name]
        fields.append(StructField(name, data_type, True))
    return StructType(fields)


TARGET = ddl("id int, updated timestamp, amount float, part string")


def test_the_first_write_has_no_changes_and_takes_the_source_schema():
    source = ddl("id int, updated timestamp")
    result = plan(source, None, "fail")
    assert result.changes == ()
    assert result.resolved == source


def test_an_unchanged_source_plans_nothing():
    assert plan(TARGET, TARGET, "fail").changes == ()


def test_add_columns_appends_a_new_source_column_after_the_targets():
    source = ddl("id int, discount decimal(5,2), updated timestamp, amount float, part string")
    result = plan(source, TARGET, "add_columns")
    assert result.changes == (Added("discount", ddl("d decimal(5,2)")["d"].dataType),)
    assert result.resolved.fieldNames() == ["id", "updated", "amount", "part", "discount"]
    assert result.evolves_target


def test_a_column_gone_from_the_source_stays_in_the_target():
    result = plan(ddl("id int, updated timestamp, part string"), TARGET, "add_columns")
    assert result.changes == (Missing("amount", TARGET["amount"].dataType),)
    assert result.resolved == TARGET
    assert not result.evolves_target


@pytest.mark.parametrize("mode", ["add_columns", "rescue", "fail"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("int", "bigint"),
        ("float", "double"),
        ("decimal(10,2)", "decimal(12,2)"),
        ("decimal(10,2)", "decimal(12,4)"),
        ("date", "timestamp"),
        ("smallint", "int"),
        ("int", "double"),
    ],
)
def test_a_safe_widening_widens_the_target_in_every_mode(mode, old, new):
    result = plan(ddl(f"id bigint, v {new}"), ddl(f"id bigint, v {old}"), mode)
    assert result.changes == (
        Widened("v", ddl(f"v {old}")["v"].dataType, ddl(f"v {new}")["v"].dataType),
    )
    assert result.resolved == ddl(f"id bigint, v {new}")


@pytest.mark.parametrize("mode", ["add_columns", "fail"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("bigint", "int"),
        ("bigint", "double"),
        ("double", "float"),
        ("decimal(12,2)", "decimal(10,2)"),
        ("int", "string"),
        ("timestamp", "date"),
        ("decimal(10,4)", "decimal(10,2)"),
    ],
)
def test_a_narrowing_or_incompatible_type_is_one_line_naming_the_column_and_both_types(
    mode, old, new
):
    with pytest.raises(SchemaChangeError) as refused:
        plan(ddl(f"id bigint, v {new}"), ddl(f"id bigint, v {old}"), mode)
    error = refused.value
    assert isinstance(error, GlueIncrementalError)
    assert (error.column, error.source_type, error.target_type) == ("v", new, old)
    assert "\n" not in str(error)
    assert "'v'" in str(error) and old in str(error) and new in str(error)
    assert "nothing was written" in str(error)


def test_fail_names_every_new_and_missing_column_in_one_line():
    source = ddl("id int, updated timestamp, part string, discount int, note string")
    with pytest.raises(SchemaChangeError) as refused:
        plan(source, TARGET, "fail")
    message = str(refused.value)
    assert "\n" not in message
    assert "'discount' is new (int" in message and "'note' is new" in message
    assert "'amount' is gone from the source (float)" in message
    assert refused.value.column == "discount"


def test_rescue_keeps_new_columns_and_misfit_types_out_of_the_schema_in_rescued_data():
    source = ddl("id int, updated timestamp, amount string, part string, note string")
    result = plan(source, TARGET, "rescue")
    string = ddl("s string")["s"].dataType
    assert result.rescued == (
        Rescued("amount", string, TARGET["amount"].dataType),
        Rescued("note", string, None),
    )
    assert result.added == (Added(RESCUED_COLUMN, string),)
    assert result.resolved.fieldNames() == [*TARGET.fieldNames(), RESCUED_COLUMN]


def test_rescue_with_nothing_to_rescue_adds_no_column():
    assert plan(TARGET, TARGET, "rescue").changes == ()


def test_a_target_that_already_has_rescued_data_is_not_told_it_is_missing():
    target = ddl(f"id int, {RESCUED_COLUMN} string")
    assert plan(ddl("id int"), target, "rescue").changes == ()


def test_partition_columns_are_compared_by_name_only():
    # A Parquet target reads its partition columns back as strings.
    source = ddl("id int, updated timestamp, amount float, part int")
    assert plan(source, TARGET, "fail", partition_by=("part",)).changes == ()


def test_the_summary_phrases_name_each_change():
    source = ddl("id bigint, updated timestamp, part string, note string")
    phrases = plan(source, TARGET, "add_columns").describe()
    assert phrases == [
        "widened id int to bigint",
        "missing amount (kept, null for new rows)",
        "added note string",
    ]


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="evolve"):
        plan(TARGET, TARGET, "evolve")  # type: ignore[arg-type]


def test_widening_is_strict_and_one_way():
    int_type, long_type = ddl("a int")["a"].dataType, ddl("a bigint")["a"].dataType
    assert is_widening(int_type, long_type)
    assert not is_widening(long_type, int_type)
    assert not is_widening(int_type, int_type)
    assert is_widening(int_type, ddl("d decimal(10,0)")["d"].dataType)
    assert not is_widening(int_type, ddl("d decimal(9,0)")["d"].dataType)


@pytest.mark.parametrize("mode", ["add_columns", "rescue", "fail"])
def test_a_full_reload_retypes_a_column_stored_wrongly_and_keeps_the_columns(mode):
    target = ddl("id string, updated bigint, note string")
    source = ddl("id bigint, updated bigint, note string")
    result = plan(source, target, mode, reload=True)
    assert result.changes == (Retyped("id", StringType(), LongType()),)
    assert result.resolved == source
    assert result.evolves_target and result.reload
    assert result.describe() == ["retyped id string to bigint"]


def test_an_incremental_run_refusing_a_type_change_names_the_reset_that_would_retype_it():
    with pytest.raises(SchemaChangeError, match="watermarks reset"):
        plan(ddl("id bigint"), ddl("id string"), "add_columns")
