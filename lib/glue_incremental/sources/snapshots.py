"""The keys of a file source whose every delivery is a full snapshot (``--file_snapshots``).

A delivery is one file: each file holds every row the source had when it was written.
The latest snapshot is the source's newest file by the order the merge ranks deliveries
by (modification time, then file name; ``targets.latest.merge_latest``), among every visible file
under ``--source`` (not only the files this run reads). The reconcile reads only its key
columns: Parquet prunes every other column; JSON and CSV have no columns to skip, so the
file is read whole (with ``--source_schema`` nothing is inferred first). A source with no
file, or a newest file with no row, returns no keys: the safety stop refuses it
(``load.reconcile.KeyCounts.check``). Design: ``docs/deletes.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from glue_incremental.sources import bulk, listing
from glue_incremental.sources.listing import SourceFile


def latest(listed: Sequence[SourceFile]) -> SourceFile | None:
    """The newest delivery: the greatest (modification time, file name), the URI last."""
    if not listed:
        return None
    return max(listed, key=lambda found: (found.modified_ms, _name(found), found.uri))


def keys_of_latest(
    spark: SparkSession,
    root_uri: str,
    primary_key: Sequence[str],
    *,
    source_format: Literal["parquet", "json", "csv"],
    schema: StructType | None = None,
    partition_types: Mapping[str, str] | None = None,
    delivery: Mapping[str, str] | None = None,
) -> DataFrame:
    """The primary keys of the latest snapshot (an empty frame when there is none), with
    its ``delivery`` columns (name: the column it is read from, ``_metadata.file_name``):
    a gone key's delete is delivered with the snapshot that lacks the key."""
    listed, _ = listing.list_source_files(spark, root_uri, prune_directories=False)
    newest = latest(listed)
    rows = None
    if newest is not None:
        rows = bulk.read_listed_files(
            spark,
            [newest],
            root_uri=root_uri,
            source_format=source_format,
            schema=schema,
            partition_types=partition_types,
            columns=delivery,
        )
    if rows is None or not set(primary_key) <= set(rows.columns):
        return spark.createDataFrame([], _key_schema(primary_key, schema))
    stamp = [F.col(f"`{name}`") for name in (delivery or {})]
    return rows.select(*[F.col(f"`{key}`") for key in primary_key], *stamp)


def _key_schema(primary_key: Sequence[str], schema: StructType | None) -> StructType:
    """Key columns of no rows: their declared types, or text (an empty frame joins as well)."""
    declared = {field.name: field.dataType for field in (schema.fields if schema else [])}
    return StructType([StructField(key, declared.get(key, StringType())) for key in primary_key])


def _name(found: SourceFile) -> str:
    return found.uri.rstrip("/").rsplit("/", 1)[-1]
