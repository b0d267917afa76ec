"""A dataset's partition values as the text in its paths: the tuples a side plans with,
and the read schemas that keep them strings (``hour=03`` stays ``"03"``).

Shared by every job that plans a ``Dataset`` (the join's sides, a custom script's
datasets): a value read from a path round-trips to the same path when written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType, _parse_datatype_string

from glue_incremental.partitions.paths import HIVE_NULL
from glue_incremental.partitions.predicates import quote_identifier
from glue_incremental.partitions.values import Partition


def partition_of(source: Any, columns: Sequence[str]) -> Partition:
    """A file's (or a values mapping's) partition as a tuple; the Hive null marker is None."""
    values = dict(source.partition) if hasattr(source, "partition") else dict(source)
    return tuple(None if values.get(c) == HIVE_NULL else values.get(c) for c in columns)


def as_text(values: Partition) -> Partition:
    return tuple(None if v is None else str(v) for v in values)


def declared_types(partition_types: Mapping[str, str], columns: Sequence[str]) -> StructType:
    """The partition columns typed as ``--partition_types`` says (strings otherwise)."""
    return StructType(
        [StructField(c, _parse_datatype_string(partition_types.get(c, "string"))) for c in columns]
    )


def string_partitions(schema: StructType, columns: Sequence[str]) -> StructType:
    """``schema`` with the partition columns as strings (appended if absent).

    A schema handed to the reader decides how directory values are parsed: a
    partition column typed ``void`` (inferred from files whose partition is
    all null) would turn every other partition's value into null.
    """
    fields = [
        StructField(f.name, StringType(), True) if f.name in columns else f for f in schema.fields
    ]
    names = {f.name for f in fields}
    fields += [StructField(c, StringType(), True) for c in columns if c not in names]
    return StructType(fields)


def partition_strings(df: DataFrame, columns: Sequence[str]) -> DataFrame:
    """Partition columns as strings, as in paths.

    Spark types a partition column whose values are all null (``__HIVE_DEFAULT_PARTITION__``)
    as ``void``; a declared schema may type it too. Other columns are untouched; a missing
    column is left for the validation to report.
    """
    types = {f.name: f.dataType for f in df.schema.fields}
    if all(isinstance(types.get(c, StringType()), StringType) for c in columns):
        return df
    return df.select(
        *[
            F.col(quote_identifier(name)).cast(StringType()).alias(name)
            if name in columns and not isinstance(types[name], StringType)
            else F.col(quote_identifier(name))
            for name in df.columns
        ]
    )
