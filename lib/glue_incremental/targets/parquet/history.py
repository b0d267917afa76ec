"""A Parquet path as a history target (``--history scd2``): every version of a key.

A run reads the stored versions and absorbed deliveries (``<target>/_history/``) of only
the partitions holding its keys (the key index keeps every (key, partition) entry of a
history target, its side store's included), runs ``history.groups.key_rows`` per key on
the executors, and publishes the new versions of those partitions, their ``_history/``
and the index segment in one write-ahead intent (``writer.replace_partitions``): a crash
anywhere, then a rerun, converges as for the latest-version target. Design:
``docs/history.md``; protocol: ``docs/writer-protocol.md``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from glue_incremental.args import validate_run_id
from glue_incremental.history import groups
from glue_incremental.history.options import HistoryOptions
from glue_incremental.io.spark_steps import named
from glue_incremental.keys import incoming as incoming_keys
from glue_incremental.keys import index as key_index
from glue_incremental.partitions.paths import partition_dir
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.schema import conform as schema_conform
from glue_incremental.schema.evolution import SchemaPlan
from glue_incremental.targets.base import Published, Settle, UpsertSpec
from glue_incremental.targets.latest import WriteResult
from glue_incremental.targets.parquet import history_appends, publish, staged_writes, writer
from glue_incremental.targets.parquet.moves import moves_possible, one_untouched
from glue_incremental.targets.parquet.target import VERSIONS_MARKER, ParquetTarget
from glue_incremental.targets.versions import (
    add_version_counts,
    counted_versions,
    observed_counts,
    refuse_rows,
    split_batch,
    start_version_counts,
    tagged_schema,
    version_counts,
)

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun

# The side store: absorbed deliveries and the deliveries of version rows' representatives.
HISTORY_DIR = "_history"
# Up to this many listed keys, their index entries cross into Python as they are (one
# stage); more are made distinct in the JVM first (10,000 keys' entries took 0.26 s as rows).
_COLLECTED_KEYS = 1_000


@dataclass(frozen=True)
class HistoryResult:
    """A history publish: what it wrote, and the versions it opened and closed."""

    result: WriteResult
    opened: int = 0
    closed: int = 0


@dataclass
class ParquetHistoryTarget(ParquetTarget):
    """A ``ParquetTarget`` whose rows are versions (``history``'s added columns)."""

    history: HistoryOptions = field(kw_only=True)

    def schema(self, run: IncrementalRun) -> Any:
        """The source's columns as stored (the added ones left out); a target of
        latest-version rows is refused (``LatestVersionTarget``) before anything is read."""
        stored = super().schema(run)
        if stored is None:
            return None
        self.history.check_target(self.path, stored.fieldNames())
        added = set(self.history.added_columns.values())
        return StructType([f for f in stored.fields if f.name not in added])

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        stored = super().read_as_of_start(run)
        return None if stored is None else stored.drop(*self.history.added_columns.values())

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        return False  # deletes are absorbed deliveries (``_history/``), never tombstones

    def mark_start(self, run: IncrementalRun) -> None:
        super().mark_start(run)
        start_version_counts(run)

    def _evolved_schema(self, plan: SchemaPlan, stored: DataFrame) -> StructType:
        """The plan's schema, then the added version columns: ``valid_from``/``valid_to`` of
        the watermark's type, so a widened watermark widens the bounds of every version."""
        return with_version_columns(plan.resolved, self.history)

    def _widened_side_files(
        self, run: IncrementalRun, plan: SchemaPlan
    ) -> list[Callable[[str], set[str]]]:
        """``_history/`` too: its rows hold the data columns, and a later run reading two
        partitions' side files would otherwise meet int32 beside int64 (``CANNOT_MERGE_SCHEMAS``)."""
        return self._widened_stores(run, plan, (writer.DELIVERY_DIR, HISTORY_DIR))

    def _refuse_versions(self, run: IncrementalRun) -> None:
        return None  # versions are what this target keeps

    def refuse(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> UpsertSpec:
        """The refusals, before ``evolve`` rewrites anything (``engine.job.Refuses``)."""
        options = replace(self.history, primary_key=tuple(spec.primary_key))
        refuse_rows(rows, options, {*spec.delivery, spec.deleted}, spec.null_order_by)
        return replace(spec, null_order_by=0)  # none is null: the write does not look again

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        options = replace(self.history, primary_key=tuple(spec.primary_key))
        done = upsert_history(
            run.spark,
            rows,
            self.path,
            options=options,
            partition_by=self.partition_by,
            spec=spec,
            run_id=run.run_id,
            before_publish=run.guard,
            retain=self.retain,
            carry_new_columns=self._adds_columns,
        )
        self._adds_columns = False
        self._note_publish(run)
        self._record_schema(run, version_schema(rows, options, spec))
        add_version_counts(run, done.opened, done.closed)
        return Published(done.result, settle())

    def preview(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> None:
        """A dry run's ``upsert``: the versions it would open and close, in the run's details,
        computed as the publish would; nothing written (no data, index, side store or note)."""
        options = replace(self.history, primary_key=tuple(spec.primary_key))
        opened, closed = preview_history(
            run.spark, rows, self.path, options=options, partition_by=self.partition_by, spec=spec
        )
        add_version_counts(run, opened, closed)


def version_schema(rows: DataFrame, options: HistoryOptions, spec: UpsertSpec) -> StructType:
    """A version row's columns: the source's, then the three added ones."""
    hidden = {*spec.delivery, spec.deleted}
    return with_version_columns(
        StructType([f for f in rows.schema.fields if f.name not in hidden]), options
    )


def with_version_columns(data: StructType, options: HistoryOptions) -> StructType:
    """``data``'s columns, then the three added ones (``valid_from``/``valid_to`` of the
    watermark's type): the schema a history target's catalog table lists."""
    watermark = data[options.watermark_column].dataType
    return StructType(
        [
            *[f for f in data.fields if f.name not in options.added_columns.values()],
            StructField(options.valid_from, watermark),
            StructField(options.valid_to, watermark),
            StructField(options.is_current, BooleanType()),
        ]
    )


def catalog_columns(target: object, data: StructType) -> StructType:
    """The columns ``target``'s Glue table lists after a run wrote ``data``'s: with the
    added ones for a history target, whose table Terraform may have created without them
    (it ignores the columns after creation), so its first history run adds them."""
    if isinstance(target, ParquetHistoryTarget):
        return with_version_columns(data, target.history)
    return data


@dataclass(frozen=True)
class _Changes:
    """What a run changes in a history target, computed but not yet written: ``out`` holds
    the rows ``history.groups.key_rows`` gives for the partitions read (``affected``)."""

    out: DataFrame
    data: tuple[str, ...]
    delivery: tuple[str, ...]
    affected: list[PartitionValues] | None
    index_plan: key_index.IndexPlan | None
    index_layout: key_index.Layout
    held: DataFrame | None = None  # what ``out`` reads, persisted (``history_appends.Split``)

    def release(self) -> None:
        """Unpersist what the changes hold."""
        self.out.unpersist()
        if self.held is not None:
            self.held.unpersist()


def upsert_history(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    options: HistoryOptions,
    partition_by: Sequence[str],
    spec: UpsertSpec,
    run_id: str,
    before_publish: Any = None,
    retain: timedelta | None = None,
    carry_new_columns: bool = False,
) -> HistoryResult:
    """Merge the deliveries ``rows`` into the history at ``target_uri``.

    Refused in one line before anything is written: a tracked column ``rows`` lack, a
    source column named like an added one, a null watermark. ``spec.replace_all`` (or a
    target with nothing stored) builds the history from ``rows`` alone.
    ``carry_new_columns``: as ``writer.upsert``'s (a file carries them even if no version
    is written).
    """
    validate_run_id(run_id)
    writer.recover(spark, target_uri)
    changes = _changes(spark, rows, target_uri, options, partition_by, spec, carry_new_columns)
    fs = writer.open_filesystem(spark, target_uri)
    marker = publish.join(target_uri, VERSIONS_MARKER)
    if not fs.exists(marker):  # before the first publish: a latest-version write refuses it
        fs.write_bytes(marker, json.dumps(options.added_columns, sort_keys=True).encode())
    out, data, delivery, index_plan = (
        changes.out,
        changes.data,
        changes.delivery,
        changes.index_plan,
    )
    try:
        counted, counts = counted_versions(out)
        role = F.col(groups.ROLE)
        added = list(options.added_columns.values())
        versions = counted.where(role == groups.VERSION).select(*_cols([*data, *added]))
        side_columns = [*data, *delivery, groups.DELETED, groups.ROLE]
        side = counted.where(role.isin(groups.REPRESENTATIVE, groups.ABSORBED)).select(
            *_cols(side_columns)
        )
        if index_plan is not None:
            index_plan = replace(
                index_plan,
                every_entry=True,
                extra=side.select(*_cols(changes.index_layout.columns)),
            )
        stage_side = functools.partial(
            _stage_side, spark, target_uri, side, side_columns, partition_by, changes.affected
        )
        result = writer.replace_partitions(
            spark,
            versions,
            target_uri,
            partition_by=partition_by,
            affected=changes.affected,
            run_id=run_id,
            before_publish=before_publish,
            index_plan=index_plan,
            retain=retain,
            side_files=[stage_side],
            persisted=True,  # the versions are rows of ``out``, persisted
        )
        opened, closed = observed_counts(counts)
    finally:
        changes.release()
    return HistoryResult(result, opened, closed)


def preview_history(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    options: HistoryOptions,
    partition_by: Sequence[str],
    spec: UpsertSpec,
) -> tuple[int, int]:
    """The versions ``upsert_history`` would open and close, read-only: the same refusals
    and the same computation over the same partitions, nothing staged or published (a
    half-done publish is left to the real run's recovery, so it is not counted here)."""
    changes = _changes(spark, rows, target_uri, options, partition_by, spec)
    try:
        return version_counts(changes.out)
    finally:
        changes.release()


def _changes(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    options: HistoryOptions,
    partition_by: Sequence[str],
    spec: UpsertSpec,
    carry_new_columns: bool = False,
) -> _Changes:
    """The refusals, then the rows of every key the run touches, through the core (persisted:
    the caller unpersists ``out``)."""
    incoming = writer.partition_values_as_strings(rows, partition_by)
    delivery, batch = split_batch(spec.delivery)
    data = tuple(c for c in incoming.columns if c not in spec.delivery and c != spec.deleted)
    refuse_rows(incoming, options, {*spec.delivery, spec.deleted}, spec.null_order_by)
    layout = groups.Layout(options, data, delivery, tuple(partition_by), batch)
    typed = _as_stored_partitions(rows, partition_by)
    schema = tagged_schema(typed, layout)  # stored rows' partition text is cast back to it
    history_root = publish.join(target_uri, HISTORY_DIR)
    replace_all = spec.replace_all or not (
        writer.data_exists(spark, target_uri) or writer.data_exists(spark, history_root)
    )
    tagged = schema_conform.with_columns_of(
        typed.withColumn(groups.DELETED, _deleted(spec))
        .withColumn(groups.ROLE, F.lit(groups.INCOMING))
        .drop(*([spec.deleted] if spec.deleted else [])),
        schema,
    )
    moves = moves_possible(spec.primary_key, partition_by, spec.partition_moves)
    index_layout = key_index.Layout.of(incoming.schema, spec.primary_key, partition_by)
    affected: list[PartitionValues] | None = None
    index_plan: key_index.IndexPlan | None = None
    if replace_all:
        if moves:
            segments = key_index.live_segments(
                writer.open_filesystem(spark, target_uri), target_uri
            )
            index_plan = key_index.plan(segments, index_layout, replace_all=True)
    else:
        affected, index_plan = _affected(spark, incoming, target_uri, spec, partition_by, moves)
        if carry_new_columns and partition_by:  # one stored partition rewritten as it is
            fs = writer.open_filesystem(spark, target_uri)
            extra = one_untouched(fs, target_uri, partition_by, set(affected))
            affected = sorted({*affected, *extra}, key=_sort_key)
        stored = [
            writer.read_target(spark, target_uri, partition_by, partitions=affected),
            writer.read_target(spark, history_root, partition_by, partitions=affected),
        ]
        for found, tag in zip(stored, (groups.VERSION, None), strict=True):
            if found is None:
                continue
            if tag is not None:
                found = found.withColumn(groups.ROLE, F.lit(tag))
            tagged = tagged.unionByName(schema_conform.with_columns_of(found, schema))
    out, held = _new_rows(spark, tagged, layout, schema, tuple(spec.primary_key), partition_by)
    return _Changes(out, data, delivery, affected, index_plan, index_layout, held)


def _new_rows(
    spark: SparkSession,
    tagged: DataFrame,
    layout: groups.Layout,
    schema: StructType,
    key: tuple[str, ...],
    partition_by: Sequence[str],
) -> tuple[DataFrame, DataFrame | None]:
    """The rows ``key_rows`` gives for each key of ``tagged`` (partition values as strings,
    read from a persisted frame), and that frame when it is not the rows themselves: the
    common keys computed in the JVM (``history_appends``), every other key by the core."""
    by = _cols(key)  # a key's rows next to each other
    shuffled = tagged.repartition(*by)
    appended = held = None
    if history_appends.usable(layout, schema):
        halves = history_appends.split(
            history_appends.mark(shuffled, layout, key), layout, schema, tagged.columns
        )
        appended, shuffled, held = halves.out, halves.rest, halves.held
        with named(spark, "compute the versions"):
            left = shuffled.count()  # fills ``held``: the write reads it, not the windows
        if left == 0:  # every key in the JVM: the core is not even planned
            return writer.partition_values_as_strings(appended, partition_by), held
    changed = shuffled.sortWithinPartitions(*by).rdd.mapPartitions(
        functools.partial(groups.by_key, groups.key_rows, layout, key)
    )
    out = spark.createDataFrame(changed, schema, verifySchema=False)
    if appended is not None:
        out = appended.unionByName(out)
    return writer.partition_values_as_strings(out, partition_by).persist(), held


def _as_stored_partitions(rows: DataFrame, partition_by: Sequence[str]) -> DataFrame:
    """``rows`` as the core must compare them with stored rows: partition columns keep their
    type (a tie's digest hashes ``1``, not ``'1'``, as on Iceberg and in a full refresh), and an
    empty text partition value is null, as Spark writes it (``__HIVE_DEFAULT_PARTITION__``)
    and reads it back."""
    empty_is_null = [
        name for name in partition_by if isinstance(rows.schema[name].dataType, StringType)
    ]
    if not empty_is_null:
        return rows
    return rows.select(
        *[
            F.when(F.col(f"`{name}`") == "", None).otherwise(F.col(f"`{name}`")).alias(name)
            if name in empty_is_null
            else F.col(f"`{name}`")
            for name in rows.columns
        ]
    )


def _affected(
    spark: SparkSession,
    incoming: DataFrame,
    target_uri: str,
    spec: UpsertSpec,
    partition_by: Sequence[str],
    moves: bool,
) -> tuple[list[PartitionValues], key_index.IndexPlan | None]:
    """The partitions the run rewrites: those its rows fall in and, when a key's partition
    can change, every one the index says holds a version or a delivery of one of its keys.

    As the latest-version merge does: the incoming (key, partition) pairs in one job
    (``keys.incoming.survey``), and, when the keys can be listed, a literal filter on the
    index (Parquet skips the row groups holding none of them) rather than a join reading
    every entry: the lookup follows the run's keys, not the target's size."""
    if not partition_by:
        return [writer.UNPARTITIONED], None
    surveyed = None
    if moves:  # the batch's own aggregate collected the pairs when they are few: no job
        counted = spec.incoming_range.rows if spec.incoming_range else None
        surveyed = incoming_keys.survey(
            incoming,
            spec.primary_key,
            partition_by,
            counted=counted,
            persisted=incoming.storageLevel.useMemory or incoming.storageLevel.useDisk,
            collected=spec.incoming_range.pairs if spec.incoming_range else None,
        )
    known = surveyed.partitions if surveyed is not None else None
    touched = set(known if known is not None else _distinct(incoming, partition_by))
    if not moves:
        return sorted(touched, key=_sort_key), None
    layout = key_index.Layout.of(incoming.schema, spec.primary_key, partition_by)
    segments = key_index.live_segments(writer.open_filesystem(spark, target_uri), target_uri)
    listed = surveyed.keys if surveyed is not None else None
    if key_index.usable(segments, layout):
        entries = key_index.read_segments(spark, target_uri, segments, layout)
        index_plan = key_index.plan(segments, layout)
        if listed is not None:
            # Every entry of a listed key, not only its latest: a history key's versions and
            # deliveries may sit in several partitions.
            if listed:  # a few entries per listed key: few keys' are collected as they are
                hits = entries.where(key_index.is_listed(spec.primary_key[0], listed))
                many = len(listed) > _COLLECTED_KEYS  # else made distinct in the JVM
                touched |= set(_distinct(hits, partition_by, shuffle=many))
            return sorted(touched, key=_sort_key), index_plan
    else:  # no index yet, or one built for other columns: every entry, read once
        found = [
            stored.select(*_cols(layout.columns))
            for root in (target_uri, publish.join(target_uri, HISTORY_DIR))
            if (stored := writer.read_target(spark, root, partition_by)) is not None
        ]
        if not found:
            return sorted(touched, key=_sort_key), key_index.plan(segments, layout)
        entries = functools.reduce(DataFrame.unionByName, found).distinct()
        index_plan = key_index.plan(segments, layout, rebuild_from=entries)
    keys = incoming.select(*_cols(spec.primary_key)).distinct()
    hits = key_index.having_keys(entries, keys, spec.primary_key, broadcast=True)
    touched |= set(_distinct(hits, partition_by))
    return sorted(touched, key=_sort_key), index_plan


def _stage_side(
    spark: SparkSession,
    target_uri: str,
    side: DataFrame,
    columns: Sequence[str],
    partition_by: Sequence[str],
    affected: Sequence[PartitionValues] | None,
    stage_uri: str,
) -> set[str]:
    """Stage ``_history/`` of the rewritten partitions: the directories the publish
    replaces (every live one on a whole replace)."""
    fs = writer.open_filesystem(spark, target_uri)
    staged_root = publish.join(stage_uri, HISTORY_DIR)
    staged_writes.stage_deliveries(spark, side, staged_root, columns, partition_by)
    relative = set(fs.partition_dirs(staged_root, len(partition_by))) if partition_by else {""}
    if affected is None:
        live = publish.join(target_uri, HISTORY_DIR)
        relative |= set(fs.data_dirs(live)) if fs.exists(live) else set()
    else:
        relative |= {partition_dir(partition_by, values) for values in affected}
    return {publish.join(HISTORY_DIR, directory) for directory in relative}


def _deleted(spec: UpsertSpec) -> Any:
    if spec.deleted is None:
        return F.lit(False)
    return F.coalesce(F.col(f"`{spec.deleted}`"), F.lit(False))


def _distinct(
    df: DataFrame, partition_by: Sequence[str], *, shuffle: bool = True
) -> list[PartitionValues]:
    """The distinct partition values of ``df`` as strings; ``shuffle=False`` collects every
    row's and leaves them to Python (one job, for a frame known to be small)."""
    selected = df.select(*[F.col(f"`{name}`").cast(StringType()) for name in partition_by])
    with named(df.sparkSession, "list the partitions written"):
        rows = selected.distinct().collect() if shuffle else selected.collect()
    return list(dict.fromkeys(tuple(row) for row in rows))


def _sort_key(values: PartitionValues) -> tuple[Any, ...]:
    return tuple((value is None, value or "") for value in values)


def _cols(names: Sequence[str]) -> list[Any]:
    return [F.col(f"`{name}`") for name in names]
