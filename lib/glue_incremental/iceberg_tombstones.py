"""An Iceberg target's tombstones (``tombstones``), in a side table readers never query.

``<database>.<table>__tombstone`` holds, for each key removed by a delete and not back,
its last version: the primary key, the watermark and the delivery columns. A merge with
deletes on reads the tombstones of its keys as stored deletes, then updates the table
before the run's snapshot, as ``iceberg_deliveries`` does: a crash in between leaves the
tombstones of a run that did not commit, which are the very ones its rerun writes again
(the state did not move: it reads the same versions). A full reload rewrites them all.
Design: ``docs/deletes.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from glue_incremental import iceberg, tombstones

SUFFIX = "__tombstone"


def side_table(target: iceberg.IcebergTarget) -> iceberg.IcebergTarget:
    """``<database>.<table>__tombstone`` in the target's catalog."""
    return iceberg.IcebergTarget(f"{target.table}{SUFFIX}", target.catalog)


def read(spark: Any, target: iceberg.IcebergTarget) -> DataFrame | None:
    """The target's tombstones, or None when it keeps none."""
    side = side_table(target)
    return spark.table(side.name) if iceberg.table_exists(spark, side) else None


def record(
    spark: Any,
    target: iceberg.IcebergTarget,
    old: DataFrame | None,
    merged: DataFrame,
    kept: Sequence[str],
    primary_key: Sequence[str],
    deleted: str | None,
    *,
    replace_all: bool,
) -> None:
    """Keep the tombstones ``merged`` (one winner per key, with ``deleted``) leaves: a full
    reload replaces them all (none without deletes); an upsert adds, moves or removes the
    tombstones of the keys it decided, and writes nothing when none changes."""
    side = side_table(target)
    if deleted is None:
        if replace_all and old is not None:
            spark.sql(f"DELETE FROM {side.quoted}")
        return
    entries = merged.select(*[F.col(f"`{name}`") for name in [*kept, deleted]])
    if replace_all:
        iceberg.create_table(spark, side, entries.drop(deleted).schema, ())
        entries.where(F.col(deleted)).drop(deleted).writeTo(side.name).overwrite(F.lit(True))
        return
    if not tombstones.changed(old, merged, primary_key, deleted):
        return
    iceberg.create_table(spark, side, entries.drop(deleted).schema, ())
    view = f"glue_incremental_tombstones_{os.getpid()}"
    entries.createOrReplaceTempView(view)
    try:
        spark.sql(_merge_statement(side.quoted, view, kept, primary_key, deleted))
    finally:
        spark.catalog.dropTempView(view)


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
