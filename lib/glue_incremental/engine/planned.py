"""What the engine asks of a source planned for one run (``Planned``), whatever it is: a
declared ``Dataset`` (``engine.datasets``), a custom ``JdbcTable``, or a source a job
planned itself and adopted (the load's ``load.planned.PlannedLoad``).

``OneFrameRead`` gives the answers of a slot that reads one frame of new rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from pyspark.sql import DataFrame

from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun


class Planned(Protocol):
    """A declared source as planned for one run, whatever it is (files, Iceberg, JDBC): its
    increment, what it touches, and the state its slot commits."""

    pending: list[Partition]

    @property
    def new_rows(self) -> DataFrame | None: ...
    @property
    def affected(self) -> list[Partition]: ...
    @property
    def records_read(self) -> int: ...
    @property
    def has_news(self) -> bool: ...
    @property
    def late_files(self) -> int: ...
    @property
    def high_mark_ms(self) -> int | None: ...
    @property
    def watermark_time(self) -> datetime | None:
        """How far the data read reaches (the metric ``WatermarkLag`` is measured from it)."""

    def details(self) -> dict[str, Any]: ...
    def figures(self, state: dict[str, Any]) -> dict[str, Any]:
        """The source's own counts for ``IncrementalRun.record``, given the state its slot
        commits (the load's ``records_new``, ``state_bytes``...); none by default."""

    def recheck_upstream(self, run: IncrementalRun) -> None: ...
    def state(self, published_at_ms: int, output_table: str | None) -> dict[str, Any]: ...
    def unchanged(self, state: dict[str, Any]) -> bool: ...
    def after_commit(self, run: IncrementalRun) -> None:
        """Once the block finished cleanly (committed or not): the source's own follow-up."""

    def release(self) -> None:
        """Free what the plan cached, once the run has ended (committed or not)."""


class Counted(Protocol):
    """A frame's counts (the load's ``cursors.BatchStats``)."""

    @property
    def rows(self) -> int: ...


class OneFrameRead:
    """The ``Planned`` answers of a slot that reads one frame of new rows (a load's batch, a
    JDBC table's increment): no affected partitions; read counts from the batch's stats."""

    rows: DataFrame | None
    stats: Counted | None

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
