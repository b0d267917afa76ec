"""An Iceberg table as a ``Target``: one snapshot per run carrying the state it commits.

The snapshot's summary holds the run's watermark (``targets.iceberg.writer.snapshot_properties``), so a
crash between the snapshot and the DynamoDB commit is rolled forward by the next run
(``recover``). A rewind makes the run's snapshot current again; a reset keeps the table
until the next run's full reload replaces it in one snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from glue_incremental.args import ArgumentError
from glue_incremental.errors import NoSnapshotOfRun
from glue_incremental.history import groups
from glue_incremental.history.errors import HistoryTarget
from glue_incremental.partitions.values import PartitionValues
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
from glue_incremental.targets.iceberg import maintenance as iceberg_maintenance
from glue_incremental.targets.iceberg import schema as iceberg_schema
from glue_incremental.targets.iceberg import tombstones as iceberg_tombstones
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.latest import WriteResult

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun


@dataclass
class IcebergTableTarget:
    """``--target_table`` in ``--iceberg_catalog``, with optional maintenance after commits."""

    table: iceberg_writer.IcebergTarget
    partition_by: tuple[str, ...] = ()
    compact: bool = False
    expire_older_than: timedelta = timedelta(0)
    _started_from: iceberg_writer.Snapshot | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_options(cls, options: TargetOptions) -> IcebergTableTarget:
        """The table ``options.table`` names; ArgumentError naming ``target_table`` if none or invalid."""
        if not options.table:
            raise ArgumentError(
                "target_table", "--target_format iceberg needs --target_table database.table"
            )
        return cls(
            iceberg_writer.IcebergTarget(str(options.table), options.catalog),
            options.partition_by,
            options.compact,
            options.expire_older_than,
        )

    @property
    def _started_id(self) -> int | None:
        return self._started_from.snapshot_id if self._started_from else None

    def recover(self, run: IncrementalRun) -> None:
        """Roll the state forward to a snapshot whose DynamoDB commit a crash prevented."""
        if run.dry_run or not run.bookmark.commits:
            return
        rolled = iceberg_writer.roll_forward(
            run.spark, self.table, run.store, str(run.state_name), run.lease
        )
        if rolled is not None:
            run.details["rolled_forward_from_snapshot"] = rolled.snapshot_id

    def mark_start(self, run: IncrementalRun) -> None:
        self._started_from = iceberg_writer.current_snapshot(run.spark, self.table)

    def schema(self, run: IncrementalRun) -> StructType | None:
        stored = iceberg_writer.table_schema(run.spark, self.table)
        self._refuse_versions(stored)
        return stored

    def _refuse_versions(self, stored: StructType | None) -> None:
        """HistoryTarget if ``stored`` has a history table's role column: versions that a
        merge by key would collapse into one row per key."""
        if stored is not None and groups.ROLE in stored.fieldNames():
            raise HistoryTarget(self.table.name)

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        return iceberg_writer.read_at(run.spark, self.table, self._started_id)

    def unpublished_state(self) -> OutputState:
        started = self._started_id
        return {} if started is None else {iceberg_writer.RESTORE_SNAPSHOT: started}

    def state_table(self) -> str | None:
        return self.table.name

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        return iceberg_writer.table_exists(run.spark, iceberg_tombstones.side_table(self.table))

    def output_position(self) -> OutputState:
        return {}

    def evolve(self, run: IncrementalRun, plan: SchemaPlan) -> None:
        """Iceberg's own schema evolution (metadata only, no data file rewritten)."""
        if plan.evolves_target:
            run.guard()
            iceberg_schema.evolve(run.spark, self.table, plan)

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        """The state is settled first: the snapshot carries the very state committed next."""
        self._refuse_versions(iceberg_writer.table_schema(run.spark, self.table))
        states = settle()
        published = iceberg_writer.publish_upsert(
            run.spark,
            self.table,
            rows,
            primary_key=spec.primary_key,
            partition_by=self.partition_by,
            order_by=spec.order_by,
            replace_all=spec.replace_all,
            started_from=self._started_id,
            properties=self._properties(run, states),
            guard=run.guard,
            delivery=spec.delivery,
            deleted=spec.deleted,
            incoming_range=spec.incoming_range,
        )
        run.details["iceberg_snapshot_id"] = published.snapshot_id
        written = WriteResult(published.records_written, records_deleted=published.records_deleted)
        return Published(written, states)

    def replace_partitions(
        self,
        run: IncrementalRun,
        rows: DataFrame,
        affected: Sequence[PartitionValues] | None,
        settle: Settle,
    ) -> Published:
        self._refuse_versions(iceberg_writer.table_schema(run.spark, self.table))
        states = settle()
        published = iceberg_writer.publish_partitions(
            run.spark,
            self.table,
            rows,
            partition_by=self.partition_by,
            affected=affected,
            started_from=self._started_id,
            properties=self._properties(run, states),
            guard=run.guard,
        )
        run.details["iceberg_snapshot_id"] = published.snapshot_id
        return Published(WriteResult(published.records_written), states)

    def _properties(self, run: IncrementalRun, states: StatesBySlot) -> dict[str, str]:
        state_name = str(run.state_name)
        return iceberg_writer.snapshot_properties(
            run_id=run.run_id,
            state_name=state_name,
            state_versions={
                slot: iceberg_writer.started_version(run.store, state_name, slot) for slot in states
            },
            watermarks=states,
            commits=run.bookmark.commits and not run.dry_run,
        )

    def after_commit(self, run: IncrementalRun, states: StatesBySlot) -> None:
        """Optional compaction and snapshot expiry, only after a commit and under the lease."""
        if not run.committed:
            return
        if self.compact:
            run.guard()
            run.details["iceberg_compaction_snapshot_id"] = iceberg_maintenance.compact(
                run.spark,
                self.table,
                run_id=run.run_id,
                state_name=str(run.state_name),
                watermarks={slot: dict(state) for slot, state in states.items()},
            )
        if self.expire_older_than:
            run.guard()
            result = iceberg_maintenance.expire(
                run.spark,
                self.table,
                run.store,
                str(run.state_name),
                iceberg_maintenance.Retention(self.expire_older_than),
            )
            run.details["iceberg_snapshots_expired"] = (
                result.snapshots_before - result.snapshots_after
            )

    def rewind_output(self, spark: SparkSession, run_id: str) -> OutputRewind:
        """Fails now (before the state moves) if the table has no snapshot of ``run_id``."""
        snapshot = iceberg_writer.snapshot_of_run(spark, self.table, run_id)
        if snapshot is None:
            raise NoSnapshotOfRun(self.table.name, run_id)

        def roll_back() -> None:
            iceberg_writer.rollback_to(spark, self.table, snapshot.snapshot_id)

        return OutputRewind(
            {"output": "rolled back", "iceberg_snapshot": str(snapshot.snapshot_id)}, roll_back
        )

    def reset_note(self) -> dict[str, str]:
        # Not emptied: the next run's full reload replaces it in one snapshot, so readers
        # never see it empty in between.
        return {"output": "kept until the next run's full reload replaces it"}
