"""Idempotent, partition-at-a-time writes of Parquet targets.

Every write *replaces* whole partitions, so a rerun after a failure rewrites the
same partitions with the same (or newer) rows and converges on what a full
refresh produces. ``replace_partitions``: ``recover`` what a crashed run left
(``targets.parquet.publish.recover``), stage the rows under ``<target>/_staging/<run_id>/``,
call ``before_publish`` (the lease check), then ``targets.parquet.publish.publish``. An
unpartitioned target is one partition; affected partitions left without rows
disappear.

The latest version of each key is ``targets.latest.merge_latest``'s (the tie rule both
targets share); stored rows' deliveries live in ``<target>/_delivery/`` (hidden), published with their
partition. Protocol, ties and escaping: ``docs/writer-protocol.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType

from glue_incremental.args import validate_run_id
from glue_incremental.deletes import markers as delete_markers
from glue_incremental.deletes import tombstones
from glue_incremental.deletes.tombstones import stage as stage_tombstones
from glue_incremental.errors import HiddenPartitionValues, RowsOutsidePartitions
from glue_incremental.hooks import hooks
from glue_incremental.io import parquet_footers
from glue_incremental.io.hadoop_fs import HadoopFileSystem
from glue_incremental.io.jvm_calls import java_strings, quoted, select_sql
from glue_incremental.io.spark_steps import named
from glue_incremental.keys import incoming as incoming_keys
from glue_incremental.keys import index as key_index
from glue_incremental.keys import ranges as key_range
from glue_incremental.partitions.paths import dir_to_values, literal, partition_dir
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.schema import conform as schema_conform
from glue_incremental.targets.latest import (
    PartitionMoves,
    WriteResult,
    merge_latest,
    split_by_keys,
)
from glue_incremental.targets.parquet import output_changes, publish, staged_writes
from glue_incremental.targets.parquet import schema_file as parquet_schema
from glue_incremental.targets.parquet.candidates import match_columns, with_stored_delivery
from glue_incremental.targets.parquet.moves import keys_to_look_up, moves_possible, one_untouched

STAGING_DIR = publish.STAGING_DIR
_join = publish.join
# Each stored row's delivery (key, partition, delivery columns), one directory per partition.
DELIVERY_DIR = "_delivery"
UNPARTITIONED: tuple[str | None, ...] = ()


def upsert(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    order_by: str | None,
    run_id: str,
    replace_all: bool = False,
    partition_moves: PartitionMoves = "detect",
    before_publish: Callable[[], None] | None = None,
    delivery: Sequence[str] = (),
    deleted: str | None = None,
    incoming_range: key_range.KeyRange | None = None,
    read_rows: DataFrame | None = None,
    read_range: key_range.KeyRange | None = None,
    retain: timedelta | None = None,
    carry_new_columns: bool = False,
) -> WriteResult:
    """Merge ``rows`` into the target by primary key, keeping the latest version.

    ``replace_all`` replaces the whole target with ``rows`` (first run, full
    reload). Otherwise the affected partitions are those the new rows fall in,
    plus, when a key's partition value can change, those holding an older
    version of one of their keys, so the key ends up in exactly one place.
    Only affected partitions are read and rewritten.

    Older versions elsewhere are found in the target's key index
    (``key_index``, maintained by each such publish in the same write-ahead
    intent), not by reading the target: a cost that follows the new keys, not
    the history. With no usable index (first run of an existing target) the
    key columns of the whole target are read once and the index is rebuilt.
    The lookup is skipped when it cannot matter: every partition column is
    part of the primary key (a different partition value is a different key),
    or the caller declares ``partition_moves="ignore"`` (partition values never
    change for a key; a violation would leave the old version behind; the
    index is then dropped, and rebuilt by the next ``detect`` run), or the
    ``incoming_range`` of keys lies outside every key the index stores (``key_range``).
    ``read_rows`` (with ``read_range``): the rows of ``rows`` whose keys are looked up, when
    the caller guarantees the others name every partition their keys are stored in
    (``moves.keys_to_look_up``); then that one-place promise is the caller's.

    Ties are broken as ``merge_latest`` says: the incoming row beats the
    target's, then the later ``delivery`` (columns of ``rows``, dropped before
    writing). A crashed earlier publish is recovered before the target is read.
    ``deleted`` (a boolean column of ``rows``, ``deletes``): a key whose latest version
    is a delete leaves the target; its partition is rewritten without it.
    ``carry_new_columns`` (``rows`` has columns no stored file has): one stored partition no
    incoming row touches is rewritten as it is, so a file carries them even if every row loses.
    """
    validate_run_id(run_id)
    recover(spark, target_uri)
    incoming = partition_values_as_strings(rows, partition_by)
    data_columns = [name for name in incoming.columns if name not in delivery]
    latest = functools.partial(
        merge_latest,
        primary_key=primary_key,
        order_by=order_by,
        delivery=delivery,
        keep_delivery=True,
        deleted=deleted,
    )
    if replace_all or not data_exists(spark, target_uri):
        prefer = "__glue_incremental_incoming"
        # A target whose every row was deleted keeps its tombstones: the merge still sees them.
        candidates, old_tombstones = tombstones.with_incoming_keys(
            spark,
            target_uri,
            incoming.withColumn(prefer, F.lit(1)),
            incoming,
            primary_key,
            None if replace_all else deleted,
            prefer,
            delivery,
        )
        merged = latest(candidates, prefer=prefer)
        kept_tombstones = tombstones.to_publish(
            old_tombstones, merged, primary_key, order_by, delivery, deleted
        )
        if deleted is None and (
            not replace_all or not data_exists(spark, _join(target_uri, tombstones.TOMBSTONE_DIR))
        ):
            kept_tombstones = None  # left as they are (none to remove: the intent names none)
        merged = delete_markers.surviving(merged, deleted)
        fresh_index = None
        if moves_possible(primary_key, partition_by, partition_moves):
            segments = key_index.live_segments(open_filesystem(spark, target_uri), target_uri)
            layout = key_index.Layout.of(incoming.schema, primary_key, partition_by)
            fresh_index = key_index.plan(segments, layout, replace_all=True)
        return replace_partitions(
            spark,
            merged,
            target_uri,
            partition_by=partition_by,
            affected=None if replace_all else _distinct_partitions(merged, partition_by),
            run_id=run_id,
            before_publish=before_publish,
            index_plan=fresh_index,
            delivery=delivery,
            primary_key=primary_key,
            tombstones=kept_tombstones,
            retain=retain,
        )
    affected: list[PartitionValues] | None = None
    index_plan: key_index.IndexPlan | None = None
    surveyed: incoming_keys.IncomingKeys | None = None
    if partition_by:
        detect = moves_possible(primary_key, partition_by, partition_moves)
        if detect:  # no incoming key can be stored (``key_range``): nothing to look up
            keys = (incoming.schema, primary_key, partition_by, incoming_range)
            fs = open_filesystem(spark, target_uri)
            with named(spark, "compare the incoming keys with the key index's range"):
                index_plan = key_range.index_plan_if_new(spark, fs, target_uri, *keys)
            detect = index_plan is None
        if detect:
            counted = incoming_range.rows if incoming_range else None
            persisted = rows.storageLevel.useMemory or rows.storageLevel.useDisk
            with named(spark, "list the incoming keys"):
                surveyed = incoming_keys.survey(
                    incoming,
                    primary_key,
                    partition_by,
                    counted=counted,
                    persisted=persisted,
                    collected=incoming_range.pairs if incoming_range else None,
                )
        known = surveyed.partitions if surveyed else None
        if index_plan is not None and incoming_range and incoming_range.partitions is not None:
            known = incoming_range.partitions  # counted with the keys: no second pass
        touched = set(known if known is not None else _distinct_partitions(incoming, partition_by))
        if detect:
            read, cached = None, False
            if read_rows is not None:
                read = partition_values_as_strings(read_rows, partition_by)
                cached = read_rows.storageLevel.useMemory or read_rows.storageLevel.useDisk
            with named(spark, "list the keys read"):
                asked, listed = keys_to_look_up(
                    *(incoming, surveyed, read, read_range, primary_key, partition_by),
                    persisted=cached,
                )
            with named(spark, "look up the incoming keys in the key index"):
                moved_from, index_plan = _partitions_holding(
                    spark, asked, target_uri, primary_key, partition_by, listed
                )
            touched |= moved_from
        if carry_new_columns:
            touched |= one_untouched(
                open_filesystem(spark, target_uri), target_uri, partition_by, touched
            )
        affected = sorted(touched, key=_sort_key)
    with named(spark, "list the affected partitions' files"):
        existing = read_target(spark, target_uri, partition_by, partitions=affected)
    passing: DataFrame | None = None  # stored rows no incoming key competes with
    prefer = "__glue_incremental_incoming"
    candidates = incoming.withColumn(prefer, F.lit(1))
    if existing is not None:
        # Files written before a column was added lack it: null there (schema_evolution).
        stored = schema_conform.with_columns_of(
            existing, incoming.schema, [name for name in data_columns if name != deleted]
        ).withColumn(prefer, F.lit(0))
        stored = delete_markers.stored(stored, deleted)
        deliveries = read_deliveries(spark, target_uri, partition_by, affected, delivery)
        stored = with_stored_delivery(
            stored, deliveries, match_columns(primary_key, partition_by), delivery, incoming.schema
        )
        counted = incoming_range.rows if incoming_range else None
        # Under ``ignore`` a moved key may be stored twice: only the whole merge collapses it.
        stored_once = partition_moves == "detect" or set(partition_by) <= set(primary_key)
        few = incoming_keys.few_enough_to_broadcast(surveyed, counted)
        if deleted is not None and stored_once and few:
            # Deletes make the merge read more than once (counted, tombstones, written): it
            # shuffles only the keys it decides (``stored`` keeps their rows); the rest of
            # the partitions pass through.
            stored, passing = split_by_keys(stored, incoming, primary_key)
        candidates = stored.unionByName(candidates)
    candidates, old_tombstones = tombstones.with_incoming_keys(
        spark, target_uri, candidates, incoming, primary_key, deleted, prefer, delivery
    )
    merged = latest(candidates, prefer=prefer)
    # With deletes the merge is counted, searched for tombstones and written: computed once.
    merged = merged.persist() if deleted is not None else merged
    try:
        decided = stored if passing is not None else existing  # the keys the merge decided
        with named(spark, "merge the rows by key, count the deletes"):
            removed = delete_markers.count_removed(merged, decided, primary_key, deleted)
            changes = deleted is not None and tombstones.changed(
                old_tombstones, merged, primary_key, deleted
            )
        kept_tombstones = None
        if changes:
            kept_tombstones = tombstones.to_publish(
                old_tombstones, merged, primary_key, order_by, delivery, deleted
            )
        written = delete_markers.surviving(merged, deleted)
        if passing is not None:
            written = written.unionByName(select_sql(passing, [quoted(n) for n in written.columns]))
        result = replace_partitions(
            spark,
            written,
            target_uri,
            partition_by=partition_by,
            affected=affected,
            run_id=run_id,
            before_publish=before_publish,
            index_plan=index_plan,
            delivery=delivery,
            primary_key=primary_key,
            tombstones=kept_tombstones,
            retain=retain,
            # With ``passing`` the write also reads files: not a persisted frame only.
            persisted=deleted is not None and passing is None,
        )
    finally:
        merged.unpersist()
    return replace(result, records_deleted=removed) if removed else result


def read_deliveries(
    spark: SparkSession,
    target_uri: str,
    partition_by: Sequence[str],
    partitions: Iterable[PartitionValues] | None,
    delivery: Sequence[str],
) -> DataFrame | None:
    """The kept deliveries of the rows stored in ``partitions`` (all when None), or None.

    None too when the target keeps none (written before deliveries were kept,
    or by a source without delivery, as JDBC): its rows rank below any row
    with a delivery on an equal watermark, as before.
    """
    if not delivery:
        return None
    root = _join(target_uri, DELIVERY_DIR)
    fs = open_filesystem(spark, target_uri)
    if not fs.exists(root) or not fs.has_data_files(root):
        return None
    wanted = [UNPARTITIONED] if not partition_by else partitions
    paths = [root]
    if wanted is not None:
        paths = [
            _join(root, partition_dir(partition_by, values))
            for values in wanted
            if fs.exists(_join(root, partition_dir(partition_by, values)))
        ]
        if not paths:
            return None
    found = _read_as_strings(spark, root, paths, fs)
    if not set(delivery) <= set(found.columns):
        return None
    return found


def _partitions_holding(
    spark: SparkSession,
    incoming: DataFrame,
    target_uri: str,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    surveyed: incoming_keys.IncomingKeys | None = None,
) -> tuple[set[PartitionValues], key_index.IndexPlan]:
    """Partitions holding a version of an incoming key, and the index part of the publish.

    Asked of the key index (``key_index``): a few small files, whatever the
    history. With no usable index (none yet, or built for other columns), the
    key columns of the whole target are read once and become the index's base.
    """
    keys = select_sql(incoming, [quoted(key) for key in primary_key]).distinct()
    layout = key_index.Layout.of(incoming.schema, primary_key, partition_by)
    segments = key_index.live_segments(open_filesystem(spark, target_uri), target_uri)
    if key_index.usable(segments, layout):
        listed = surveyed.keys if surveyed else None
        found = key_index.partitions_of(
            spark, target_uri, segments, keys, layout, listed, surveyed=surveyed is not None
        )
        return set(found), key_index.plan(segments, layout)
    everything = read_target(spark, target_uri, partition_by)
    assert everything is not None
    key_columns = everything.select(*[F.col(f"`{n}`") for n in layout.columns])
    moved_from = key_index.having_keys(key_columns, keys, primary_key)
    index_plan = key_index.plan(segments, layout, rebuild_from=key_columns)
    return set(_distinct_partitions(moved_from, partition_by)), index_plan


def _distinct_partitions(df: DataFrame, partition_by: Sequence[str]) -> list[PartitionValues]:
    if not partition_by:
        return [UNPARTITIONED]
    with named(df.sparkSession, "list the partitions written"):
        rows = (
            df.select(*[F.col(f"`{name}`").cast(StringType()) for name in partition_by])
            .distinct()
            .collect()
        )
    return sorted((tuple(row) for row in rows), key=_sort_key)


def _sort_key(values: PartitionValues) -> tuple:
    return tuple((value is None, value or "") for value in values)


def partition_values_as_strings(df: DataFrame, partition_by: Sequence[str]) -> DataFrame:
    """Cast partition columns to strings: the form Spark writes into directory names."""
    types = {field.name: field.dataType for field in df.schema.fields}
    if all(isinstance(types.get(name), StringType) for name in partition_by):
        return df  # already strings (or unpartitioned): no new plan to analyse
    return select_sql(
        df,
        [
            f"CAST({quoted(name)} AS STRING) AS {quoted(name)}"
            if name in partition_by
            else quoted(name)
            for name in df.columns
        ],
    )


def read_target(
    spark: SparkSession,
    target_uri: str,
    partition_by: Sequence[str],
    *,
    partitions: Iterable[PartitionValues] | None = None,
) -> DataFrame | None:
    """The target with partition columns as strings, or None if there is nothing to read.

    ``partitions`` limits the read to those partition directories, so only
    they are listed and read (not the whole target); ones that do not exist
    are skipped.
    """
    if not data_exists(spark, target_uri):
        return None
    paths = [target_uri]
    fs = None
    if partitions is not None:
        fs = open_filesystem(spark, target_uri)
        paths = [
            _join(target_uri, partition_dir(partition_by, values))
            for values in partitions
            if fs.exists(_join(target_uri, partition_dir(partition_by, values)))
        ]
        if not paths:
            return None
    return _read_as_strings(spark, target_uri, paths, fs)


def target_schema(
    spark: SparkSession, target_uri: str, partition_by: Sequence[str]
) -> StructType | None:
    """The target's schema (partition columns as strings), or None for an empty target.

    Files written before a column was added lack it (``docs/schema-evolution.md``): the
    schema is the one the last publish recorded (``parquet_schema``), so no run reads the
    footers of partitions it does not touch. A target without a recorded schema falls
    back to the files of one partition. A target whose every row was deleted has no data
    file but keeps its recorded schema: a column only deleted rows carried stays.
    """
    recorded = parquet_schema.recorded(spark, target_uri)
    if recorded is not None:
        return recorded
    found = open_filesystem(spark, target_uri).first_data_file(target_uri)
    if found is None:
        return None
    return _read_as_strings(spark, target_uri, [found.rstrip("/").rsplit("/", 1)[0]]).schema


def _read_as_strings(
    spark: SparkSession, base_uri: str, paths: Sequence[str], fs: HadoopFileSystem | None = None
) -> DataFrame:
    conf = "spark.sql.sources.partitionColumnTypeInference.enabled"
    # Files carry the columns of the run that wrote them: merged, older ones read null. A few
    # files' footers are merged on the driver (``parquet_footers``): no Spark job.
    files = parquet_footers.data_files(fs or open_filesystem(spark, base_uri), paths)
    merged = parquet_footers.merged_schema(spark, files) if files else None
    previous = spark.conf.get(conf)
    spark.conf.set(conf, "false")
    try:
        reader = spark.read.option("basePath", base_uri)
        if files and merged is not None:
            reader = reader.schema(merged)  # parquet(String...): the paths in one call
            return reader._df(
                reader._jreader.parquet(java_strings(spark, [literal(p) for p in files]))
            )
        return reader.option("mergeSchema", "true").parquet(*[literal(p) for p in paths])
    finally:
        if previous is None:
            spark.conf.unset(conf)
        else:
            spark.conf.set(conf, previous)


def replace_partitions(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    partition_by: Sequence[str],
    affected: Iterable[PartitionValues] | None,
    run_id: str,
    before_publish: Callable[[], None] | None = None,
    index_plan: key_index.IndexPlan | None = None,
    delivery: Sequence[str] = (),
    primary_key: Sequence[str] = (),
    tombstones: DataFrame | Literal[False] | None = None,
    only_named: bool = False,
    retain: timedelta | None = None,
    side_files: Sequence[Callable[[str], set[str]]] = (),
    persisted: bool = False,
) -> WriteResult:
    """Make exactly the ``affected`` partitions of the target hold ``rows``.

    ``rows`` must only contain rows of affected partitions (partition columns
    are cast to strings here; ``only_named``: others are refused, nothing written). ``affected`` None means every partition: the
    target is replaced as a whole (full reload), including partitions that no
    longer have rows and directories of another layout. Partitions not listed
    stay byte-identical. Publishing follows ``publish`` (write-ahead intent); a crashed publish is finished or
    undone by ``recover``, which runs first. The key index (``key_index``) is
    updated as ``index_plan`` says, in the same intent; without a plan it is
    removed (a publish that does not maintain it must not leave it stale).
    ``delivery`` columns of ``rows`` (with ``primary_key``) are kept under
    ``_delivery/<partition>/`` in the same intent, never in the data; every
    replaced partition's deliveries are replaced too (removed when none given).
    ``tombstones`` (``tombstones``), in the same intent: a frame replaces them, False removes
    them, None leaves them as they are. ``retain``: replaced files kept that long (``restore``).
    ``side_files``: more side writes in the same intent, each given the staging directory and
    returning the directories (relative to the target) the publish replaces. ``persisted``:
    ``rows`` only read a persisted frame, so the data write is one Spark job.
    """
    validate_run_id(run_id)
    fs = open_filesystem(spark, target_uri)
    publish.recover(fs, target_uri)
    rows = partition_values_as_strings(rows, partition_by)
    grouped = bool(delivery and primary_key)  # then deliveries and index: one cache, no shuffle
    rows = staged_writes.persisted_by_partition(spark, rows, partition_by) if grouped else rows
    stage_uri = publish.stage_data_uri(target_uri, run_id)
    fs.delete_tree(publish.run_prefix(target_uri, run_id))
    hooks.point("publish.stage", run_id=run_id)
    records = staged_writes.stage_data(
        spark, rows.drop(*delivery), stage_uri, partition_by, persisted=persisted, grouped=grouped
    )
    staged_dirs, hidden = fs.partition_dirs_and_hidden(stage_uri, len(partition_by))
    if hidden:  # written there, a row would be lost to every reader
        fs.delete_tree(publish.run_prefix(target_uri, run_id))
        raise HiddenPartitionValues(sorted(hidden))
    staged = set(staged_dirs) if partition_by else {""}
    if affected is None:
        # Every directory a reader sees, whatever layout wrote it: a full reload under a new
        # --partition_by leaves only the new layout.
        to_replace = staged | set(fs.data_dirs(target_uri))
    else:
        named = {partition_dir(partition_by, values) for values in affected}
        if only_named and not staged <= named:  # else they would replace partitions not named
            fs.delete_tree(publish.run_prefix(target_uri, run_id))
            raise RowsOutsidePartitions(sorted(staged - named))
        to_replace = named | staged
    # The data write cached the rows: the side files read them back at once, side by side.
    side: list[Callable[[], set[str] | None]] = [
        functools.partial(
            _stage_index, spark, fs, target_uri, stage_uri, index_plan, rows if grouped else None
        )
    ]
    if grouped:
        kept = [*match_columns(primary_key, partition_by), *delivery]
        deliveries = _join(stage_uri, DELIVERY_DIR)
        side.append(
            functools.partial(
                staged_writes.stage_deliveries, spark, rows, deliveries, kept, partition_by, True
            )
        )
    side.extend(functools.partial(write, stage_uri) for write in side_files)
    if tombstones is not None:
        side.append(functools.partial(stage_tombstones, stage_uri, tombstones))
    index_dirs, *others = staged_writes.side_by_side(side)
    assert index_dirs is not None, "staging the key index returns the directories it wrote"
    if grouped:
        rows.unpersist()
    delivery_dirs = {_join(DELIVERY_DIR, relative) for relative in to_replace}
    delivery_root = _join(target_uri, DELIVERY_DIR)
    if affected is None and fs.exists(delivery_root):
        delivery_dirs |= {_join(DELIVERY_DIR, d) for d in fs.data_dirs(delivery_root)}
    replaced = to_replace | index_dirs | delivery_dirs
    first = 1 if grouped else 0  # after the deliveries' write
    for more in others[first : first + len(side_files)]:
        assert more is not None, "a side file's write returns the directories it wrote"
        replaced |= more
    if tombstones is not None:
        tombstone_dirs = others[-1]
        assert tombstone_dirs is not None, "staging tombstones returns the directories it wrote"
        replaced |= tombstone_dirs
    written_files = publish.staged_files(fs, target_uri, run_id, replaced)
    if before_publish is not None:
        before_publish()
    output_changes.note_uncommitted(fs, target_uri, run_id, sorted(to_replace))
    publish.publish(fs, target_uri, run_id, sorted(replaced), expected=written_files, retain=retain)
    written = [dir_to_values(r, partition_by) for r in sorted(to_replace) if r in staged]
    removed = [dir_to_values(r, partition_by) for r in sorted(to_replace) if r not in staged]
    return WriteResult(records, written, removed)


def _stage_index(
    spark: SparkSession,
    fs: HadoopFileSystem,
    target_uri: str,
    stage_uri: str,
    index_plan: key_index.IndexPlan | None,
    cached: DataFrame | None = None,
) -> set[str]:
    """Stage the plan's index segments: the index directories the publish replaces.

    Without a plan, or with nothing staged (an empty full reload), every live
    segment is removed: an index is never left describing other data.
    """
    live = {segment.relative for segment in key_index.live_segments(fs, target_uri)}
    if index_plan is None or not fs.has_data_files(stage_uri):
        return live
    with named(spark, "stage the key index"):
        written = key_index.stage(
            spark, index_plan, target_uri=target_uri, stage_uri=stage_uri, cached=cached
        )
    return written | set(index_plan.replace)


def recover(spark: SparkSession, target_uri: str) -> list[publish.Intent]:
    """Finish or undo what a crashed publish left (``targets.parquet.publish.recover``); run before reading."""
    return publish.recover(open_filesystem(spark, target_uri), target_uri)


def data_exists(spark: SparkSession, uri: str) -> bool:
    fs = open_filesystem(spark, uri)
    return fs.exists(uri) and fs.has_data_files(uri)


def open_filesystem(spark: SparkSession, uri: str) -> HadoopFileSystem:
    """The file system of ``uri`` (tests wrap it, for example to rename by copy and delete)."""
    return HadoopFileSystem(spark, uri)
