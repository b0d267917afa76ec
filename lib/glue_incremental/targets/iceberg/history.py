"""An Iceberg table as a history target (``--history scd2``): every version of a key.

A run reads, from the snapshot it started at, the stored rows of only its keys (a
semi-join), runs ``history.changes.key_changes`` (``history.groups.key_rows``) per key on
the executors, and commits **one** ``MERGE`` (on key, role and ``valid_from``) that
deletes the rows the change replaces and upserts the new ones; a full reload overwrites
the table. Absorbed deliveries live in the same table as versions valid for no time
(``valid_from = valid_to``, ``is_current`` false; ``history.changes``), so the snapshot
carries versions, side store and the run's watermark at once: the latest-version target's
fence, roll forward and rewind (``IcebergTableTarget``) apply unchanged. Design:
``docs/history.md``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from glue_incremental.history import changes, groups
from glue_incremental.history.options import HistoryOptions
from glue_incremental.keys.index import having_keys
from glue_incremental.schema import conform as schema_conform
from glue_incremental.schema.evolution import Retyped, SchemaPlan, Widened
from glue_incremental.targets.base import Published, Settle, TargetOptions, UpsertSpec
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.iceberg.target import IcebergTableTarget
from glue_incremental.targets.latest import WriteResult
from glue_incremental.targets.versions import (
    add_version_counts,
    refuse_rows,
    split_batch,
    start_version_counts,
    tagged_schema,
    version_counts,
)

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun

# Stored beside the data and the three added columns: a row's role and delete flag.
HIDDEN = (groups.DELETED, groups.ROLE)


@dataclass(frozen=True)
class HistoryPublish:
    """One history snapshot: rows upserted and deleted, versions opened and closed."""

    snapshot_id: int | None
    upserted: int = 0
    deleted: int = 0
    opened: int = 0
    closed: int = 0


@dataclass
class IcebergHistoryTarget(IcebergTableTarget):
    """An ``IcebergTableTarget`` whose rows are versions (``history``'s added columns)."""

    history: HistoryOptions = field(kw_only=True)

    @classmethod
    def from_history_options(cls, options: TargetOptions) -> IcebergHistoryTarget:
        assert options.history is not None
        plain = IcebergTableTarget.from_options(options)
        return cls(
            plain.table,
            plain.partition_by,
            plain.compact,
            plain.expire_older_than,
            history=options.history,
        )

    def _refuse_versions(self, stored: StructType | None) -> None:
        return None  # versions are what this target keeps

    def _hidden(self, names: Sequence[str]) -> set[str]:
        return {*self.history.added_columns.values(), *HIDDEN} | {
            name for name in names if name.startswith("__glue_incremental_")
        }

    def schema(self, run: IncrementalRun) -> StructType | None:
        """The source's columns as stored; a table of latest-version rows is refused
        (``LatestVersionTarget``) before anything is read."""
        stored = super().schema(run)
        if stored is None:
            return None
        self.history.check_target(self.table.name, stored.fieldNames())
        hidden = self._hidden(stored.fieldNames())
        return StructType([f for f in stored.fields if f.name not in hidden])

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        """Every delivery the table holds (versions and absorbed ones), as source rows."""
        stored = super().read_as_of_start(run)
        return None if stored is None else stored.drop(*self._hidden(stored.columns))

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        return False  # deletes are absorbed deliveries, rows of the table itself

    def evolve(self, run: IncrementalRun, plan: SchemaPlan) -> None:
        """A tracked column the source lacks is refused before any ``ALTER TABLE``; a
        widened or retyped watermark changes ``valid_from``/``valid_to`` alike."""
        self.history.check_columns(plan.resolved.fieldNames())
        super().evolve(run, with_bounds(plan, self.history))

    def refuse(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> UpsertSpec:
        """The refusals, before ``evolve`` alters the table (``engine.job.Refuses``)."""
        options = replace(self.history, primary_key=tuple(spec.primary_key))
        refuse_rows(rows, options, {*spec.delivery, spec.deleted}, spec.null_order_by)
        return replace(spec, null_order_by=0)  # none is null: the write does not look again

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        options = replace(self.history, primary_key=tuple(spec.primary_key))
        states = settle()
        done = publish_history(
            run.spark,
            self.table,
            rows,
            options=options,
            spec=spec,
            partition_by=self.partition_by,
            started_from=self._started_id,
            properties=self._properties(run, states),
            guard=run.guard,
        )
        run.details["iceberg_snapshot_id"] = done.snapshot_id
        add_version_counts(run, done.opened, done.closed)
        written = WriteResult(done.upserted, records_deleted=done.deleted)
        return Published(written, states)

    def mark_start(self, run: IncrementalRun) -> None:
        super().mark_start(run)
        start_version_counts(run)

    def preview(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> None:
        """A dry run's ``upsert``: the versions it would open and close, in the run's
        details, computed as the publish would; nothing created, merged or committed."""
        planned = history_changes(
            run.spark,
            self.table,
            rows,
            options=replace(self.history, primary_key=tuple(spec.primary_key)),
            spec=spec,
            partition_by=self.partition_by,
            started_from=self._started_id,
        )
        try:
            add_version_counts(run, *planned.counts())
        finally:
            planned.out.unpersist()


def with_bounds(plan: SchemaPlan, options: HistoryOptions) -> SchemaPlan:
    """``plan`` with the watermark's change (widened, or a reload's retyped) made to
    ``valid_from`` and ``valid_to`` too: they hold watermark values, and a ``MERGE`` of the
    wider values into the old type overflows (``CAST_OVERFLOW_IN_TABLE_INSERT``)."""
    bounds = (options.valid_from, options.valid_to)
    changed: list[Widened | Retyped] = [*plan.widened, *plan.retyped]
    more = [
        replace(change, column=name)
        for change in changed
        if change.column == options.watermark_column
        for name in bounds
    ]
    if not more:
        return plan
    # A retyped column Iceberg cannot promote is added again after the one before it.
    resolved = StructType([*plan.resolved.fields, *(StructField(c.column, c.new) for c in more)])
    return replace(plan, changes=(*plan.changes, *more), resolved=resolved)


@dataclass(frozen=True)
class HistoryChanges:
    """What one run changes in a history table: per key, the rows to upsert or delete
    (``out``, persisted: unpersist it), the columns a stored row has, and whether the run
    rebuilds the whole table."""

    out: DataFrame
    stored: StructType
    replace_all: bool

    def counts(self) -> tuple[int, int]:
        """The versions opened and closed."""
        return version_counts(self.out)


def history_changes(
    spark: SparkSession,
    target: iceberg_writer.IcebergTarget,
    rows: DataFrame,
    *,
    options: HistoryOptions,
    spec: UpsertSpec,
    partition_by: Sequence[str],
    started_from: int | None,
) -> HistoryChanges:
    """The run's changes, read-only: the stored rows of only ``rows``' keys at the run's
    snapshot, and ``history.changes.key_changes`` per key. Refused in one line first: a
    tracked column ``rows`` lack, a source column named like an added one, a null watermark.
    ``spec.replace_all`` (or a table without a snapshot) builds the history from ``rows``
    alone."""
    delivery, batch = split_batch(spec.delivery)
    data = tuple(c for c in rows.columns if c not in spec.delivery and c != spec.deleted)
    refuse_rows(rows, options, {*spec.delivery, spec.deleted}, spec.null_order_by)
    layout = groups.Layout(options, data, delivery, tuple(partition_by), batch)
    schema = tagged_schema(rows, layout)
    # No OPENED, CLOSED (nor a dry run's BATCH): the columns a stored row has.
    stored = StructType([schema[n] for n in layout.columns[:-2] if n != layout.batch])
    deleted = (
        F.lit(False)
        if spec.deleted is None
        else F.coalesce(F.col(f"`{spec.deleted}`"), F.lit(False))
    )
    tagged = schema_conform.with_columns_of(
        rows.withColumn(groups.DELETED, deleted).withColumn(groups.ROLE, F.lit(groups.INCOMING)),
        schema,
    )
    replace_all = spec.replace_all or started_from is None
    if not replace_all:
        existing = iceberg_writer.read_at(spark, target, started_from)
        if existing is not None:
            keys = rows.select(*[F.col(f"`{key}`") for key in spec.primary_key]).distinct()
            found = having_keys(existing, keys, spec.primary_key)  # a null key too
            tagged = tagged.unionByName(schema_conform.with_columns_of(found, schema))
    key = tuple(spec.primary_key)
    by = [F.col(f"`{name}`") for name in key]  # a key's rows next to each other
    out_schema = StructType([*schema.fields, StructField(changes.OP, StringType())])
    changed = (
        tagged.repartition(*by)
        .sortWithinPartitions(*by)
        .rdd.mapPartitions(functools.partial(groups.by_key, changes.key_changes, layout, key))
    )
    out = spark.createDataFrame(changed, out_schema, verifySchema=False).persist()
    return HistoryChanges(out, stored, replace_all)


def publish_history(
    spark: SparkSession,
    target: iceberg_writer.IcebergTarget,
    rows: DataFrame,
    *,
    options: HistoryOptions,
    spec: UpsertSpec,
    partition_by: Sequence[str],
    started_from: int | None,
    properties: dict[str, str],
    guard: Any,
) -> HistoryPublish:
    """Merge the deliveries ``rows`` into the history table in exactly one snapshot, or
    commit nothing (fenced as ``writer.publish_upsert``); refusals as ``history_changes``."""
    planned = history_changes(
        spark,
        target,
        rows,
        options=options,
        spec=spec,
        partition_by=partition_by,
        started_from=started_from,
    )
    out, stored_columns = planned.out, planned.stored.fieldNames()
    try:
        iceberg_writer.create_table(spark, target, planned.stored, partition_by)
        role, op = F.col(groups.ROLE), F.col(changes.OP)
        opened, closed = planned.counts()
        merged = out.where(role != groups.COUNTS)
        upserted = merged.where(op == changes.UPSERT).count()
        removed = merged.where(op == changes.DELETE).count()
        view = f"glue_incremental_history_{os.getpid()}"
        source = merged.select(*[F.col(f"`{name}`") for name in [*stored_columns, changes.OP]])
        source.createOrReplaceTempView(view)
        key = tuple(spec.primary_key)

        def write() -> None:
            if planned.replace_all:
                source.drop(changes.OP).writeTo(target.name).overwrite(F.lit(True))
            else:
                spark.sql(merge_statement(target.quoted, view, stored_columns, key, options))

        iceberg_writer.fence(spark, target, started_from, guard)
        iceberg_writer.commit_with_properties(spark, properties, write)
        spark.catalog.dropTempView(view)
    finally:
        out.unpersist()
    after = iceberg_writer.current_snapshot(spark, target)
    return HistoryPublish(after.snapshot_id if after else None, upserted, removed, opened, closed)


def merge_statement(
    table: str,
    view: str,
    columns: Sequence[str],
    primary_key: Sequence[str],
    options: HistoryOptions,
) -> str:
    """``MERGE INTO`` on a row's identity (key, role, ``valid_from``): each source row
    deletes, replaces or inserts exactly one stored row."""
    on = " AND ".join(
        [
            *(f"t.`{name}` <=> s.`{name}`" for name in primary_key),
            f"t.`{groups.ROLE}` = s.`{groups.ROLE}`",
            f"t.`{options.valid_from}` = s.`{options.valid_from}`",
        ]
    )
    names = ", ".join(f"`{name}`" for name in columns)
    return (
        f"MERGE INTO {table} t USING {view} s ON {on} "
        f"WHEN MATCHED AND s.`{changes.OP}` = '{changes.DELETE}' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET "
        + ", ".join(f"t.`{name}` = s.`{name}`" for name in columns)
        + f" WHEN NOT MATCHED AND s.`{changes.OP}` = '{changes.UPSERT}' THEN INSERT ({names}) "
        + "VALUES ("
        + ", ".join(f"s.`{name}`" for name in columns)
        + ")"
    )
