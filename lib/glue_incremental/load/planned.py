"""The generic load's source as a planned source of ``CustomJob`` (``engine.planned.Planned``): one
``engine.source_plan.SourcePlan`` (a run, or one batch of it) and the ``LoadState`` its slot
commits.

The slot commits exactly the load's state: the carried state (file bookmark, layout,
reconcile count...) with the greatest cursor read and the publish time. A run that read
nothing and carries the stored state unchanged (apart from times) needs no commit. The
source is released (its notifications visible again) unless the block finished cleanly;
then it follows up after the commit (``SourcePlan.after_commit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame

from glue_incremental.engine import cursors
from glue_incremental.engine.planned import OneFrameRead
from glue_incremental.engine.source_plan import SourcePlan
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState, stored_without_times
from glue_incremental.watermarks.digest import state_bytes


@dataclass
class PlannedLoad(OneFrameRead):
    """One plan of the load's source; the load sets ``carried``, ``rows`` and ``stats`` as
    it reads, and ``records_new`` when the source re-reads versions already loaded."""

    plan: SourcePlan
    previous: dict[str, Any] | None
    carried: LoadState
    rows: DataFrame | None = None
    stats: cursors.BatchStats | None = None
    records_new: int | None = None
    pending: list[Partition] = field(default_factory=list)
    _followed_up: bool = field(default=False, init=False)

    @property
    def late_files(self) -> int:
        return self.plan.late_files

    @property
    def cursor(self) -> Any:
        """The greatest cursor read (``engine.cursors.batch_stats``: not past the allowed skew)."""
        found = self.stats.max_cursor if self.stats else None
        return cursors.max_cursor(self.carried.cursor, found)

    @property
    def watermark_time(self) -> datetime | None:
        """The cursor as a time, else the newest file's time (a file source)."""
        time = cursors.as_time(self.cursor)
        if time is None and self.plan.file_high_mark_ms:
            time = datetime.fromtimestamp(self.plan.file_high_mark_ms / 1000, UTC)
        return time

    @property
    def high_mark_ms(self) -> int | None:
        time = self.watermark_time
        return int(time.timestamp() * 1000) if time else None

    def details(self) -> dict[str, Any]:
        return dict(self.plan.details)

    def figures(self, state: dict[str, Any]) -> dict[str, Any]:
        stats = self.stats
        return {
            "records_new": self.records_new,
            "null_watermark_rows": stats.nulls if stats else 0,
            "future_watermark_rows": stats.future if stats else 0,
            "state_bytes": state_bytes(state),
        }

    def recheck_upstream(self, run: IncrementalRun) -> None:
        return None

    def state(self, published_at_ms: int, output_table: str | None) -> dict[str, Any]:
        """The carried state names the output's table itself (``output_table`` is the same)."""
        return dict(
            replace(self.carried, cursor=self.cursor, published_at_ms=published_at_ms).to_state()
        )

    def unchanged(self, state: dict[str, Any]) -> bool:
        return self.records_read == 0 and self.carried.without_times() == stored_without_times(
            self.previous
        )

    def after_commit(self, run: IncrementalRun) -> None:
        self._followed_up = True
        self.plan.after_commit(run)

    def release(self) -> None:
        if self.rows is not None:
            self.rows.unpersist()
        if not self._followed_up:
            self.plan.release()  # a run that will not commit leaves the source as it found it
