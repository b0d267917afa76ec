"""An Iceberg target's tombstones (``tombstones``), in a side table readers never query.

``<database>.<table>__tombstone`` holds, for each key removed by a delete and not back,
its last version: the primary key, the watermark and the delivery columns (a reconcile's
also the removed row, ``deletes.tombstones.REMOVED_ROW``; a side table written before it gains the
column on its next change). A merge with
deletes on reads the tombstones of its keys as stored deletes, then updates the table
before the run's snapshot, as ``iceberg_deliveries`` does: a crash in between leaves the
tombstones of a run that did not commit, which are the very ones its rerun writes again
(the state did not move: it reads the same versions). A full reload rewrites them all.
Design: ``docs/deletes.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.deletes import tombstones
from glue_incremental.targets.iceberg import tables as iceberg_tables

SUFFIX = "__tombstone"


def side_table(target: iceberg_tables.IcebergTarget) -> iceberg_tables.IcebergTarget:
    """``<database>.<table>__tombstone`` in the target's catalog."""
    return iceberg_tables.IcebergTarget(f"{target.table}{SUFFIX}", target.catalog)


def read(spark: SparkSession, target: iceberg_tables.IcebergTarget) -> DataFrame | None:
    """The target's tombstones, or None when it keeps none."""
    side = side_table(target)
    return spark.table(side.name) if iceberg_tables.table_exists(spark, side) else None


def record(
    spark: SparkSession,
    target: iceberg_tables.IcebergTarget,
    old: DataFrame | None,
    merged: DataFrame,
    kept: Sequence[str],
    primary_key: Sequence[str],
    deleted: str | None,
    *,
    replace_all: bool,
    delivery: Sequence[str] = (),
) -> None:
    """Keep the tombstones ``merged`` (one winner per key, with ``deleted``) leaves: a full
    reload replaces them all (none without deletes); an upsert adds, moves or removes the
    tombstones of the keys it decided, and writes nothing when none changes."""
    side = side_table(target)
    if deleted is None:
        if replace_all and old is not None:
            spark.sql(f"DELETE FROM {side.quoted}")
        return
    entries = tombstones.entries(merged, kept, deleted, delivery)
    if replace_all:
        _create_or_extend(spark, side, entries.drop(deleted).schema)
        entries.where(F.col(deleted)).drop(deleted).writeTo(side.name).overwrite(F.lit(True))
        return
    if not tombstones.changed(old, merged, primary_key, deleted):
        return
    _create_or_extend(spark, side, entries.drop(deleted).schema)
    view = f"glue_incremental_tombstones_{os.getpid()}"
    entries.createOrReplaceTempView(view)
    try:
        stored = [*kept, tombstones.REMOVED_ROW]
        spark.sql(_merge_statement(side.quoted, view, stored, primary_key, deleted))
    finally:
        spark.catalog.dropTempView(view)


def _create_or_extend(
    spark: SparkSession, side: iceberg_tables.IcebergTarget, schema: StructType
) -> None:
    """The side table, created, or given ``REMOVED_ROW`` if an earlier version made it."""
    iceberg_tables.create_table(spark, side, schema, ())
    if tombstones.REMOVED_ROW not in spark.table(side.name).columns:
        spark.sql(f"ALTER TABLE {side.quoted} ADD COLUMN `{tombstones.REMOVED_ROW}` string")


def _merge_statement(
    table: str, view: str, kept: Sequence[str], primary_key: Sequence[str], deleted: str
) -> str:
    on = " AND ".join(f"t.`{key}` <=> s.`{key}`" for key in primary_key)
    names = ", ".join(f"`{name}`" for name in kept)
    return (
        f"MERGE INTO {table} t USING {view} s ON {on} "
        f"WHEN MATCHED AND s.`{deleted}` THEN UPDATE SET "
        + ", ".join(f"t.`{name}` = s.`{name}`" for name in kept)
        + f" WHEN MATCHED THEN DELETE WHEN NOT MATCHED AND s.`{deleted}` THEN INSERT ({names}) "
        + "VALUES ("
        + ", ".join(f"s.`{name}`" for name in kept)
        + ")"
    )
