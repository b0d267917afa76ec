"""A Parquet path as a ``Target``: write-ahead publish (``writer``, ``publish``), key index.

The stored version as of the run's start is the path itself after ``recover``: under the
run's lease no other run publishes. A rewind or reset leaves the files as they are; the
next run's merge (or full reload) brings them in line with the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from glue_incremental import parquet_schema, schema_conform, writer
from glue_incremental.args import ArgumentError
from glue_incremental.schema_evolution import SchemaPlan
from glue_incremental.targets.base import (
    OutputRewind,
    Published,
    Settle,
    StatesBySlot,
    TargetOptions,
    UpsertSpec,
)

if TYPE_CHECKING:
    from glue_incremental.runtime import IncrementalRun


@dataclass(frozen=True)
class ParquetTarget:
    """``--target_path``, partitioned by ``partition_by`` (Hive-style directories)."""

    path: str
    partition_by: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, options: TargetOptions) -> ParquetTarget:
        """The target at ``options.path``; ArgumentError naming ``target_path`` if there is none."""
        if not options.path:
            raise ArgumentError("target_path", "--target_path is required for a Parquet target")
        return cls(options.path, options.partition_by)

    def recover(self, run: IncrementalRun) -> None:
        if not run.dry_run:
            writer.recover(run.spark, self.path)

    def mark_start(self, run: IncrementalRun) -> None:
        return None

    def schema(self, run: IncrementalRun) -> Any:
        return writer.target_schema(run.spark, self.path, self.partition_by)

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        return writer.read_target(run.spark, self.path, self.partition_by)

    def state_table(self) -> str | None:
        return None

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        return writer.keeps_tombstones(run.spark, self.path)

    def unpublished_state(self) -> dict[str, Any]:
        return {}

    def evolve(self, run: IncrementalRun, plan: SchemaPlan) -> None:
        """An added column needs no rewrite: new files carry it and every read merges the
        files' schemas (older rows read null). A widened column rewrites every partition once
        with the wider type, one write-ahead publish: Spark's Parquet reader refuses to merge
        int32 with int64 files or to read one as the other. The key index is rebuilt by the
        next publish that needs it. A full reload (``plan.reload``) rewrites nothing here: its
        publish replaces every file, in the types it reads."""
        if not plan.widened or plan.reload:
            return
        stored = writer.read_target(run.spark, self.path, self.partition_by)
        if stored is None:
            return
        widened = schema_conform.with_columns_of(stored, plan.resolved, stored.columns)
        writer.replace_partitions(
            run.spark,
            widened,
            self.path,
            partition_by=self.partition_by,
            affected=None,
            run_id=f"{run.run_id}.schema",
            before_publish=run.guard,
        )
        self._record_schema(run, widened.schema)

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        """The files are published first; the state to commit is settled after them, so its
        ``published_at_ms`` is not older than any file it covers (upstream checks rely on it)."""
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
        )
        hidden = (*spec.delivery, *([spec.deleted] if spec.deleted else []))
        self._record_schema(run, rows.schema, hidden)
        return Published(result, settle())

    def replace_partitions(
        self,
        run: IncrementalRun,
        rows: DataFrame,
        affected: Sequence[writer.PartitionValues] | None,
        settle: Settle,
    ) -> Published:
        result = writer.replace_partitions(
            run.spark,
            rows,
            self.path,
            partition_by=self.partition_by,
            affected=affected,
            run_id=run.run_id,
            before_publish=run.guard,
            only_named=True,
        )
        self._record_schema(run, rows.schema)
        return Published(result, settle())

    def _record_schema(self, run: IncrementalRun, schema: Any, hidden: Sequence[str] = ()) -> None:
        """After a publish: the schema its files carry, so the next run plans against it."""
        parquet_schema.record(
            run.spark, self.path, parquet_schema.as_written(schema, self.partition_by, hidden)
        )

    def after_commit(self, run: IncrementalRun, states: StatesBySlot) -> None:
        return None

    def rewind_output(self, spark: Any, run_id: str) -> OutputRewind:
        return OutputRewind({})

    def reset_note(self) -> dict[str, str]:
        return {}
