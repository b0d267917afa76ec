"""A custom job's JDBC tables: ``JdbcTable`` (read incrementally by a watermark column, one
slot) and ``JdbcReference`` (read whole), and a ``JdbcTable`` planned for one run: the
generic load's ``JdbcTableSource`` reading the table's slot, its rows since the slot's
cursor, and the cursor it leaves.

First run (or a reset, or bookmarks disabled): the whole table. The next cursor is the
greatest watermark read, not after the run's start + the load's future skew
(``load.cursors.batch_stats``); it never moves back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame

from glue_incremental.args import ArgumentError
from glue_incremental.engine.errors import DeclarationError
from glue_incremental.engine.planned import OneFrameRead
from glue_incremental.load import cursors
from glue_incremental.load.config import LoadConfig
from glue_incremental.load.sources import JdbcTableSource, SourcePlan, jdbc_source
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState
from glue_incremental.sources import jdbc


@dataclass(frozen=True)
class JdbcConnection:
    """Where a JDBC table is and how to log in, as the generic load takes it: a URL without a
    password, a table ``[schema.]name``, and credentials from a Secrets Manager secret
    (``secret_id``, JSON ``username``/``password``) or a Glue connection, never in plain text.
    """

    url: str
    table: str
    secret_id: str | None = None
    connection_name: str | None = None
    user: str | None = None
    num_partitions: int = 1
    partition_column: str | None = None

    def config(
        self, watermark_column: str, primary_key: tuple[str, ...], **more: Any
    ) -> LoadConfig:
        """The generic load's options for this table (its checks run now, before the lease).

        The load's target options are required there but never used by a source: the
        placeholder path is never built, read or written."""
        if jdbc.redact_url(self.url) != self.url:
            raise DeclarationError(
                self.table,
                f"JDBC table {self.table}: the url carries a password ({jdbc.redact_url(self.url)}); "
                "give secret_id (Secrets Manager) or connection_name (Glue connection)",
            )
        if self.secret_id and self.connection_name:
            raise DeclarationError(
                self.table,
                f"JDBC table {self.table}: give secret_id or connection_name, not both",
            )
        try:
            # The URL, the table name and the parallel-read options, as the load checks them.
            jdbc.JdbcSource(
                self.url,
                self.table,
                num_partitions=self.num_partitions,
                partition_column=self.partition_column,
            )
            return LoadConfig(
                source=self.url,
                source_table=self.table,
                source_secret_id=self.secret_id,
                connection_name=self.connection_name,
                source_user=self.user,
                jdbc_num_partitions=self.num_partitions,
                jdbc_partition_column=self.partition_column,
                watermark_column=watermark_column,
                primary_key=primary_key,
                target_path="unused://custom-job-source",
                **more,
            )
        except (ArgumentError, ValueError, TypeError) as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise DeclarationError(self.table, f"JDBC table {self.table}: {first}") from None


@dataclass(frozen=True)
class JdbcTable(JdbcConnection):
    """A relational table read incrementally over JDBC by ``watermark_column``, exactly as the
    generic load reads it (``load.sources.JdbcTableSource``): the rows with
    ``watermark >= cursor - lookback`` (first run: all of them; rows with a null watermark
    every run). Rows at the cursor are read again: write by
    ``primary_key``. Its slot holds the cursor, the greatest watermark read."""

    watermark_column: str = ""
    primary_key: tuple[str, ...] = ()
    lookback: timedelta = timedelta(0)

    def __post_init__(self) -> None:
        if isinstance(self.primary_key, str):
            object.__setattr__(self, "primary_key", (self.primary_key,))
        if not self.watermark_column:
            raise DeclarationError(
                self.table, f"JDBC table {self.table}: watermark_column names the column to read by"
            )
        self.load_config  # noqa: B018 (every option checked now)

    @property
    def load_config(self) -> LoadConfig:
        return self.config(self.watermark_column, tuple(self.primary_key), lookback=self.lookback)

    def plan(self, run: IncrementalRun, name: str) -> PlannedTable:
        """This run's read of the table against its slot ``name``."""
        return plan_table(run, name, self)


@dataclass(frozen=True)
class JdbcReference(JdbcConnection):
    """A small relational table read whole on every run (no state)."""

    def __post_init__(self) -> None:
        self.config("unused", ("unused",))  # the URL, table and credential options checked now

    def read(self, spark: Any) -> Any:
        """The whole table, as of now; credentials resolved at the read."""
        return jdbc.read_table(spark, jdbc_source(self.config("unused", ("unused",))))


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
