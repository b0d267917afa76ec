"""The incremental load job: a JDBC table or a file dataset into a partitioned Parquet target.

First run (no state, a reset, or ``job-bookmark-disable``): everything is read
and the target is replaced as a whole. Later runs read only what changed:

- JDBC: rows with ``watermark_column >= previous - lookback``, the predicate
  pushed down to the database. The bound is *inclusive*: rows sharing the
  boundary value that arrived after the last run are read, and the ones read
  again merge by primary key, so they are never lost nor duplicated, and the
  state stays one value.
- Files: Glue-style file bookmarks (``sources.files``): files modified since the
  high mark, plus late files inside the band (``--lookback``, default 900 s).

Rows merge into the target by ``--primary_key`` keeping the latest version
(greatest ``--watermark_column``); only partitions that receive rows are
rewritten. When a row's partition value changes, the partition holding its old
version is rewritten too, so the key ends up in exactly one place.

Rows whose watermark is null are counted (``NullWatermarkRows``) and handled
by ``--null_watermarks``: ``load`` (default) reads them on every run, so they
are never dropped and their latest version always wins; ``fail`` stops the run
before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, TimestampNTZType, TimestampType

from glue_incremental import writer
from glue_incremental.args import ArgumentError, parse_duration, parse_list
from glue_incremental.runtime import GlueJob, IncrementalRun

SourceFormat = Literal["parquet", "json", "csv"]
NullWatermarkPolicy = Literal["load", "fail"]
SOURCE_FORMATS: tuple[SourceFormat, ...] = ("parquet", "json", "csv")
NULL_POLICIES: tuple[NullWatermarkPolicy, ...] = ("load", "fail")
PARTITION_MOVES: tuple[writer.PartitionMoves, ...] = ("detect", "ignore")
DEFAULT_FILE_BAND = timedelta(seconds=900)

REQUIRED_ARGS = ("source", "watermark_column", "primary_key", "target_path")
OPTIONAL_ARGS: dict[str, str | None] = {
    "source_table": None,
    "source_format": "parquet",
    "source_user": None,
    "source_password": None,
    "partition_by": "",
    "lookback": "0",
    "null_watermarks": "load",
    "jdbc_num_partitions": "1",
    "jdbc_partition_column": None,
    "partition_moves": "detect",
}


class SchemaError(ValueError):
    """The source does not have the columns the job needs, or changed shape."""

    def __init__(self, column: str, message: str) -> None:
        self.column = column
        super().__init__(message)


@dataclass(frozen=True)
class LoadConfig:
    source: str
    watermark_column: str
    primary_key: tuple[str, ...]
    target_path: str
    partition_by: tuple[str, ...] = ()
    source_table: str | None = None
    source_format: SourceFormat = "parquet"
    source_user: str | None = None
    source_password: str | None = None
    lookback: timedelta = timedelta(0)
    null_watermarks: NullWatermarkPolicy = "load"
    jdbc_num_partitions: int = 1
    jdbc_partition_column: str | None = None
    partition_moves: writer.PartitionMoves = "detect"

    def __post_init__(self) -> None:
        if self.is_jdbc and not self.source_table:
            raise ArgumentError(
                "source_table", "--source is a JDBC URL: --source_table is required"
            )
        if not self.is_jdbc and self.source_format not in SOURCE_FORMATS:
            raise ArgumentError(
                "source_format",
                f"--source_format {self.source_format!r} is not one of {', '.join(SOURCE_FORMATS)}",
            )
        if self.null_watermarks not in NULL_POLICIES:
            raise ArgumentError(
                "null_watermarks",
                f"--null_watermarks {self.null_watermarks!r} is not one of {', '.join(NULL_POLICIES)}",
            )
        if self.partition_moves not in PARTITION_MOVES:
            raise ArgumentError(
                "partition_moves",
                f"--partition_moves {self.partition_moves!r} is not one of {', '.join(PARTITION_MOVES)}",
            )
        if not self.primary_key:
            raise ArgumentError("primary_key", "--primary_key needs at least one column")
        overlap = set(self.partition_by) & {self.watermark_column}
        if overlap:
            raise ArgumentError(
                "partition_by", f"--partition_by cannot include the watermark column {overlap}"
            )

    @property
    def is_jdbc(self) -> bool:
        return self.source.startswith("jdbc:")

    @classmethod
    def from_args(cls, args: dict[str, str | None]) -> LoadConfig:
        return cls(
            source=str(args["source"]),
            watermark_column=str(args["watermark_column"]),
            primary_key=parse_list("primary_key", args["primary_key"], required=True),
            target_path=str(args["target_path"]),
            partition_by=parse_list("partition_by", args.get("partition_by")),
            source_table=args.get("source_table"),
            source_format=(args.get("source_format") or "parquet").lower(),  # type: ignore[arg-type]
            source_user=args.get("source_user"),
            source_password=args.get("source_password"),
            lookback=parse_duration("lookback", args.get("lookback")),
            null_watermarks=(args.get("null_watermarks") or "load").lower(),  # type: ignore[arg-type]
            jdbc_num_partitions=int(args.get("jdbc_num_partitions") or "1"),
            jdbc_partition_column=args.get("jdbc_partition_column"),
            partition_moves=(args.get("partition_moves") or "detect").lower(),  # type: ignore[arg-type]
        )


# Delivery order of file rows, for ties (``writer.merge_latest``); never written.
FILE_MODIFIED = "__glue_incremental_file_modified"
FILE_NAME = "__glue_incremental_file_name"
FILE_DELIVERY = (FILE_MODIFIED, FILE_NAME)


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """Entry point of ``glue_scripts/incremental_load.py``; returns the run summary."""
    job = GlueJob.from_argv(argv, required=REQUIRED_ARGS, optional=OPTIONAL_ARGS, spark=spark)
    config = LoadConfig.from_args(job.args)
    with job.run() as run:
        run_load(run, config)
    return run.summary


def run_load(run: IncrementalRun, config: LoadConfig) -> None:
    """Read what is new since the state, merge it into the target, then commit.

    A publish that a crashed run left half done is finished or undone first,
    before the source or the target is read.
    """
    if not run.dry_run:
        writer.recover(run.spark, config.target_path)
    if config.is_jdbc:
        _run_jdbc(run, config)
    else:
        _run_files(run, config)


# -- JDBC -------------------------------------------------------------------------------------


def _jdbc_source(config: LoadConfig):
    from glue_incremental.sources.jdbc import JdbcSource

    return JdbcSource(
        url=config.source,
        table=str(config.source_table),
        user=config.source_user,
        password=config.source_password,
        num_partitions=config.jdbc_num_partitions,
        partition_column=config.jdbc_partition_column,
    )


def _run_jdbc(run: IncrementalRun, config: LoadConfig) -> None:
    from glue_incremental.sources import jdbc

    source = _jdbc_source(config)
    _require_columns(
        jdbc.column_names(run.spark, source), config, "source table " + str(config.source_table)
    )
    previous = run.previous()
    cursor = previous.get("cursor") if previous else None
    lower = _minus(cursor, config.lookback) if cursor is not None else None
    upper_state = run.upper_bound()
    # The jdbc reader's upper bound is exclusive; the replayed run read its cursor value.
    upper = _just_after(upper_state.get("cursor")) if upper_state else None
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
    _load_rows(run, config, rows, previous_cursor=cursor, state_extra={}, details={"query": query})


# -- files ------------------------------------------------------------------------------------


def _run_files(run: IncrementalRun, config: LoadConfig) -> None:
    from glue_incremental.sources import files

    previous = run.previous()
    bookmark = files.FileBookmark.from_state(previous.get("files") if previous else None)
    upper_state = run.upper_bound()
    upper_ms = None
    if upper_state:
        upper_ms = files.FileBookmark.from_state(upper_state.get("files")).high_mark_ms
    band = config.lookback if config.lookback > timedelta(0) else DEFAULT_FILE_BAND
    plan = files.plan_file_read(
        run.spark,
        config.source,
        bookmark,
        run_start_ms=int(run.started_at * 1000),
        band_seconds=int(band.total_seconds()),
        upper_bound_ms=upper_ms,
    )
    if run.dry_run:
        _print_plan(run, {"source": "files", **plan.summary()})
        return
    rows = files.read_files(
        run.spark, plan.files, root_uri=config.source, source_format=config.source_format
    )
    if rows is not None:
        rows = rows.select(
            "*",
            F.col("_metadata.file_modification_time").alias(FILE_MODIFIED),
            F.col("_metadata.file_name").alias(FILE_NAME),
        )
    cursor = previous.get("cursor") if previous else None
    _load_rows(
        run,
        config,
        rows,
        delivery=FILE_DELIVERY,
        previous_cursor=cursor,
        state_extra={"files": plan.next_bookmark.to_state()},
        details={"files_read": len(plan.files), "file_plan": plan.summary()},
        late_files=_late_count(plan),
        file_high_mark_ms=plan.next_bookmark.high_mark_ms,
    )


def _late_count(plan: Any) -> int:
    late = getattr(plan, "late_files", None)
    if late is not None:
        return len(late)
    return int(getattr(plan, "late_file_count", 0))


# -- shared -----------------------------------------------------------------------------------


def _load_rows(
    run: IncrementalRun,
    config: LoadConfig,
    rows: DataFrame | None,
    *,
    delivery: Sequence[str] = (),
    previous_cursor: Any,
    state_extra: dict[str, Any],
    details: dict[str, Any],
    late_files: int = 0,
    file_high_mark_ms: int | None = None,
) -> None:
    spark = run.spark
    target_schema = writer.target_schema(spark, config.target_path, config.partition_by)
    records_read = nulls = 0
    new_cursor = previous_cursor
    result = writer.WriteResult(0)
    if rows is not None:
        source_rows = rows.drop(*delivery)
        _require_columns(source_rows.columns, config, "source " + config.source)
        if target_schema is not None:
            _require_same_shape(source_rows, target_schema, config)
        rows = rows.persist()
        try:
            stats = rows.agg(
                F.count(F.lit(1)).alias("n"),
                F.max(F.col(f"`{config.watermark_column}`")).alias("max"),
                F.sum(F.col(f"`{config.watermark_column}`").isNull().cast("int")).alias("nulls"),
            ).first()
            records_read, nulls = int(stats["n"]), int(stats["nulls"] or 0)
            if nulls and config.null_watermarks == "fail":
                raise SchemaError(
                    config.watermark_column,
                    f"{nulls} source rows have a null {config.watermark_column!r}; "
                    "nothing was written (--null_watermarks fail)",
                )
            batch_max = _to_cursor(stats["max"], rows.schema[config.watermark_column].dataType)
            new_cursor = _max_cursor(previous_cursor, batch_max)
            if records_read:
                result = _write(run, config, rows, delivery)
        finally:
            rows.unpersist()
    published_at_ms = int(run.clock() * 1000)
    state = {"cursor": new_cursor, "published_at_ms": published_at_ms, **state_extra}
    changed = records_read > 0 or state_extra != _without(
        run.previous(), "cursor", "published_at_ms"
    )
    if changed:
        run.commit({"default": state})
    watermark_time = _as_time(new_cursor)
    if watermark_time is None and file_high_mark_ms:
        watermark_time = datetime.fromtimestamp(file_high_mark_ms / 1000, UTC)
    run.record(
        records_read=records_read,
        records_written=result.records_written,
        watermark_time=watermark_time,
        late_files_skipped=late_files,
        null_watermark_rows=nulls,
        partitions_written=result.partitions_written,
        partitions_removed=result.partitions_removed,
        **details,
    )


def _write(
    run: IncrementalRun, config: LoadConfig, rows: DataFrame, delivery: Sequence[str]
) -> writer.WriteResult:
    full_reload = not run.bookmark.reads_state or run.previous() is None
    return writer.upsert(
        run.spark,
        rows,
        config.target_path,
        primary_key=config.primary_key,
        partition_by=config.partition_by,
        order_by=config.watermark_column,
        run_id=run.run_id,
        replace_all=full_reload,
        partition_moves=config.partition_moves,
        before_publish=run.guard,
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


def _to_cursor(value: Any, data_type: Any) -> Any:
    """A collected max as a storable cursor: timestamps become aware UTC datetimes."""
    if value is None:
        return None
    if isinstance(data_type, TimestampNTZType):
        return value.replace(tzinfo=UTC)
    if isinstance(data_type, TimestampType):
        # PySpark builds naive datetimes in the Python process's local zone.
        return value.astimezone(UTC)
    if isinstance(data_type, DateType):
        return value
    return value


def _max_cursor(previous: Any, batch: Any) -> Any:
    """The watermark never moves backwards (only an explicit rewind does that)."""
    if previous is None:
        return batch
    if batch is None:
        return previous
    return max(previous, batch)


def _minus(cursor: Any, lookback: timedelta) -> Any:
    if not lookback:
        return cursor
    if isinstance(cursor, datetime | date):
        return cursor - lookback
    raise ArgumentError(
        "lookback",
        f"--lookback applies to time watermarks; the stored cursor {cursor!r} is not a time",
    )


def _just_after(cursor: Any) -> Any:
    if cursor is None:
        return None
    if isinstance(cursor, datetime):
        return cursor + timedelta(microseconds=1)
    if isinstance(cursor, date):
        return cursor + timedelta(days=1)
    if isinstance(cursor, int):
        return cursor + 1
    raise ArgumentError(
        "job-bookmark-to", f"cannot replay up to a cursor of type {type(cursor).__name__}"
    )


def _as_time(cursor: Any) -> datetime | None:
    if isinstance(cursor, datetime):
        return cursor
    if isinstance(cursor, date):
        return datetime(cursor.year, cursor.month, cursor.day, tzinfo=UTC)
    return None


def _without(values: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {key: value for key, value in (values or {}).items() if key not in keys}


def _print_plan(run: IncrementalRun, plan: dict[str, Any]) -> None:
    run.record(records_read=0, records_written=0, plan=plan)
    print(
        json.dumps(
            {"event": "dry_run", "job_name": run.job_name, **plan}, default=str, sort_keys=True
        )
    )
