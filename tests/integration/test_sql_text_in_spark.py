"""Expressions sent to the JVM as SQL text mean what the Column API meant."""

from __future__ import annotations

import pytest
from glue_incremental.io.sql_text import quoted, select_sql, type_sql
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

pytestmark = pytest.mark.spark


def test_a_type_written_as_text_casts_to_that_type_with_odd_field_names(spark):
    wanted = StructType(
        [
            StructField("the id", LongType()),
            StructField("tags`", ArrayType(StringType())),
            StructField("m.n", MapType(StringType(), DecimalType(12, 2))),
        ]
    )
    frame = select_sql(spark.range(1), [f"CAST(NULL AS {type_sql(wanted)}) AS {quoted('x`y')}"])

    assert frame.schema["x`y"].dataType == wanted


def test_odd_column_names_select_as_themselves(spark):
    frame = spark.createDataFrame([(1, "a", 2)], ["the id", "p`art", "upd.at"])

    selected = select_sql(frame, [quoted(name) for name in reversed(frame.columns)])

    assert selected.columns == ["upd.at", "p`art", "the id"]
    assert [tuple(row) for row in selected.collect()] == [(2, "a", 1)]
