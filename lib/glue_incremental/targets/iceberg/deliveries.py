"""Each stored row's delivery for an Iceberg target, in a side table readers never query.

The tie rule (watermark, delivery time, file name) needs the delivery of every stored row;
the Parquet target keeps it under ``_delivery/``, an Iceberg table in
``<database>.<table>__delivery``: the primary key, a hash of the row's values and the
delivery columns. An entry counts only for a stored row with its key and the same values,
so entries of a run whose snapshot never committed, or of a version since replaced or
rolled back (a rewind), match nothing. Entries are written before the run's snapshot (a
crash in between leaves entries that match nothing); a full reload rewrites them all. A
stored row without an entry (written before deliveries were kept, or by a JDBC source)
ranks below any row with a delivery on an equal watermark. Design: ``docs/iceberg.md``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.targets.iceberg import tables as iceberg_tables

SUFFIX = "__delivery"
ROW_HASH = "__glue_incremental_row_hash"


def side_table(target: iceberg_tables.IcebergTarget) -> iceberg_tables.IcebergTarget:
    """``<database>.<table>__delivery`` in the target's catalog."""
    return iceberg_tables.IcebergTarget(f"{target.table}{SUFFIX}", target.catalog)


def row_hash(columns: Sequence[str]) -> Column:
    """A hash of the row's values, the same for a row as merged and as read back from the table
    (JSON text, columns by name: an int read back as a long hashes alike)."""
    ordered = sorted(columns)
    return F.xxhash64(F.to_json(F.struct(*[F.col(f"`{name}`") for name in ordered])))


def with_kept_delivery(
    spark: SparkSession,
    target: iceberg_tables.IcebergTarget,
    stored: DataFrame,
    primary_key: Sequence[str],
    delivery: Sequence[str],
    types: StructType,
    key_filter: str | None = None,
) -> DataFrame:
    """``stored`` with its kept ``delivery`` columns (null where no entry matches its values);
    ``types`` is the incoming schema the delivery columns take their types from.
    ``key_filter``: SQL on the key every stored row meets (``keys.ranges.within``), so only
    the entries of those keys are read."""
    side = side_table(target)
    # Pinned: the run appends its own entries before its MERGE reads the merge again.
    side_rows = None
    if delivery and iceberg_tables.table_exists(spark, side):
        side_rows = iceberg_tables.read_pinned(spark, side)
    if side_rows is None:
        for name in delivery:
            stored = stored.withColumn(name, F.lit(None).cast(types[name].dataType))
        return stored
    if key_filter is not None:
        side_rows = side_rows.where(key_filter)
    aliases = [f"__glue_incremental_key_{index}" for index in range(len(primary_key))]
    latest = F.max(F.struct(*[F.col(f"`{name}`") for name in delivery])).alias("kept")
    # One entry per key and values; should two exist, the later delivery counts.
    entries = side_rows.groupBy(
        *[F.col(f"`{key}`").alias(alias) for key, alias in zip(primary_key, aliases, strict=True)],
        F.col(ROW_HASH),
    ).agg(latest)
    hashed = stored.withColumn(ROW_HASH, row_hash(stored.columns))
    condition = functools.reduce(
        operator.and_,
        [
            F.col(f"`{key}`").eqNullSafe(entries[alias])
            for key, alias in zip(primary_key, aliases, strict=True)
        ],
    ) & (hashed[ROW_HASH] == entries[ROW_HASH])
    joined = hashed.join(entries, condition, "left")
    return joined.select(
        *[hashed[f"`{name}`"] for name in stored.columns],
        *[F.col(f"kept.`{name}`").cast(types[name].dataType).alias(name) for name in delivery],
    )


def record(
    spark: SparkSession,
    target: iceberg_tables.IcebergTarget,
    merged: DataFrame,
    primary_key: Sequence[str],
    delivery: Sequence[str],
    *,
    replace_all: bool,
) -> None:
    """Keep the delivery of each row of ``merged`` (its ``delivery`` columns), before the
    run's snapshot: a full reload replaces every entry, an upsert appends its entries (a
    later delivery of the same values wins where they are read; an unknown one is not
    recorded)."""
    if not delivery:
        return
    data_columns = [name for name in merged.columns if name not in delivery]
    entries = merged.where(F.col(f"`{delivery[0]}`").isNotNull()).select(
        *[F.col(f"`{key}`") for key in primary_key],
        row_hash(data_columns).alias(ROW_HASH),
        *[F.col(f"`{name}`") for name in delivery],
    )
    side = side_table(target)
    iceberg_tables.create_table(spark, side, entries.schema, ())
    if replace_all:
        entries.writeTo(side.name).overwrite(F.lit(True))
        return
    # Appended, not merged in: a reader takes each key and values' later delivery
    # (``with_kept_delivery``), as a merge moving the entry forward would leave it, and an
    # append is one write where a MERGE also reads and rewrites the side table's files.
    entries.writeTo(side.name).append()
