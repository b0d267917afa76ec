"""Expressions sent to the JVM as SQL text: any column name is quoted, any type written out."""

from __future__ import annotations

import pytest
from glue_incremental.io.jvm_calls import java_strings, quoted, type_sql
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)


def test_a_name_is_quoted_with_its_own_backticks_doubled():
    assert quoted("id") == "`id`"
    assert quoted("a`b c.d") == "`a``b c.d`"


def test_a_nested_type_is_written_with_every_field_name_quoted():
    nested = StructType(
        [
            StructField("the id", LongType()),
            StructField("tags`", ArrayType(StringType())),
            StructField("m", MapType(StringType(), DecimalType(12, 2))),
            StructField("at", TimestampNTZType()),
        ]
    )
    assert type_sql(nested) == (
        "STRUCT<`the id`: bigint, `tags```: ARRAY<string>, "
        "`m`: MAP<string, decimal(12,2)>, `at`: timestamp_ntz>"
    )


def test_a_value_holding_the_separator_is_refused_before_the_jvm_is_asked():
    with pytest.raises(ValueError, match="NUL"):
        java_strings(None, ["a", "b\0c"])  # type: ignore[arg-type]
