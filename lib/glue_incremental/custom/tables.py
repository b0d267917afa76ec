"""A custom job's JDBC tables: ``JdbcTable`` (read incrementally by a watermark column, one
slot) and ``JdbcReference`` (read whole), and a ``JdbcTable`` planned for one run: the
generic load's ``JdbcTableSource`` (``engine/jdbc_table.py``) reading the table's slot, its rows since the slot's
cursor, and the cursor it leaves.

First run (or a reset, or bookmarks disabled): the whole table. The next cursor is the
greatest watermark read, not after the run's start + the load's future skew
(``engine.cursors.batch_stats``); it never moves back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame

from glue_incremental.args import ArgumentError, parse_duration
from glue_incremental.engine import cursors
from glue_incremental.engine.cursors import DEFAULT_MAX_FUTURE_SKEW
from glue_incremental.engine.errors import DeclarationError
from glue_incremental.engine.jdbc_table import JdbcTableOptions, JdbcTableSource, jdbc_source
from glue_incremental.engine.planned import OneFrameRead
from glue_incremental.engine.source_plan import SourcePlan
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

    def options(
        self, watermark_column: str = "", primary_key: tuple[str, ...] = (), **more: Any
    ) -> JdbcTableOptions:
        """The JDBC source's options for this table, checked now (before the lease): no
        password in the URL, one credential source, and the URL, table name and parallel-read
        options as the load checks them (``sources.jdbc.JdbcSource``)."""
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
            jdbc.JdbcSource(
                self.url,
                self.table,
                num_partitions=self.num_partitions,
                partition_column=self.partition_column,
            )
        except (ArgumentError, ValueError, TypeError) as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise DeclarationError(self.table, f"JDBC table {self.table}: {first}") from None
        return JdbcTableOptions(
            url=self.url,
            table=self.table,
            watermark_column=watermark_column,
            primary_key=primary_key,
            secret_id=self.secret_id,
            connection_name=self.connection_name,
            user=self.user,
            num_partitions=self.num_partitions,
            partition_column=self.partition_column,
            **more,
        )


@dataclass(frozen=True)
class JdbcTable(JdbcConnection):
    """A relational table read incrementally over JDBC by ``watermark_column``, exactly as the
    generic load reads it (``engine.jdbc_table.JdbcTableSource``): the rows with
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
        self.source_options  # noqa: B018 (the connection's options checked first)
        if not self.primary_key:
            raise DeclarationError(
                self.table, f"JDBC table {self.table}: primary_key needs at least one column"
            )
        if self.lookback < timedelta(0):
            raise DeclarationError(self.table, f"JDBC table {self.table}: lookback is negative")

    @property
    def source_options(self) -> JdbcTableOptions:
        """What the load's ``JdbcTableSource`` reads for this table."""
        return self.options(self.watermark_column, tuple(self.primary_key), lookback=self.lookback)

    def plan(self, run: IncrementalRun, name: str) -> PlannedTable:
        """This run's read of the table against its slot ``name``."""
        return plan_table(run, name, self)


@dataclass(frozen=True)
class JdbcReference(JdbcConnection):
    """A small relational table read whole on every run (no state)."""

    def __post_init__(self) -> None:
        self.options()  # the URL, table and credential options checked now

    def read(self, spark: Any) -> Any:
        """The whole table, as of now; credentials resolved at the read."""
        return jdbc.read_table(spark, jdbc_source(self.options()))


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
    options = table.source_options
    plan = JdbcTableSource(options, slot=name).plan(run)
    planned = PlannedTable(name, table, plan, run.previous(name))
    rows = plan.read()
    if rows is None:
        return planned
    rows = rows.persist()
    limit = datetime.fromtimestamp(run.started_at, UTC) + parse_duration(
        "max_future_skew", DEFAULT_MAX_FUTURE_SKEW
    )
    planned.rows = rows
    planned.stats = cursors.batch_stats(rows, options.watermark_column, limit)
    return planned
