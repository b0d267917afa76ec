"""A key -> partition index of a Parquet target, so ``detect`` never scans the whole target.

When a key's partition value can change, an upsert must find the partitions
holding older versions of its keys. Reading the key columns of the whole target
costs time linear in history; this index answers the same question by reading a
few small, key-sorted Parquet files under ``<target>/_index/`` (hidden from
readers of the target: Spark skips paths starting with ``_``).

Layout: one directory per segment, ``_index/generation=<n>/part-*.parquet``,
holding ``(primary key..., partition columns...)`` rows, sorted by key. Every
publish that goes through ``writer.upsert`` with moves possible adds one segment:
the keys of every row it writes (the whole new content of the affected
partitions). Within the index, the entry of the greatest generation is where a
key lives: a key only changes partition in a publish that writes it. Entries of
older generations are stale but harmless.

Crash safety: segments are staged with the run's data and listed in the same
write-ahead intent (``publish``), so they become live, roll forward or roll back
with the data they describe: the index never disagrees with the target after a
publish or its recovery. A publish that does not maintain the index (another
``--partition_moves``, the join, a caller of ``replace_partitions``) deletes it in
the same intent; the next ``detect`` run then rebuilds it from the target (one
full key scan, as the first run with an index, or one after a change of the
primary key or partition columns, does).

Compaction (LSM-style, in the publish that triggers it): once there are more than
``MAX_SEGMENTS`` segments, the newest ones (all but the oldest, or all when the
oldest is not the largest) are merged into one holding the latest entry per key,
written under the greatest merged generation, and the merged segments are
replaced in the same intent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import NumericType, StringType
from pyspark.sql.window import Window

INDEX_DIR = "_index"
GENERATION = "generation"
MAX_SEGMENTS = 12
# Small row groups: with rows sorted by key, a key-range filter skips most of a big segment.
ROW_GROUP_BYTES = 256 * 1024


@dataclass(frozen=True)
class Segment:
    """One live segment: its generation, its directory relative to the target, its bytes."""

    generation: int
    relative: str
    size: int


@dataclass
class IndexPlan:
    """What the next publish writes into the index, decided before the target is read.

    ``base`` (a rebuild) is the key columns of the whole target as it was before
    this publish, written as the generation before ``generation``; ``merge`` are
    live segments compacted into one; ``replace`` are segment directories the
    publish removes (merged ones, or every old one on a rebuild or full reload).
    """

    primary_key: tuple[str, ...]
    partition_by: tuple[str, ...]
    generation: int
    base: DataFrame | None = None
    merge: tuple[Segment, ...] = ()
    replace: tuple[str, ...] = ()
    rebuilt: bool = False
    lookups: dict[str, int] = field(default_factory=dict)


def index_root(target_uri: str) -> str:
    return target_uri.rstrip("/") + "/" + INDEX_DIR


def segment_dir(generation: int) -> str:
    """``_index/generation=0000000012``, relative to the target."""
    return f"{INDEX_DIR}/{GENERATION}={generation:010d}"


def live_segments(fs, target_uri: str) -> list[Segment]:
    """The index's segments, oldest first ([] when there is no index)."""
    found = []
    for path in fs.list_dirs(index_root(target_uri)):
        name = path.rstrip("/").rsplit("/", 1)[1]
        prefix = f"{GENERATION}="
        if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
            continue
        size = sum(size for _, size in fs.list_files(path))
        found.append(Segment(int(name[len(prefix) :]), f"{INDEX_DIR}/{name}", size))
    return sorted(found, key=lambda segment: segment.generation)


def read_segments(
    spark: SparkSession, target_uri: str, segments: Sequence[Segment]
) -> DataFrame | None:
    """Rows of ``segments`` with their ``generation`` column (a string), or None if empty."""
    if not segments:
        return None
    root = index_root(target_uri)
    paths = [target_uri.rstrip("/") + "/" + segment.relative for segment in segments]
    conf = "spark.sql.sources.partitionColumnTypeInference.enabled"
    previous = spark.conf.get(conf)
    spark.conf.set(conf, "false")
    try:
        return spark.read.option("basePath", root).parquet(*paths)
    finally:
        spark.conf.set(conf, previous if previous is not None else "true")


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
    primary_key: Sequence[str],
    partition_by: Sequence[str],
) -> list[tuple[str | None, ...]] | None:
    """Partition values currently holding any of ``keys``; None if the index cannot answer.

    The index cannot answer when it is absent or its columns are not the
    primary key and partition columns (it was built for another layout): the
    caller rebuilds it from the target.
    """
    entries = read_segments(spark, target_uri, segments)
    expected = {*primary_key, *partition_by, GENERATION}
    if entries is None or set(entries.columns) != expected:
        return None
    entries = entries.where(_key_range(keys, primary_key))
    hits = entries.join(keys, list(primary_key), "left_semi")
    latest = latest_per_key(hits, primary_key)
    rows = latest.select(*[_col(name) for name in partition_by]).distinct().collect()
    return [tuple(row) for row in rows]


def _key_range(keys: DataFrame, primary_key: Sequence[str]) -> Column:
    """``min <= key <= max`` of the incoming keys (one orderable key column), else true.

    Parquet row-group statistics of the key-sorted segments then skip most of
    a large segment without reading it.
    """
    if len(primary_key) != 1:
        return F.lit(True)
    name = primary_key[0]
    data_type = keys.schema[name].dataType
    if not isinstance(data_type, NumericType | StringType):
        return F.lit(True)
    bounds = keys.agg(F.min(_col(name)).alias("lo"), F.max(_col(name)).alias("hi")).first()
    if bounds is None or bounds["lo"] is None:
        return F.lit(True)
    return _col(name).between(F.lit(bounds["lo"]), F.lit(bounds["hi"]))


def plan(
    segments: Sequence[Segment],
    primary_key: Sequence[str],
    partition_by: Sequence[str],
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
    pk, parts = tuple(primary_key), tuple(partition_by)
    every = tuple(segment.relative for segment in segments)
    if replace_all:
        return IndexPlan(pk, parts, generation=1, replace=every)
    if rebuild_from is not None:
        return IndexPlan(pk, parts, generation=2, base=rebuild_from, replace=every, rebuilt=True)
    generation = (segments[-1].generation if segments else 0) + 1
    merge: tuple[Segment, ...] = ()
    if len(segments) >= MAX_SEGMENTS:
        oldest, newer = segments[0], segments[1:]
        keep_oldest = oldest.size > sum(segment.size for segment in newer)
        merge = tuple(newer if keep_oldest else segments)
    return IndexPlan(
        pk, parts, generation, merge=merge, replace=tuple(seg.relative for seg in merge)
    )


def stage(
    spark: SparkSession,
    index_plan: IndexPlan,
    *,
    target_uri: str,
    stage_uri: str,
    staged_rows: DataFrame,
) -> set[str]:
    """Write the plan's segments under ``<stage_uri>/_index/``; returns their relative dirs.

    ``staged_rows`` is the run's staged data (read back from staging, so the
    merge is not computed twice); its key and partition columns are the new
    segment.
    """
    columns = [*index_plan.primary_key, *index_plan.partition_by]
    written = {segment_dir(index_plan.generation)}
    _write(staged_rows.select(*[_col(c) for c in columns]), stage_uri, index_plan.generation)
    if index_plan.base is not None:
        _write(index_plan.base.select(*[_col(c) for c in columns]), stage_uri, 1)
        written.add(segment_dir(1))
    if index_plan.merge:
        merged = read_segments(spark, target_uri, index_plan.merge)
        assert merged is not None
        latest = latest_per_key(merged, index_plan.primary_key).drop(GENERATION)
        generation = index_plan.merge[-1].generation
        _write(latest.select(*[_col(c) for c in columns]), stage_uri, generation)
        written.add(segment_dir(generation))
    return written


def _write(rows: DataFrame, stage_uri: str, generation: int) -> None:
    # repartition, not coalesce: the read of many small files stays parallel; one sorted file.
    (
        rows.repartition(1)
        .sortWithinPartitions(*rows.columns)
        .write.mode("overwrite")
        .option("parquet.block.size", ROW_GROUP_BYTES)
        .parquet(stage_uri.rstrip("/") + "/" + segment_dir(generation))
    )


def _col(name: str) -> Column:
    return F.col(f"`{name}`")
