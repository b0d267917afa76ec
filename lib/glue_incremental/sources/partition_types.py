"""The types of a file source's ``key=value`` partition columns: fixed once, never per batch.

Spark infers a partition column's type from the directories of the files one
read sees: a batch of ``store=007/`` alone is the integer 7, a later batch of
``store=00A/`` strings. Here a type is fixed the first time its column is read
(Spark's inference over that run's files; a column declared in
``--source_schema`` is read as declared and never comes here) and kept in the
load's state (``partition_types``). Later runs read the directory values as
text and cast them to the kept types; a value that does not fit its kept type
stops the run in one line before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.partitions.paths import HIVE_NULL
from glue_incremental.sources.listing import SourceFile

INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"

__all__ = ["PartitionValueMisfit", "as_text", "cast_to_kept", "kept_types", "names_of"]


class PartitionValueMisfit(GlueIncrementalError, ValueError):
    """A directory value that does not fit its column's kept type."""

    def __init__(self, column: str, value: str, kind: str) -> None:
        self.column = column
        super().__init__(
            f"source partition {column}={value!r} does not fit the type {kind} its column has "
            f"kept since the first run read it; nothing was written (declare {column} STRING "
            "in --source_schema and reload to keep values as written)"
        )


def names_of(files: Sequence[SourceFile]) -> list[str]:
    """The partition columns of the listed files, in directory order."""
    return list(dict.fromkeys(name for source in files for name, _ in source.partition))


@contextmanager
def as_text(spark: SparkSession) -> Iterator[None]:
    """A block where ``spark.read`` takes partition values as the text in the path."""
    previous = spark.conf.get(INFERENCE, None)
    spark.conf.set(INFERENCE, "false")
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(INFERENCE)
        else:
            spark.conf.set(INFERENCE, previous)


def cast_to_kept(
    spark: SparkSession, frame: DataFrame, files: Sequence[SourceFile], kept: Mapping[str, str]
) -> DataFrame:
    """``frame`` (read ``as_text``) with each kept partition column cast to its type.

    Raises ``PartitionValueMisfit`` for the first value (from the listing) that
    does not fit: checked on the distinct values in one small Spark job.
    """
    columns = [name for name in names_of(files) if kept.get(name, "string") != "string"]
    for name in columns:
        values = sorted(
            {value for source in files for key, value in source.partition if key == name}
            - {HIVE_NULL, ""}
        )
        if not values:
            continue
        checked = spark.createDataFrame([(value,) for value in values], "v string")
        misfit = checked.where(F.col("v").cast(kept[name]).isNull()).limit(1).collect()
        if misfit:
            raise PartitionValueMisfit(name, misfit[0][0], kept[name])
    return frame.select(
        *[
            F.col(f"`{name}`").cast(kept[name]).alias(name)
            if name in columns
            else F.col(f"`{name}`")
            for name in frame.columns
        ]
    )


def kept_types(
    frame: DataFrame | None, files: Sequence[SourceFile], kept: Mapping[str, str] | None
) -> dict[str, str]:
    """The types to keep after a read: those kept already, then each new column's as read."""
    types = dict(kept or {})
    if frame is None:
        return types
    fields = {field.name: field.dataType.simpleString() for field in frame.schema.fields}
    for name in names_of(files):
        if name not in types and name in fields:
            types[name] = fields[name]
    return types
