"""A key -> partition index of a Parquet target, so ``detect`` never scans the whole target.

When a key's partition can change, an upsert must find the partitions holding
its older versions. Instead of reading the target's key columns (linear in
history), it reads a few small key-sorted Parquet segments under
``<target>/_index/generation=<n>/`` (hidden from readers: the name starts with
``_``); the entry of the greatest generation says where a key lives.

Segments are staged with the run's data and listed in the same write-ahead
intent, so they go live, roll forward or roll back with it. A publish that
does not maintain the index deletes it in its intent, and the next ``detect``
run rebuilds it from the target (as a first run does). Past ``MAX_SEGMENTS``
segments are compacted LSM-style in the publish that finds them.
Design notes: ``docs/writer-protocol.md`` (the key index).
"""

from __future__ import annotations

import functools
import hashlib
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)
from pyspark.sql.window import Window

from glue_incremental.io.jvm_calls import quoted, select_sql, type_sql
from glue_incremental.io.spark_listing import few_listing_tasks
from glue_incremental.partitions.paths import literal
from glue_incremental.partitions.values import PartitionValues

INDEX_DIR = "_index"
GENERATION = "generation"
MAX_SEGMENTS = 12
# Up to this many keys per run, the lookup is a literal filter on the index (see partitions_of).
MAX_LISTED_KEYS = 10_000
# Key types whose collected values compare exactly as literals (no time-zone or precision shift).
LISTABLE_TYPES = (ByteType, ShortType, IntegerType, LongType, StringType)
# A key value of those types, as Spark collects it.
KeyValue: TypeAlias = int | str


@dataclass(frozen=True)
class Layout:
    """What an index is built for: the primary key (names and types) and the partition columns.

    Its digest is part of every segment's directory name, so an index built for
    another layout (a changed key or partitioning) is recognised without reading
    it, and every read is given its schema (no footer inference).
    """

    primary_key: tuple[str, ...]
    key_types: tuple[DataType, ...]
    partition_by: tuple[str, ...]

    @classmethod
    def of(
        cls, schema: StructType, primary_key: Sequence[str], partition_by: Sequence[str]
    ) -> Layout:
        return cls(
            tuple(primary_key),
            tuple(schema[key].dataType for key in primary_key),
            tuple(partition_by),
        )

    @property
    def digest(self) -> str:
        text = "|".join(
            [
                f"{n}:{t.simpleString()}"
                for n, t in zip(self.primary_key, self.key_types, strict=True)
            ]
            + ["/", *self.partition_by]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def columns(self) -> list[str]:
        """Key columns, then the partition columns not in the key (a column appears once)."""
        return [*self.primary_key, *self._partitions_not_in_key()]

    def entry_schema(self) -> StructType:
        """A segment's rows: key columns with their types, partition values as strings."""
        return StructType(
            [StructField(n, t) for n, t in zip(self.primary_key, self.key_types, strict=True)]
            + [StructField(name, StringType()) for name in self._partitions_not_in_key()]
        )

    def _partitions_not_in_key(self) -> list[str]:
        # A key that includes a partition column (key (tenant, id), partitions (tenant, day)):
        # that column is the key's, already a string (partition values are cast before).
        return [name for name in self.partition_by if name not in self.primary_key]


@dataclass(frozen=True)
class Segment:
    """One live segment: its generation, layout digest, directory (relative to the target), bytes."""

    generation: int
    digest: str
    relative: str
    size: int


@dataclass
class IndexPlan:
    """What the next publish writes into the index, decided before the target is read.

    ``base`` (a rebuild) is the key columns of the whole target as it was before
    this publish, written as generation 1 (this publish's segment is 2);
    ``merge`` are live segments compacted into one; ``replace`` are segment
    directories the publish removes (merged ones, or every old one on a rebuild
    or a full reload).
    """

    layout: Layout
    generation: int
    base: DataFrame | None = None
    merge: tuple[Segment, ...] = ()
    replace: tuple[str, ...] = ()
    # A history target's: every (key, partition) entry is kept through compaction (a key's
    # versions live in several partitions), and ``extra`` entries (its side store's) join
    # the new segment.
    every_entry: bool = False
    extra: DataFrame | None = None

    @property
    def rebuilt(self) -> bool:
        return self.base is not None


def index_root(target_uri: str) -> str:
    return target_uri.rstrip("/") + "/" + INDEX_DIR


def segment_dir(generation: int, layout: Layout) -> str:
    """``_index/generation=0000000012-<layout digest>``, relative to the target."""
    return f"{INDEX_DIR}/{GENERATION}={generation:010d}-{layout.digest}"


def live_segments(fs, target_uri: str) -> list[Segment]:
    """The index's segments, oldest first ([] when there is no index)."""
    found = []
    prefix = f"{GENERATION}="
    for path in fs.list_dirs(index_root(target_uri)):
        name = path.rstrip("/").rsplit("/", 1)[1]
        generation, _, digest = name[len(prefix) :].partition("-")
        if not name.startswith(prefix) or not generation.isdigit():
            continue
        size = sum(size for _, size in fs.list_files(path))
        found.append(Segment(int(generation), digest, f"{INDEX_DIR}/{name}", size))
    return sorted(found, key=lambda segment: segment.generation)


def usable(segments: Sequence[Segment], layout: Layout) -> bool:
    """Whether the live segments form an index for ``layout`` (else it is rebuilt)."""
    return bool(segments) and all(segment.digest == layout.digest for segment in segments)


def read_segments(
    spark: SparkSession, target_uri: str, segments: Sequence[Segment], layout: Layout
) -> DataFrame:
    """Rows of ``segments`` with their ``generation`` (zero-padded text: orders as numbers)."""
    schema = StructType([*layout.entry_schema().fields, StructField(GENERATION, StringType())])
    paths = [target_uri.rstrip("/") + "/" + segment.relative for segment in segments]
    reader = spark.read.schema(schema).option("basePath", index_root(target_uri))
    return reader.parquet(*[literal(path) for path in paths])


def latest_per_key(entries: DataFrame, primary_key: Sequence[str]) -> DataFrame:
    """The entry of the greatest generation for each key (where the key lives now)."""
    rank = "__glue_incremental_index_rank"
    window = Window.partitionBy(*[_col(key) for key in primary_key]).orderBy(
        F.col(GENERATION).desc()
    )
    return entries.withColumn(rank, F.row_number().over(window)).where(F.col(rank) == 1).drop(rank)


def partitions_of(
    spark: SparkSession,
    target_uri: str,
    segments: Sequence[Segment],
    keys: DataFrame,
    layout: Layout,
    listed: Sequence[KeyValue] | None = None,
    *,
    surveyed: bool = False,
) -> list[PartitionValues]:
    """Partition values currently holding any of ``keys``.

    A run's keys, when few (``MAX_LISTED_KEYS``) and of one plain column, are
    collected and become a filter on the index read: Parquet skips the row
    groups whose key range holds none of them, and no shuffle runs. Otherwise
    the index is joined with the keys (a null key matches a null). ``surveyed``: the
    caller already tried to list them (``incoming_keys``): ``listed`` holds them, or None
    when they cannot be listed; they are not collected again.
    """
    entries = read_segments(spark, target_uri, segments, layout)
    if not surveyed:
        listed = _listed_keys(keys, layout)
    if listed is not None:
        return _partitions_of_listed(entries, listed, layout)
    hits = having_keys(entries, keys, layout.primary_key, broadcast=True)
    latest = latest_per_key(hits, layout.primary_key)
    rows = latest.select(*[_col(name) for name in layout.partition_by]).distinct().collect()
    return [tuple(row) for row in rows]


def _listed_keys(keys: DataFrame, layout: Layout) -> list[KeyValue] | None:
    """The keys as a list when a literal filter can find them exactly, else None."""
    if len(layout.primary_key) != 1 or not isinstance(layout.key_types[0], LISTABLE_TYPES):
        return None
    values = [row[0] for row in keys.limit(MAX_LISTED_KEYS + 1).collect()]
    if len(values) > MAX_LISTED_KEYS or any(value is None for value in values):
        return None  # many keys: a join scales; a null key: only a null-safe join finds it
    return values


def _partitions_of_listed(
    entries: DataFrame, listed: Sequence[KeyValue], layout: Layout
) -> list[PartitionValues]:
    if not listed:
        return []
    key = layout.primary_key[0]
    hits = entries.where(is_listed(key, listed)).collect()
    latest: dict[KeyValue, Row] = {}
    for hit in hits:
        if hit[key] not in latest or hit[GENERATION] > latest[hit[key]][GENERATION]:
            latest[hit[key]] = hit
    return sorted(
        {tuple(hit[name] for name in layout.partition_by) for hit in latest.values()},
        key=lambda values: tuple((value is None, str(value)) for value in values),
    )


def is_listed(column: str, values: Sequence[KeyValue]) -> Column:
    """``column IN values`` built in one JVM call when the values are integers: ``isin``
    makes a call per value, seconds at ``MAX_LISTED_KEYS`` values; text is parsed at once.
    Runs of consecutive integers are ranges (``integer_runs``): Spark analyses thousands of
    IN literals in about a second, a range in no time, and Parquet skips by either."""
    integers = [value for value in values if type(value) is int]
    if values and len(integers) == len(values):
        name = quoted(column)
        ranges, singles = integer_runs(integers)
        terms = [f"{name} BETWEEN {low} AND {high}" for low, high in ranges]
        if singles:
            terms.append(f"{name} IN ({','.join(str(value) for value in singles)})")
        return F.expr(" OR ".join(f"({term})" for term in terms))
    return _col(column).isin(list(values))


# At most this many ranges in one filter: an OR chain grows the plan's depth with each.
MAX_KEY_RANGES = 32
# Shorter runs stay in the IN list, where they cost less than a range term.
MIN_RUN = 8


def integer_runs(values: Iterable[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """The distinct ``values`` as (at most ``MAX_KEY_RANGES``) inclusive ranges of consecutive
    integers, the longest runs first, and the values outside them, sorted: together exactly
    ``values``."""
    ordered = sorted(set(values))
    runs: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(ordered) + 1):
        if index == len(ordered) or ordered[index] != ordered[index - 1] + 1:
            runs.append((ordered[start], ordered[index - 1]))
            start = index
    long_runs = sorted(
        (run for run in runs if run[1] - run[0] + 1 >= MIN_RUN),
        key=lambda run: run[0] - run[1],
    )[:MAX_KEY_RANGES]
    kept = sorted(long_runs)
    singles = [
        value for low, high in runs if (low, high) not in kept for value in range(low, high + 1)
    ]
    return kept, singles


def having_keys(
    rows: DataFrame,
    keys: DataFrame,
    primary_key: Sequence[str],
    *,
    broadcast: bool = False,
    how: str = "left_semi",
) -> DataFrame:
    """The rows whose key is one of ``keys``, a null equal to a null (as ``merge_latest`` groups
    keys: a null key is one key, and its older version must be found like any other);
    ``how="left_anti"``: the other rows."""
    aliases = [f"__glue_incremental_key_{index}" for index in range(len(primary_key))]
    wanted = keys.select(*[_col(key).alias(a) for key, a in zip(primary_key, aliases, strict=True)])
    same = [_col(key).eqNullSafe(F.col(a)) for key, a in zip(primary_key, aliases, strict=True)]
    condition = functools.reduce(operator.and_, same)
    return rows.join(F.broadcast(wanted) if broadcast else wanted, condition, how)


def plan(
    segments: Sequence[Segment],
    layout: Layout,
    *,
    rebuild_from: DataFrame | None = None,
    replace_all: bool = False,
) -> IndexPlan:
    """The index part of the next publish.

    ``replace_all`` (a full reload, or a target with no data): the new segment
    holds every key, every old segment goes. ``rebuild_from`` (no usable index):
    the target's key columns become a base segment, every old segment goes.
    Otherwise one segment is added, and segments are compacted past
    ``MAX_SEGMENTS``.
    """
    every = tuple(segment.relative for segment in segments)
    if replace_all:
        return IndexPlan(layout, generation=1, replace=every)
    if rebuild_from is not None:
        return IndexPlan(layout, generation=2, base=rebuild_from, replace=every)
    generation = segments[-1].generation + 1 if segments else 1
    merge: tuple[Segment, ...] = ()
    if len(segments) >= MAX_SEGMENTS:
        oldest, newer = segments[0], segments[1:]
        keep_oldest = oldest.size > sum(segment.size for segment in newer)
        merge = tuple(newer if keep_oldest else segments)
    return IndexPlan(layout, generation, merge=merge, replace=tuple(seg.relative for seg in merge))


def stage(
    spark: SparkSession,
    index_plan: IndexPlan,
    *,
    target_uri: str,
    stage_uri: str,
    cached: DataFrame | None = None,
) -> set[str]:
    """Write the plan's segments under ``<stage_uri>/_index/``; returns their relative dirs.

    The new segment is the key and partition columns of the run's staged data: taken
    from ``cached`` (the staged rows, persisted, partition values as strings) when the
    caller holds them, one task and no shuffle; else read back from staging with a known
    schema, so the merge is not computed twice and no footer is inferred.
    """
    layout = index_plan.layout
    relative = segment_dir(index_plan.generation, layout)
    entries = [
        f"CAST({quoted(f.name)} AS {type_sql(f.dataType)}) AS {quoted(f.name)}"
        for f in layout.entry_schema()
    ]
    extra = select_sql(index_plan.extra, entries) if index_plan.extra is not None else None
    if cached is not None:
        new = select_sql(cached, entries)
        _write(new if extra is None else new.union(extra), stage_uri, relative, cached=True)
    else:
        staged = spark.read.schema(layout.entry_schema()).option("basePath", stage_uri)
        with few_listing_tasks(spark):  # not one listing task per staged partition
            new = staged.parquet(literal(stage_uri))
            _write(new if extra is None else new.union(extra).distinct(), stage_uri, relative)
    written = {segment_dir(index_plan.generation, layout)}
    if index_plan.base is not None:
        _write(index_plan.base, stage_uri, segment_dir(1, layout))
        written.add(segment_dir(1, layout))
    if index_plan.merge:
        merged = read_segments(spark, target_uri, index_plan.merge, layout)
        if index_plan.every_entry:
            latest = merged.drop(GENERATION).distinct()
        else:
            latest = latest_per_key(merged, layout.primary_key).drop(GENERATION)
        relative = segment_dir(index_plan.merge[-1].generation, layout)
        _write(latest, stage_uri, relative)
        written.add(relative)
    return written


def _write(rows: DataFrame, stage_uri: str, relative: str, cached: bool = False) -> None:
    # repartition, not coalesce: the read of many small files stays parallel; one sorted file.
    # Rows already in memory need no parallel read: one task, no shuffle.
    columns = [_col(name) for name in rows.columns]
    (
        (rows.coalesce(1) if cached else rows.repartition(1))
        .sortWithinPartitions(*columns)
        .write.mode("overwrite")
        .parquet(stage_uri.rstrip("/") + "/" + relative)
    )


def _col(name: str) -> Column:
    return F.col(f"`{name}`")
