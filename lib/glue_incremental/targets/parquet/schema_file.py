"""A Parquet target's schema, recorded beside its data in ``<target>/_schema.json``.

Files carry the columns of the run that wrote them (schema evolution adds a column without
rewriting), so the target's schema is the union over its files. Reading every footer would
make each run's cost grow with the target; instead every publish records the schema its
files were written with (the resolved schema, a superset of every older file's), hidden
from readers by its leading ``_``. It is written after the publish: a crash in between
leaves the previous schema, and the next run finds the same change again and applies it
again, which is idempotent. A target without the file falls back to one partition's files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from glue_incremental.io.hadoop_fs import HadoopFileSystem
from glue_incremental.targets.parquet import publish

SCHEMA_FILE = publish.SCHEMA_FILE


def _location(target_uri: str) -> str:
    return f"{target_uri.rstrip('/')}/{SCHEMA_FILE}"


def recorded(spark: SparkSession, target_uri: str) -> StructType | None:
    """The schema the last publish recorded, or None (a target written before it existed)."""
    data = HadoopFileSystem(spark, target_uri).read_bytes(_location(target_uri))
    return None if data is None else StructType.fromJson(json.loads(data))


def as_written(
    schema: StructType, partition_by: Sequence[str], hidden: Sequence[str] = ()
) -> StructType:
    """``schema`` of rows handed to a publish, as a read of the target sees it: data columns,
    then the partition columns as strings, without the merge-only ``hidden`` columns."""
    fields = [
        StructField(field.name, field.dataType, True)
        for field in schema.fields
        if field.name not in partition_by and field.name not in hidden
    ]
    return StructType([*fields, *(StructField(name, StringType(), True) for name in partition_by)])


def record(spark: SparkSession, target_uri: str, schema: StructType) -> None:
    """Record ``schema`` (from ``as_written``) as the target's, after a publish."""
    text = json.dumps(schema.jsonValue(), sort_keys=True)
    HadoopFileSystem(spark, target_uri).write_bytes(_location(target_uri), text.encode())
