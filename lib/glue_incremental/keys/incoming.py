"""One pass over a merge's incoming rows for what ``detect`` needs: their partitions and keys.

An upsert that can see keys move partition needs the partitions the incoming rows fall in
and, for the key index lookup (``keys.index.partitions_of``), the incoming keys as a list.
Both come from one distinct of (key, partition values), collected when it holds at most
``keys.index.MAX_LISTED_KEYS`` pairs: one shuffle instead of two. More pairs, or a null
key, leave what is missing to the caller (computed as before, never collected twice); a
composite or non-listable key is not surveyed. A persisted batch counted at most that many
rows (so at most that many pairs) is surveyed by one global aggregate, one Spark job, or
by none when the batch's first aggregate collected them (``engine.cursors.batch_stats``).
Each batch of a bounded backfill pays this once (``docs/bounded-batches.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from glue_incremental.io.spark_listing import session_conf
from glue_incremental.keys import index as key_index
from glue_incremental.partitions.values import PartitionValues

_ADAPTIVE_EXECUTION = "spark.sql.adaptive.enabled"


@dataclass(frozen=True)
class IncomingKeys:
    """The incoming rows' distinct partition values (as strings) and keys.

    ``partitions`` None: more (key, partition) pairs than ``MAX_LISTED_KEYS``, computed
    apart. ``keys`` None: too many keys, or a null key, to list (the index is joined).
    """

    partitions: tuple[PartitionValues, ...] | None
    keys: tuple[key_index.KeyValue, ...] | None


def survey(
    incoming: DataFrame,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    *,
    counted: int | None = None,
    persisted: bool = False,
    collected: Sequence[Row] | None = None,
) -> IncomingKeys | None:
    """The partitions and keys of ``incoming`` in one job, or None when the key cannot be
    listed at all (composite, or of a type a literal filter cannot match exactly).

    ``counted``: the rows of ``incoming`` (``keys.ranges.KeyRange.rows``), when known.
    ``persisted``: ``incoming`` reads a persisted batch (its plan is fixed: nothing for
    adaptive execution to size), so a global aggregate of it is one Spark job.
    ``collected``: the pairs the batch's own aggregate collected (``keys.ranges.KeyRange``,
    every pair of ``incoming``): no job at all.
    """
    if len(primary_key) != 1 or not partition_by:
        return None
    key = primary_key[0]
    if not isinstance(incoming.schema[key].dataType, key_index.LISTABLE_TYPES):
        return None
    partitions = [name for name in partition_by if name != key]
    columns = [
        F.col(f"`{key}`").alias("key"),
        *[F.col(f"`{n}`").cast(StringType()).alias(f"p{i}") for i, n in enumerate(partitions)],
    ]
    if collected is not None:
        pairs = list(collected)
    elif persisted and counted is not None and counted <= key_index.MAX_LISTED_KEYS:
        # As many pairs as rows at most: the whole set fits the list, so one aggregate
        # collects it. Adaptive execution would run its shuffle as a job of its own.
        with session_conf(incoming.sparkSession, {_ADAPTIVE_EXECUTION: "false"}):
            found_pairs = incoming.agg(F.collect_set(F.struct(*columns)).alias("pairs")).first()
        assert found_pairs is not None  # a global aggregate always has one row
        pairs = list(found_pairs["pairs"])
    else:
        limited = incoming.select(*columns).distinct().limit(key_index.MAX_LISTED_KEYS + 1)
        pairs = limited.collect()
    if len(pairs) > key_index.MAX_LISTED_KEYS:
        return IncomingKeys(partitions=None, keys=None)
    found = set()
    for pair in pairs:
        by_name = {key: None if pair["key"] is None else str(pair["key"])}
        by_name |= {name: pair[f"p{i}"] for i, name in enumerate(partitions)}
        found.add(tuple(by_name[name] for name in partition_by))
    keys = {pair["key"] for pair in pairs}
    return IncomingKeys(
        partitions=tuple(sorted(found, key=_sort_key)),
        keys=None if None in keys else tuple(sorted(keys)),
    )


def few_enough_to_broadcast(surveyed: IncomingKeys | None, counted: int | None) -> bool:
    """Whether the incoming keys (a reconcile's: the rows read and the gone keys) are known to
    be at most ``MAX_LISTED_KEYS``: listed by ``survey``, or that many rows counted."""
    listed = surveyed is not None and surveyed.keys is not None
    return listed or (counted is not None and counted <= key_index.MAX_LISTED_KEYS)


def _sort_key(values: PartitionValues) -> tuple:
    return tuple((value is None, value or "") for value in values)
