"""The stored rows of a Parquet merge, as candidates: identified by key and partition, with
the delivery each was kept with (``<target>/_delivery/``), so a tie goes as a full refresh
sends it (``targets.latest.merge_latest``)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.io.jvm_calls import quoted, select_sql, type_sql


def match_columns(primary_key: Sequence[str], partition_by: Sequence[str]) -> list[str]:
    """What identifies a stored row: its key and partition (a key once per partition)."""
    return [*primary_key, *[name for name in partition_by if name not in primary_key]]


def with_stored_delivery(
    stored: DataFrame,
    deliveries: DataFrame | None,
    match: Sequence[str],
    delivery: Sequence[str],
    incoming_schema: StructType,
) -> DataFrame:
    """``stored`` with its kept ``delivery`` columns (null where none was kept)."""
    if deliveries is None:
        for name in delivery:
            stored = stored.withColumn(name, F.lit(None).cast(incoming_schema[name].dataType))
        return stored
    aliases = [f"__glue_incremental_match_{index}" for index in range(len(match))]
    pairs = list(zip(match, aliases, strict=True))
    kept = select_sql(
        deliveries,
        [
            *[f"{quoted(name)} AS {alias}" for name, alias in pairs],
            *[
                f"CAST({quoted(name)} AS {type_sql(incoming_schema[name].dataType)}) AS {quoted(name)}"
                for name in delivery
            ],
        ],
    )
    condition = " AND ".join(f"{quoted(name)} <=> {alias}" for name, alias in pairs)
    return stored.join(kept, F.expr(condition), "left").drop(*aliases)
