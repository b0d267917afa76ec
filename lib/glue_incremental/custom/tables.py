"""A declared JDBC table planned for one run: the generic load's ``JdbcTableSource`` reading
the table's slot, its rows since the slot's cursor, and the cursor it leaves.

First run (or a reset, or bookmarks disabled): the whole table. The next cursor is the
greatest watermark read, not after the run's start + the load's future skew
(``load.cursors.batch_stats``); it never moves back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame

from glue_incremental.custom.declarations import JdbcTable
from glue_incremental.load import cursors
from glue_incremental.load.sources import JdbcTableSource, SourcePlan
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState


class OneFrameRead:
    """The ``Planned`` answers of a slot that reads one frame of new rows (a load's batch, a
    JDBC table's increment): no affected partitions; read counts from the batch's stats."""

    rows: DataFrame | None
    stats: cursors.BatchStats | None

    @property
    def new_rows(self) -> DataFrame | None:
        return self.rows

    @property
    def affected(self) -> list[Partition]:
        return []

    @property
    def records_read(self) -> int:
        return self.stats.rows if self.stats else 0

    @property
    def has_news(self) -> bool:
        return self.records_read > 0


@dataclass
class PlannedTable(OneFrameRead):
    """One JDBC table as planned for this run (the ``Planned`` interface of ``sides``)."""

    name: str
    table: JdbcTable
    plan: SourcePlan
    previous: dict[str, Any] | None
    rows: DataFrame | None = None
    stats: cursors.BatchStats | None = None
    pending: list[Partition] = field(default_factory=list)

    @property
    def late_files(self) -> int:
        return 0

    @property
    def high_mark_ms(self) -> int | None:
        when = cursors.as_time(self.cursor)
        return int(when.timestamp() * 1000) if when else None

    @property
    def watermark_time(self) -> datetime | None:
        mark = self.high_mark_ms  # whole milliseconds, as the join's sides
        return None if mark is None else datetime.fromtimestamp(mark / 1000, UTC)

    @property
    def cursor(self) -> Any:
        found = self.stats.max_cursor if self.stats else None
        return cursors.max_cursor(self.plan.carried.cursor, found)

    def details(self) -> dict[str, Any]:
        return {"records_read": self.records_read, **self.plan.details}

    def figures(self, state: dict[str, Any]) -> dict[str, Any]:
        return {}

    def recheck_upstream(self, run: IncrementalRun) -> None:
        return None

    def after_commit(self, run: IncrementalRun) -> None:
        return None

    def release(self) -> None:
        if self.rows is not None:
            self.rows.unpersist()

    def state(self, published_at_ms: int, output_table: str | None) -> dict[str, Any]:
        carried = replace(self.plan.carried, iceberg_table=output_table)
        return dict(
            replace(carried, cursor=self.cursor, published_at_ms=published_at_ms).to_state()
        )

    def unchanged(self, state: dict[str, Any]) -> bool:
        """Nothing read and the cursor where it was: no commit needed for this slot."""
        before = LoadState.from_state(self.previous)
        return self.previous is not None and before is not None and before.cursor == state["cursor"]


def plan_table(run: IncrementalRun, name: str, table: JdbcTable) -> PlannedTable:
    """Plan and read ``table`` against its slot ``name``; count the rows and find the cursor."""
    config = table.load_config
    plan = JdbcTableSource(config, slot=name).plan(run)
    planned = PlannedTable(name, table, plan, run.previous(name))
    rows = plan.read()
    if rows is None:
        return planned
    rows = rows.persist()
    limit = datetime.fromtimestamp(run.started_at, UTC) + config.max_future_skew
    planned.rows = rows
    planned.stats = cursors.batch_stats(rows, config.watermark_column, limit)
    return planned
