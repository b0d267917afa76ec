"""The incremental load job: a JDBC table or a file dataset into a Parquet or Iceberg target.

First run (no state, a reset, or ``job-bookmark-disable``): everything is read
and the target is replaced as a whole. Later runs read only what changed: JDBC
rows with ``watermark_column >= previous - lookback`` (inclusive, pushed down;
rows read again merge by key), or files through the file bookmark
(``sources.files``, ``sources.discovery`` on S3).

Rows merge into the target by ``--primary_key``, keeping the greatest
``--watermark_column``; only partitions that receive rows are rewritten, and a
key whose partition changed leaves its old one (``key_index``). Null
watermarks are counted and, by ``--null_watermarks``, read on every run
(``load``) or stop the run before anything is written (``fail``).
Options: ``load_config``; the JDBC side: ``docs/jdbc-source.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType, _parse_datatype_string

from glue_incremental import credentials, cursors, targets, writer
from glue_incremental.args import ArgumentError
from glue_incremental.digest import state_bytes
from glue_incremental.load_config import (  # noqa: F401 (re-exported: the job's public names)
    DEFAULT_FILE_BAND,
    LOAD_OPTIONS,
    NULL_POLICIES,
    OPTIONAL_ARGS,
    PARTITION_MOVES,
    REFUSED_ARGS,
    REQUIRED_ARGS,
    SOURCE_FORMATS,
    TARGET_FORMATS,
    LoadConfig,
    SchemaError,
)
from glue_incremental.runtime import GlueJob, IncrementalRun
from glue_incremental.sources import bulk, discovery, files, jdbc
from glue_incremental.state import LoadState, LoadStateDict, stored_without_times
from glue_incremental.targets import Published, Target
from glue_incremental.watermarks import DEFAULT_SLOT

# Delivery order of file rows, for ties (``writer.merge_latest``); never written.
FILE_MODIFIED = "__glue_incremental_file_modified"
FILE_NAME = "__glue_incremental_file_name"
FILE_DELIVERY = (FILE_MODIFIED, FILE_NAME)


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """Entry point of ``glue_scripts/incremental_load.py``; returns the run summary."""
    job = GlueJob.from_argv(
        argv,
        required=REQUIRED_ARGS,
        optional={**OPTIONAL_ARGS, **dict.fromkeys(REFUSED_ARGS)},
        spark=spark,
    )
    config = LoadConfig.from_args(job.args)
    with job.run() as run:
        run_load(run, config)
    return run.summary


def run_load(run: IncrementalRun, config: LoadConfig) -> None:
    """Read what is new since the state, merge it into the target, then commit.

    The target recovers first, before the source or the target is read: a
    Parquet publish that a crashed run left half done is finished or undone; an
    Iceberg snapshot whose DynamoDB commit a crash prevented rolls the state forward.
    """
    target = targets.build(config.target_options)
    target.recover(run)
    if config.is_jdbc:
        _run_jdbc(run, config, target)
    else:
        _run_files(run, config, target)


# -- JDBC -------------------------------------------------------------------------------------


def _jdbc_source(config: LoadConfig):
    found = credentials.resolve(
        secret_id=config.source_secret_id,
        connection_name=config.connection_name,
        user=config.source_user,
        password=config.source_password,
    )
    return jdbc.JdbcSource(
        url=config.source,
        table=str(config.source_table),
        user=found.user,
        password=found.password,
        num_partitions=config.jdbc_num_partitions,
        partition_column=config.jdbc_partition_column,
    )


def _run_jdbc(run: IncrementalRun, config: LoadConfig, target: Target) -> None:
    source = _jdbc_source(config)
    _require_columns(
        jdbc.column_names(run.spark, source), config, "source table " + str(config.source_table)
    )
    previous = LoadState.from_state(run.previous())
    cursor = previous.cursor if previous else None
    lower = cursors.minus(cursor, config.lookback) if cursor is not None else None
    upper_state = LoadState.from_state(run.upper_bound())
    # The jdbc reader's upper bound is exclusive; the replayed run read its cursor value.
    upper = cursors.just_after(upper_state.cursor) if upper_state else None
    include_nulls = config.null_watermarks == "load"
    query = jdbc.incremental_query(
        source,
        watermark_column=config.watermark_column,
        lower_bound=lower,
        upper_bound=upper,
        include_null_watermarks=include_nulls,
    )
    if run.dry_run:
        _print_plan(
            run,
            {"source": "jdbc", "table": config.source_table, "lower_bound": lower, "query": query},
        )
        return
    rows = jdbc.read_incremental(
        run.spark,
        source,
        watermark_column=config.watermark_column,
        lower_bound=lower,
        upper_bound=upper,
        include_null_watermarks=include_nulls,
    )
    _load_rows(
        run,
        config,
        target,
        rows,
        carried=LoadState(cursor=cursor, published_at_ms=0),
        details={"query": query},
        reread_from=lower,
    )


# -- files ------------------------------------------------------------------------------------


def _run_files(run: IncrementalRun, config: LoadConfig, target: Target) -> None:
    declared = _declared_schema(config)
    previous = LoadState.from_state(run.previous())
    bookmark = _file_bookmark(previous)
    upper_state = LoadState.from_state(run.upper_bound())
    upper_ms = _file_bookmark(upper_state).high_mark_ms if upper_state else None
    band = config.lookback if config.lookback > timedelta(0) else DEFAULT_FILE_BAND
    found = discovery.plan_discovered_read(
        run.spark,
        config.source,
        bookmark,
        previous.discovery
        if previous and previous.discovery is not None
        else discovery.DiscoveryState(),
        config.file_discovery,
        run_start_ms=int(run.started_at * 1000),
        band_seconds=int(band.total_seconds()),
        upper_bound_ms=upper_ms,
        force_full_listing=run.starts_from_an_earlier_state(),
    )
    plan = found.plan
    if run.dry_run:
        _print_plan(run, {"source": "files", **found.summary()})
        return
    rows = bulk.read_listed_files(
        run.spark,
        plan.files,
        root_uri=config.source,
        source_format=config.source_format,
        schema=declared,
    )
    if rows is not None:
        rows = rows.select(
            "*",
            F.col("_metadata.file_modification_time").alias(FILE_MODIFIED),
            F.col("_metadata.file_name").alias(FILE_NAME),
        )
    _load_rows(
        run,
        config,
        target,
        rows,
        delivery=FILE_DELIVERY,
        carried=LoadState(
            cursor=previous.cursor if previous else None,
            published_at_ms=0,
            files=plan.next_bookmark,
            discovery=found.next_state,
        ),
        details={"files_read": len(plan.files), "file_plan": found.summary()},
        late_files=plan.late_file_count,
        file_high_mark_ms=plan.next_bookmark.high_mark_ms,
    )
    if found.receipts and run.bookmark.commits:
        # Only now: the state that makes these messages no-ops is committed.
        discovery.delete_notifications(config.file_discovery, found.receipts)


def _file_bookmark(state: LoadState | None) -> files.FileBookmark:
    """The state's file bookmark; the initial one without a state or before any file."""
    if state is None or state.files is None:
        return files.FileBookmark.initial()
    return state.files


def _declared_schema(config: LoadConfig) -> StructType | None:
    """``--source_schema`` parsed (None when not given); bad DDL stops the run before any read."""
    if config.source_schema is None:
        return None
    try:
        schema = _parse_datatype_string(config.source_schema)
    except Exception as error:  # Spark's ParseException: its first line says where
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise ArgumentError(
            "source_schema", f"--source_schema is not a column list in Spark DDL: {first_line}"
        ) from None
    if not isinstance(schema, StructType):
        raise ArgumentError(
            "source_schema",
            f"--source_schema {config.source_schema!r} is one type, not columns "
            "(`name TYPE, name TYPE`)",
        )
    return schema


# -- shared -----------------------------------------------------------------------------------


def _load_rows(
    run: IncrementalRun,
    config: LoadConfig,
    target: Target,
    rows: DataFrame | None,
    *,
    delivery: Sequence[str] = (),
    carried: LoadState,
    details: Mapping[str, object],
    late_files: int = 0,
    file_high_mark_ms: int | None = None,
    reread_from: Any = None,
) -> None:
    """Merge ``rows`` into the target, then commit the next state.

    ``reread_from`` (JDBC) is the read's lower bound: rows at or after it may
    be re-reads of versions already loaded, so only versions the target does
    not hold count as new (``RecordsNew``). File sources read only files not
    loaded before, so every row they read is new. ``carried`` is the next state but for
    the cursor (still the previous one) and the publish time.
    """
    # The state names the output's table (if any), so a rewind can roll it back with it.
    carried = replace(carried, iceberg_table=target.state_table())
    previous_cursor = carried.cursor
    target_schema = target.schema(run)
    target.mark_start(run)
    records_read = nulls = future = 0
    records_new: int | None = None
    published: Published | None = None
    new_cursor = previous_cursor
    cursor_limit = datetime.fromtimestamp(run.started_at, UTC) + config.max_future_skew
    if rows is not None:
        source_rows = rows.drop(*delivery)
        _require_columns(source_rows.columns, config, "source " + config.source)
        if target_schema is not None:
            _require_same_shape(source_rows, target_schema, config)
        rows = rows.persist()
        try:
            stats = _batch_stats(rows, config, cursor_limit)
            records_read, nulls, future = stats.rows, stats.nulls, stats.future
            if nulls and config.null_watermarks == "fail":
                raise SchemaError(
                    config.watermark_column,
                    f"{nulls} source rows have a null {config.watermark_column!r}; "
                    "nothing was written (--null_watermarks fail)",
                )
            new_cursor = cursors.max_cursor(previous_cursor, stats.max_cursor)
            if config.is_jdbc and records_read and target_schema is not None:
                records_new = _count_new_versions(
                    rows.drop(*delivery), config, reread_from, target.read_as_of_start(run)
                )
            state = _next_state(new_cursor, run, carried)
            run.store.check_fits(str(run.state_name), run.run_id, state)
            if records_read:
                published = target.upsert(
                    run,
                    rows,
                    _upsert_spec(run, config, delivery),
                    lambda: {DEFAULT_SLOT: _next_state(new_cursor, run, carried)},
                )
        finally:
            rows.unpersist()
    committed = (
        published.states[DEFAULT_SLOT] if published else _next_state(new_cursor, run, carried)
    )
    changed = records_read > 0 or carried.without_times() != stored_without_times(run.previous())
    if changed:
        run.commit({DEFAULT_SLOT: committed})
    target.after_commit(run, {DEFAULT_SLOT: committed})
    result = published.result if published else writer.WriteResult(0)
    watermark_time = cursors.as_time(new_cursor)
    if watermark_time is None and file_high_mark_ms:
        watermark_time = datetime.fromtimestamp(file_high_mark_ms / 1000, UTC)
    run.record(
        records_read=records_read,
        records_new=records_new,
        records_written=result.records_written,
        watermark_time=watermark_time,
        late_files_skipped=late_files,
        null_watermark_rows=nulls,
        future_watermark_rows=future,
        state_bytes=state_bytes(committed),
        partitions_written=result.partitions_written,
        partitions_removed=result.partitions_removed,
        **details,
    )


def _batch_stats(rows: DataFrame, config: LoadConfig, limit: datetime) -> cursors.BatchStats:
    """The batch's counts (its first action: a declared schema's misfit surfaces here)."""
    try:
        return cursors.batch_stats(rows, config.watermark_column, limit)
    except Exception as error:
        if config.source_schema is None or "FAILFAST" not in str(error):
            raise
        raise SchemaError(
            "source_schema",
            f"a source value does not fit --source_schema ({config.source_schema}); "
            "nothing was written",
        ) from error


def _next_state(cursor: Any, run: IncrementalRun, carried: LoadState) -> LoadStateDict:
    return replace(carried, cursor=cursor, published_at_ms=int(run.clock() * 1000)).to_state()


def _count_new_versions(
    rows: DataFrame, config: LoadConfig, reread_from: Any, target: DataFrame | None
) -> int:
    """Rows the target does not hold yet, value for value.

    A whole row is compared, not only (primary key, watermark): a row changed
    in place without its watermark moving (a date or second-precision column)
    is new. Compared as strings (the target reads partition columns as
    strings) and null-safe, so a re-read null-watermark row is not new either.
    Only target rows at or after ``reread_from`` can match a row of this read.
    ``target`` holds the stored versions as of the run's start (``Target.read_as_of_start``).
    """
    if target is None:
        return rows.count()
    version = list(rows.columns)
    if reread_from is not None:
        watermark = F.col(f"`{config.watermark_column}`")
        target = target.where(
            (
                watermark
                >= F.lit(_bound_text(reread_from)).cast(
                    rows.schema[config.watermark_column].dataType
                )
            )
            | watermark.isNull()
        )

    def as_text(frame: DataFrame) -> DataFrame:
        return frame.select(
            *(F.col(f"`{name}`").cast("string").alias(f"v{i}") for i, name in enumerate(version))
        )

    loaded = as_text(target).distinct()
    batch = as_text(rows)
    condition = [batch[f"v{i}"].eqNullSafe(loaded[f"v{i}"]) for i in range(len(version))]
    return batch.join(loaded, condition, "left_anti").count()


def _bound_text(value: Any) -> str:
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo else value
        return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    return str(value)


def _upsert_spec(
    run: IncrementalRun, config: LoadConfig, delivery: Sequence[str]
) -> targets.UpsertSpec:
    """First run, reset or bookmarks disabled: the rows replace the whole target."""
    return targets.UpsertSpec(
        primary_key=config.primary_key,
        order_by=config.watermark_column,
        replace_all=not run.bookmark.reads_state or run.previous() is None,
        partition_moves=config.partition_moves,
        delivery=delivery,
    )


def _require_columns(columns: Sequence[str], config: LoadConfig, where: str) -> None:
    present = set(columns)
    for role, names in (
        ("--watermark_column", (config.watermark_column,)),
        ("--primary_key", config.primary_key),
        ("--partition_by", config.partition_by),
    ):
        for name in names:
            if name not in present:
                raise SchemaError(
                    name,
                    f"{role} column {name!r} is not in {where} (columns: {', '.join(sorted(present))})",
                )


def _require_same_shape(rows: DataFrame, target_schema: Any, config: LoadConfig) -> None:
    source_types = {field.name: field.dataType for field in rows.schema.fields}
    target_types = {field.name: field.dataType for field in target_schema.fields}
    for name in sorted(set(source_types) | set(target_types)):
        if name not in target_types:
            raise SchemaError(
                name,
                f"source schema changed: column {name!r} is new (not in the target); nothing was written",
            )
        if name not in source_types:
            raise SchemaError(
                name,
                f"source schema changed: column {name!r} is gone from the source; nothing was written",
            )
        if name not in config.partition_by and source_types[name] != target_types[name]:
            raise SchemaError(
                name,
                f"source schema changed: column {name!r} is {source_types[name].simpleString()} "
                f"in the source but {target_types[name].simpleString()} in the target; nothing was written",
            )


def _print_plan(run: IncrementalRun, plan: Mapping[str, object]) -> None:
    run.record(records_read=0, records_written=0, plan=plan)
    print(
        json.dumps(
            {"event": "dry_run", "job_name": run.job_name, **plan}, default=str, sort_keys=True
        )
    )
