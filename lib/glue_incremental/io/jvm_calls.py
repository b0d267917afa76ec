"""Work in the JVM in a few py4j round trips: expressions as SQL text, a String[], a Map.

Every ``F.col``, ``F.max`` or ``.alias`` PySpark builds is a few py4j round trips (a name
looked up, a call, later a release), paid on every run whatever its size: a run's
aggregate and merge cost hundreds of them. The same expressions as SQL text cost three
round trips in all (``select_sql``); ``quoted`` makes any column name safe inside that
text. Iterating a Java collection through py4j is a round trip per element, ended by a
Java exception PySpark classifies (about 80 more): ``java_map`` and ``observed`` do not.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from py4j.java_gateway import JavaObject, JVMView
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from glue_incremental.io.hadoop_fs import jvm_class, session_jvm


def quoted(name: str) -> str:
    """``name`` as a SQL identifier: in backticks, its own backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def type_sql(data_type: DataType) -> str:
    """``data_type`` as SQL text for ``CAST(... AS <type>)``; nested field names quoted.

    Nested fields come out nullable: a cast to them is what Spark writes to files anyway
    (a file source writes every column nullable).
    """
    if isinstance(data_type, StructType):
        fields = ", ".join(f"{quoted(f.name)}: {type_sql(f.dataType)}" for f in data_type.fields)
        return f"STRUCT<{fields}>"
    if isinstance(data_type, ArrayType):
        return f"ARRAY<{type_sql(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"MAP<{type_sql(data_type.keyType)}, {type_sql(data_type.valueType)}>"
    return data_type.simpleString()


def java_strings(spark: SparkSession, values: Sequence[str]) -> JavaObject:
    """A Java ``String[]`` of ``values`` in two py4j round trips, whatever their number.

    py4j converts a Python list one round trip per element (8 s of a 20,000-file full
    reload's paths). NUL separates the values: no path or SQL text of ours contains it.
    """
    if any("\0" in value for value in values):
        raise ValueError("a value contains a NUL character")
    return _nul_separator(session_jvm(spark)).split("\0".join(values), -1)


@functools.lru_cache(maxsize=8)
def _nul_separator(jvm: JVMView) -> JavaObject:
    """A compiled ``Pattern`` of NUL, per JVM: compiling it is a round trip of its own."""
    return jvm_class(jvm, "java.util.regex.Pattern").compile("\\x00")


def select_sql(rows: DataFrame, expressions: Sequence[str]) -> DataFrame:
    """``rows.selectExpr(*expressions)`` in three py4j round trips, whatever their number.

    Aggregate expressions without a window make it one global aggregate, as
    ``rows.agg(...)`` does.
    """
    spark = rows.sparkSession
    return DataFrame(rows._jdf.selectExpr(java_strings(spark, expressions)), spark)


def observed(observation: Observation, name: str) -> Any:
    """One metric of ``observation`` once an action over its frame completed.

    ``Observation.get`` copies the JVM's map entry by entry and ends its iteration on a
    Java exception that PySpark classifies: about 80 round trips for one number.
    """
    java = observation._jo
    assert java is not None, "an Observation never attached with DataFrame.observe"
    return java.getAsJava().get(name)


def java_map(spark: SparkSession, java_object: JavaObject) -> dict[str, Any]:
    """A Java ``Map`` (string keys; strings, numbers, booleans) as a dict, in one round trip:
    written as JSON in the JVM by the Jackson that Spark ships."""
    return json.loads(_json_writer(session_jvm(spark)).writeValueAsString(java_object))


@functools.lru_cache(maxsize=8)
def _json_writer(jvm: JVMView) -> JavaObject:
    """Jackson's ``ObjectMapper``, made once per JVM."""
    return jvm_class(jvm, "com.fasterxml.jackson.databind.ObjectMapper")()
