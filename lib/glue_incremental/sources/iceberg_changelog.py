"""An Iceberg table read by changelog: the rows that changed since the snapshot last consumed.

Only committed snapshots exist, so a reader never sees half a write. First read (no
snapshot consumed): the whole table at its current snapshot. Later: the changelog between
the consumed snapshot and the current one (inserted, deleted and updated rows, each
update as its old and new version). If the consumed snapshot is no longer an ancestor of
the current one (the table was rolled back past it), the whole table is read again,
together with the consumed snapshot's rows while that snapshot is still kept: the rows the
rollback removed touch their partitions as deleted rows do in a changelog.
Planning reads metadata only and writes nothing; the rows are read lazily.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from pyspark.sql import DataFrame, SparkSession

from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.iceberg.tables import IcebergTarget


class ChangelogSummary(TypedDict):
    iceberg_start_snapshot: int | None
    iceberg_end_snapshot: int | None


@dataclass(frozen=True)
class ChangelogPlan:
    """One read of the table: from ``start_snapshot`` (None: the whole table) to
    ``end_snapshot`` (the snapshot to consume and keep in the state; None: no snapshot yet).
    ``rows`` is None when nothing changed."""

    start_snapshot: int | None
    end_snapshot: int | None
    rows: DataFrame | None
    # Of ``rows``, those that arrived (no delete, no update's old version): a reader's
    # increment. ``rows`` itself also names the partitions that deletes touched.
    arrived: DataFrame | None = None

    def summary(self) -> ChangelogSummary:
        return {
            "iceberg_start_snapshot": self.start_snapshot,
            "iceberg_end_snapshot": self.end_snapshot,
        }


@dataclass(frozen=True)
class IcebergChangelogSource:
    """``table`` read by changelog since the snapshot a reader's state says it consumed."""

    table: IcebergTarget

    def plan(self, spark: SparkSession, consumed_snapshot: int | None) -> ChangelogPlan:
        """The changes after ``consumed_snapshot`` up to the current snapshot (see module)."""
        current = iceberg_writer.current_snapshot(spark, self.table)
        end = current.snapshot_id if current else None
        start = consumed_snapshot
        rows = arrived = None
        if end is not None and start != end:
            if start is not None and iceberg_writer.is_ancestor(spark, self.table, end, start):
                changes = iceberg_writer.changelog_with_metadata(spark, self.table, start, end)
                rows, arrived = (
                    iceberg_writer.without_metadata(changes),
                    iceberg_writer.arrived_rows(changes),
                )
            else:
                rows = arrived = iceberg_writer.read_at(spark, self.table, end)
                if start is not None and _kept(spark, self.table, start):
                    undone = iceberg_writer.read_at(spark, self.table, start)
                    rows = _union(rows, undone)
                start = None
        return ChangelogPlan(start, end, rows, arrived)

    def read_at(self, spark: SparkSession, snapshot: int | None) -> DataFrame | None:
        """The whole table as of ``snapshot`` (None: no snapshot, nothing to read)."""
        return iceberg_writer.read_at(spark, self.table, snapshot)


def _kept(spark: SparkSession, table: IcebergTarget, snapshot_id: int) -> bool:
    """Whether the table still keeps ``snapshot_id`` (not expired), current lineage or not."""
    return any(
        snapshot.snapshot_id == snapshot_id for snapshot in iceberg_writer.snapshots(spark, table)
    )


def _union(rows: DataFrame | None, undone: DataFrame | None) -> DataFrame | None:
    if rows is None or undone is None:
        return rows if undone is None else undone
    return rows.unionByName(undone, allowMissingColumns=True)
