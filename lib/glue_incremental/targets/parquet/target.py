"""A Parquet path as a ``Target``: write-ahead publish (``writer``, ``publish``), key index.

The stored version as of the run's start is the path itself after ``recover``: under the
run's lease no other run publishes. With a retention (``--output_retention``, 7 days by
default) each publish keeps the files it replaced and each committed state records the last
publish (``targets.parquet.restore.STATE_KEY``): ``watermarks rewind`` restores the files with the state,
and a restore the rewind left unfinished is finished by the next run's ``recover``. A reset,
a ``--keep-output`` rewind, or a rewind to a run written before retention, leaves the files
as they are; the next run's merge (or full reload) brings them in line with the state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructField, StructType

from glue_incremental.args import ArgumentError
from glue_incremental.deletes import tombstones
from glue_incremental.history.errors import HistoryTarget
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.schema import conform as schema_conform
from glue_incremental.schema.evolution import SchemaPlan
from glue_incremental.targets.base import (
    OutputRewind,
    OutputState,
    Published,
    Settle,
    StatesBySlot,
    TargetOptions,
    UpsertSpec,
)
from glue_incremental.targets.parquet import publish, restore, staged_writes, writer
from glue_incremental.targets.parquet import schema_file as parquet_schema

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun
    from glue_incremental.run.summary import JsonValue


# Written by a history target before its first publish: a latest-version write refuses it.
VERSIONS_MARKER = "_history.json"


@dataclass
class ParquetTarget:
    """``--target_path``, partitioned by ``partition_by`` (Hive-style directories)."""

    path: str
    partition_by: tuple[str, ...] = ()
    # How long a publish keeps the files it replaced (None: deleted at once).
    retain: timedelta | None = None
    # The target's last retained publish, as of the run's start and then its own publishes.
    _publish_seq: int | None = field(default=None, init=False, repr=False)
    # ``evolve`` planned columns no stored file has: the next upsert makes a file carry them.
    _adds_columns: bool = field(default=False, init=False, repr=False)

    @classmethod
    def from_options(cls, options: TargetOptions) -> ParquetTarget:
        """The target at ``options.path``; ArgumentError naming ``target_path`` if there is none."""
        if not options.path:
            raise ArgumentError("target_path", "--target_path is required for a Parquet target")
        return cls(options.path, options.partition_by, options.retain or None)

    def recover(self, run: IncrementalRun) -> None:
        """Finish a crashed publish, then a restore a ``watermarks rewind`` left unfinished: the
        state names a publish older than the target's latest and its note says ``restored``.
        (A crashed run's publish the state does not cover stays: the rerun merges it again.)"""
        if run.dry_run:
            return
        writer.recover(run.spark, self.path)
        recorded = (run.committed_values() or {}).get(restore.STATE_KEY)
        # An int, as ``output_position`` recorded it (absent: no retained publish).
        if not isinstance(recorded, int) or not run.starts_from_an_earlier_state():
            return
        fs = writer.open_filesystem(run.spark, self.path)
        latest = restore.latest_seq(fs, self.path)
        if latest is None or latest <= recorded:
            return
        state = run.store.get_watermark(str(run.state_name))
        if state is None or state.get("output") != restore.RESTORED:
            return  # --keep-output: the files stay, the merge brings them in line
        run.guard()
        done = restore.restore(fs, self.path, recorded, run_id=f"{run.run_id}.restore")
        restored: list[JsonValue] = [*restore.restored_partitions(done)]
        run.details["output_restored_partitions"] = restored

    def mark_start(self, run: IncrementalRun) -> None:
        self._note_publish(run)

    def output_position(self) -> OutputState:
        return {} if self._publish_seq is None else {restore.STATE_KEY: self._publish_seq}

    def _note_publish(self, run: IncrementalRun) -> None:
        if self.retain is not None and not run.dry_run:
            fs = writer.open_filesystem(run.spark, self.path)
            # 0 before the first retained publish: a rewind to a run that found the target
            # empty (or unretained) undoes every retained publish, where None would keep them.
            self._publish_seq = restore.latest_seq(fs, self.path) or 0

    def schema(self, run: IncrementalRun) -> StructType | None:
        self._refuse_versions(run)
        return writer.target_schema(run.spark, self.path, self.partition_by)

    def _refuse_versions(self, run: IncrementalRun) -> None:
        """HistoryTarget if a history target's marker is there (``VERSIONS_MARKER``)."""
        fs = writer.open_filesystem(run.spark, self.path)
        if fs.exists(publish.join(self.path, VERSIONS_MARKER)):
            raise HistoryTarget(self.path)

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        return writer.read_target(run.spark, self.path, self.partition_by)

    def state_table(self) -> str | None:
        return None

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        """One listing of the tombstones' folder, no Spark job."""
        return writer.data_exists(run.spark, publish.join(self.path, tombstones.TOMBSTONE_DIR))

    def unpublished_state(self) -> OutputState:
        return {}

    def evolve(self, run: IncrementalRun, plan: SchemaPlan) -> None:
        """An added column needs no rewrite: the upsert's files carry it (one stored partition
        is rewritten too, in case every row of the run loses) and every read merges the
        files' schemas (older rows read null). A widened column rewrites every partition once
        with the wider type, and every side store holding the column (``_widened_side_files``),
        in one write-ahead publish: Spark's Parquet reader refuses to merge int32 with int64
        files or to read one as the other. The key index is rebuilt by the next publish that
        needs it. A full reload (``plan.reload``) rewrites nothing here: its publish replaces
        every file, in the types it reads."""
        self._adds_columns = bool(plan.added) and not plan.reload
        if not plan.widened or plan.reload:
            return
        stored = writer.read_target(run.spark, self.path, self.partition_by)
        if stored is None:
            return
        widened = schema_conform.with_columns_of(
            stored, self._evolved_schema(plan, stored), stored.columns
        )
        writer.replace_partitions(
            run.spark,
            widened,
            self.path,
            partition_by=self.partition_by,
            affected=None,
            run_id=f"{run.run_id}.schema",
            before_publish=run.guard,
            retain=self.retain,
            side_files=self._widened_side_files(run, plan),
        )
        self._note_publish(run)
        self._record_schema(run, widened.schema)

    def _evolved_schema(self, plan: SchemaPlan, stored: DataFrame) -> StructType:
        """The schema ``evolve`` rewrites the stored rows into: the plan's."""
        return plan.resolved

    def _widened_side_files(
        self, run: IncrementalRun, plan: SchemaPlan
    ) -> list[Callable[[str], set[str]]]:
        """The side stores ``evolve``'s publish rewrites in the wider types (``side_files``):
        ``_delivery/``, which the publish would otherwise drop (it replaces every partition):
        a stored row without its delivery ranks below any row read in a later tie."""
        return self._widened_stores(run, plan, (writer.DELIVERY_DIR,))

    def _widened_stores(
        self, run: IncrementalRun, plan: SchemaPlan, stores: Sequence[str]
    ) -> list[Callable[[str], set[str]]]:
        """Each of ``stores`` the target has, read and staged whole in the widened types."""
        wider = {change.column: change.new for change in plan.widened}
        staged: list[Callable[[str], set[str]]] = []
        for store in stores:
            kept = writer.read_target(run.spark, publish.join(self.path, store), self.partition_by)
            if kept is None:
                continue
            fields = [StructField(f.name, wider.get(f.name, f.dataType)) for f in kept.schema]
            widened = schema_conform.with_columns_of(kept, StructType(fields))
            staged.append(functools.partial(self._stage_store, run.spark, store, widened))
        return staged

    def _stage_store(
        self, spark: SparkSession, store: str, rows: DataFrame, stage_uri: str
    ) -> set[str]:
        """Stage ``rows`` as side store ``store``: the dirs the publish replaces (every live
        one too, so no file of the narrower type is left)."""
        staged_root = publish.join(stage_uri, store)
        staged_writes.stage_deliveries(spark, rows, staged_root, rows.columns, self.partition_by)
        fs = writer.open_filesystem(spark, self.path)
        depth = len(self.partition_by)
        relative = set(fs.partition_dirs(staged_root, depth)) if depth else {""}
        live = publish.join(self.path, store)
        relative |= set(fs.data_dirs(live)) if fs.exists(live) else set()
        return {publish.join(store, directory) for directory in relative}

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        """The files are published first; the state to commit is settled after them, so its
        ``published_at_ms`` is not older than any file it covers (upstream checks rely on it)."""
        self._refuse_versions(run)
        result = writer.upsert(
            run.spark,
            rows,
            self.path,
            primary_key=spec.primary_key,
            partition_by=self.partition_by,
            order_by=spec.order_by,
            run_id=run.run_id,
            replace_all=spec.replace_all,
            partition_moves=spec.partition_moves,
            before_publish=run.guard,
            delivery=spec.delivery,
            deleted=spec.deleted,
            incoming_range=spec.incoming_range,
            read_rows=spec.read_rows,
            read_range=spec.read_range,
            retain=self.retain,
            carry_new_columns=self._adds_columns,
        )
        self._adds_columns = False
        self._note_publish(run)
        hidden = (*spec.delivery, *([spec.deleted] if spec.deleted else []))
        self._record_schema(run, rows.schema, hidden)
        return Published(result, settle())

    def replace_partitions(
        self,
        run: IncrementalRun,
        rows: DataFrame,
        affected: Sequence[PartitionValues] | None,
        settle: Settle,
    ) -> Published:
        self._refuse_versions(run)
        result = writer.replace_partitions(
            run.spark,
            rows,
            self.path,
            partition_by=self.partition_by,
            affected=affected,
            run_id=run.run_id,
            before_publish=run.guard,
            only_named=True,
            retain=self.retain,
        )
        self._note_publish(run)
        self._record_schema(run, rows.schema)
        return Published(result, settle())

    def _record_schema(
        self, run: IncrementalRun, schema: StructType, hidden: Sequence[str] = ()
    ) -> None:
        """After a publish: the schema its files carry, so the next run plans against it."""
        parquet_schema.record(
            run.spark, self.path, parquet_schema.as_written(schema, self.partition_by, hidden)
        )

    def after_commit(self, run: IncrementalRun, states: StatesBySlot) -> None:
        return None

    def rewind_output(self, spark: SparkSession, run_id: str) -> OutputRewind:
        return OutputRewind({})

    def reset_note(self) -> dict[str, str]:
        return {}
