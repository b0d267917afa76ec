"""Expressions sent to the JVM as SQL text mean what the Column API meant."""

from __future__ import annotations

import pytest
from glue_incremental.io.jvm_calls import java_map, quoted, select_sql, type_sql
from pyspark.sql import types as T

from tests.harness.py4j_calls import Py4jCalls

pytestmark = pytest.mark.spark


def test_a_type_written_as_text_casts_to_that_type_with_odd_field_names(spark):
    wanted = T.StructType(
        [
            T.StructField("the id", T.LongType()),
            T.StructField("tags`", T.ArrayType(T.StringType())),
            T.StructField("m.n", T.MapType(T.StringType(), T.DecimalType(12, 2))),
        ]
    )
    frame = select_sql(spark.range(1), [f"CAST(NULL AS {type_sql(wanted)}) AS {quoted('x`y')}"])

    assert frame.schema["x`y"].dataType == wanted


def test_odd_column_names_select_as_themselves(spark):
    frame = spark.createDataFrame([(1, "a", 2)], ["the id", "p`art", "upd.at"])

    selected = select_sql(frame, [quoted(name) for name in reversed(frame.columns)])

    assert selected.columns == ["upd.at", "p`art", "the id"]
    assert [tuple(row) for row in selected.collect()] == [(2, "a", 1)]


def test_a_java_map_reads_as_a_dict_in_one_round_trip_once_the_writer_exists(spark):
    entries = {"added-records": "3", "glue-incremental.run-id": "jr_1", "odd, key=": "a=b, c"}
    java = spark.sparkContext._jvm.java.util.HashMap()
    for key, value in entries.items():
        java.put(key, value)
    java_map(spark, java)  # the JSON writer is made once per JVM

    with Py4jCalls() as calls:
        found = java_map(spark, java)

    assert found == entries
    assert calls.by_kind["call"] == 1, calls.figures()
