"""A JDBC table as a planned source of any job: rows with ``watermark >= cursor - lookback``.

``JdbcTableOptions`` is all it reads (the load builds them from its arguments, a custom
``JdbcTable`` from its declaration); building options checks and builds nothing. The
predicate is pushed down (``sources/jdbc.py``); bounded batches end at the N-th watermark
(``engine/batch_plan.py``). Design: ``docs/jdbc-source.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from glue_incremental.args import Option
from glue_incremental.engine import batch_plan, cursors
from glue_incremental.engine.source_plan import SourcePlan, require_columns
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState
from glue_incremental.sources import credentials, jdbc
from glue_incremental.watermarks import DEFAULT_SLOT

__all__ = ["CREDENTIAL_OPTIONS", "JdbcTableOptions", "JdbcTableSource", "jdbc_source"]

# How a JDBC source logs in, declared once for the load and custom jobs alike.
CREDENTIAL_OPTIONS: tuple[Option, ...] = (
    Option(
        "source_secret_id",
        "JDBC credentials: a Secrets Manager secret (name or ARN) holding JSON `username`/`password`. "
        "The job role may read only that secret.",
    ),
    Option(
        "connection_name",
        "JDBC credentials from a Glue connection (`USERNAME`/`PASSWORD` or its `SECRET_ID`); "
        "list it in the job's `connections`.",
    ),
)


@dataclass(frozen=True)
class JdbcTableOptions:
    """What the JDBC table source reads: the table, how to log in, the watermark column and
    the columns the table must have (the load's from its config: ``jdbc_table_options``; a
    custom ``JdbcTable``'s from its declaration). Building one checks and builds nothing."""

    url: str
    table: str
    watermark_column: str
    primary_key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    secret_id: str | None = None
    connection_name: str | None = None
    user: str | None = None
    password: str | None = None
    num_partitions: int = 1
    partition_column: str | None = None
    lookback: timedelta = timedelta(0)
    null_watermarks: str = "load"


@dataclass(frozen=True)
class JdbcTableSource:
    """``--source jdbc:...`` and ``--source_table``: rows with ``watermark >= cursor - lookback``.

    ``slot``: the state slot holding the cursor (a custom job has one per source)."""

    options: JdbcTableOptions
    slot: str = DEFAULT_SLOT

    def plan(
        self, run: IncrementalRun, limits: batch_plan.BatchLimits = batch_plan.UNBOUNDED
    ) -> SourcePlan:
        config = self.options
        source = jdbc_source(config)
        require_columns(
            jdbc.column_names(run.spark, source), config, "source table " + str(config.table)
        )
        previous = LoadState.from_state(run.previous(self.slot))
        cursor = previous.cursor if previous else None
        lower = cursors.minus(cursor, config.lookback) if cursor is not None else None
        upper_state = LoadState.from_state(run.upper_bound(self.slot))
        # The jdbc reader's upper bound is exclusive; the replayed run read its cursor value.
        upper = cursors.just_after(upper_state.cursor) if upper_state else None
        batch_end = None
        upper_inclusive = False
        if limits.max_rows is not None and upper is None:
            batch_end = jdbc.first_value(
                run.spark,
                source,
                batch_plan.batch_end_query(
                    source,
                    watermark_column=config.watermark_column,
                    after=cursor,
                    max_rows=limits.max_rows,
                ),
            )
            # Up to and including the batch's last watermark value: no ``just_after``, so
            # any watermark type the database orders (numeric, float, text) can be batched.
            upper, upper_inclusive = batch_end, batch_end is not None
        more = batch_end is not None and _has_rows_after(run, source, config, batch_end)
        bounds: dict[str, Any] = {
            "watermark_column": config.watermark_column,
            "lower_bound": lower,
            "upper_bound": upper,
            "include_null_watermarks": config.null_watermarks == "load",
            "upper_inclusive": upper_inclusive,
        }
        query = jdbc.incremental_query(source, **bounds)
        return SourcePlan(
            summary={
                "source": "jdbc",
                "table": config.table,
                "lower_bound": lower,
                "query": query,
                **_row_batches_preview(run, source, config, limits, cursor),
            },
            read=lambda: jdbc.read_incremental(run.spark, source, **bounds),
            carried=LoadState(cursor=cursor, published_at_ms=0),
            details={"query": query},
            rereads=True,
            reread_from=lower,
            more=more,
        )


def _has_rows_after(
    run: IncrementalRun, source: jdbc.JdbcSource, config: JdbcTableOptions, batch_end: Any
) -> bool:
    query = batch_plan.rows_after_query(
        source, watermark_column=config.watermark_column, after=batch_end
    )
    return jdbc.first_value(run.spark, source, query) is not None


def _row_batches_preview(
    run: IncrementalRun,
    source: jdbc.JdbcSource,
    config: JdbcTableOptions,
    limits: batch_plan.BatchLimits,
    cursor: Any,
) -> dict[str, Any]:
    """A dry run's ``batches``: the watermark each row batch of this run would end at."""
    if not run.dry_run or limits.max_rows is None:
        return {}
    max_rows = limits.max_rows

    def next_end(after: Any) -> Any:
        query = batch_plan.batch_end_query(
            source, watermark_column=config.watermark_column, after=after, max_rows=max_rows
        )
        return jdbc.first_value(run.spark, source, query)

    most = limits.max_batches or batch_plan.PREVIEW_BATCHES
    ends = batch_plan.row_batch_ends(next_end, cursor, most)
    listed: list[dict[str, Any]] = [{"ends_at_watermark": end} for end in ends]
    if len(ends) < most:
        listed.append({"ends_at_watermark": None})  # the rest, up to the newest row
    return {"batches": listed}


def jdbc_source(options: JdbcTableOptions) -> jdbc.JdbcSource:
    """The table and its resolved credentials (a custom job's JDBC tables read it too)."""
    found = credentials.resolve(
        secret_id=options.secret_id,
        connection_name=options.connection_name,
        user=options.user,
        password=options.password,
    )
    return jdbc.JdbcSource(
        url=options.url,
        table=options.table,
        user=found.user,
        password=found.password,
        num_partitions=options.num_partitions,
        partition_column=options.partition_column,
    )
