"""The load job's arguments and their validated configuration (``LoadConfig``).

Every argument is declared once in ``LOAD_OPTIONS`` (parser, config, the
table in ``docs/load-job.md``); ``LoadConfig`` validates them at construction, so a bad value is a
one-line ``ArgumentError`` naming the argument before anything is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from glue_incremental.args import (
    DISCOVERY_OPTIONS,
    ArgumentError,
    Option,
    choice,
    list_of_names,
    parse_bool,
    parse_duration,
    parse_optional_path,
    parse_positive_int,
    required_list,
    split_options,
    typed_values,
)
from glue_incremental.deletes import markers as deletes
from glue_incremental.engine.batch_plan import BATCH_OPTIONS, BatchLimits
from glue_incremental.engine.cursors import DEFAULT_MAX_FUTURE_SKEW
from glue_incremental.engine.jdbc_table import CREDENTIAL_OPTIONS
from glue_incremental.history.errors import HistoryOptionError
from glue_incremental.history.options import HISTORY_MODES, HistoryOptions
from glue_incremental.load import reconcile as reconciling
from glue_incremental.schema.evolution import SCHEMA_EVOLUTIONS, SchemaEvolution
from glue_incremental.sources.discovery import DEFAULT_FULL_LISTING_EVERY, Discovery
from glue_incremental.sources.jdbc_urls import redact_url
from glue_incremental.sources.notifications import DEFAULT_VISIBILITY_SECONDS
from glue_incremental.sources.s3_listing import is_s3_uri
from glue_incremental.targets.base import TargetOptions
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.parquet import catalog_schema, writer
from glue_incremental.targets.registry import FACTORIES as TARGET_FACTORIES
from glue_incremental.targets.registry import build as build_target
from glue_incremental.transforms.function import TRANSFORM_OPTION, TransformSpec

SourceFormat = Literal["parquet", "json", "csv"]
# One per implementation of ``targets.base.Target`` (``targets.registry.FACTORIES``).
TARGET_FORMATS: tuple[str, ...] = tuple(TARGET_FACTORIES)
NullWatermarkPolicy = Literal["load", "fail"]
SOURCE_FORMATS: tuple[SourceFormat, ...] = ("parquet", "json", "csv")
NULL_POLICIES: tuple[NullWatermarkPolicy, ...] = ("load", "fail")
PARTITION_MOVES: tuple[writer.PartitionMoves, ...] = ("detect", "ignore")
DEFAULT_FILE_BAND = timedelta(seconds=900)

# How long a Parquet publish keeps the files it replaced (`watermarks rewind` restores them).
DEFAULT_OUTPUT_RETENTION = "7 days"


def parse_history(name: str, value: str | None) -> str | None:
    """No history (the latest version of each key), or one of ``HISTORY_MODES``."""
    return None if not value else choice(*HISTORY_MODES)(name, value)


# History targets (docs/history.md): Parquet and Iceberg.
HISTORY_OPTIONS: tuple[Option, ...] = (
    Option(
        "history",
        "`scd2`: the target keeps every version of a key, with `valid_from`, `valid_to` and "
        "`is_current` (`docs/history.md`).",
        parse=parse_history,
    ),
    Option(
        "history_columns",
        "With `--history scd2`: comma-separated columns whose change opens a version; "
        "default every column of the row but the watermark.",
        "",
        list_of_names,
    ),
)
# The job's arguments, declared once: parser, config, docs table (tests keep it in sync).
LOAD_OPTIONS: tuple[Option, ...] = (
    Option(
        "source",
        "A JDBC URL (`jdbc:postgresql://...`, with `--source_table`), or a path or URI "
        "(`s3://...`, `file://...`, with `--source_format`).",
        required=True,
    ),
    Option(
        "watermark_column",
        "The column whose maximum is the cursor (JDBC), and the version order of rows.",
        required=True,
    ),
    Option(
        "primary_key",
        "Comma-separated. Rows merge by it, keeping the latest version.",
        parse=required_list,
        required=True,
    ),
    Option(
        "target_path",
        "The Parquet target (`--target_format parquet`, required then).",
        parse=parse_optional_path,
    ),
    Option(
        "target_format",
        "`parquet` (a partitioned path) or `iceberg` (a table, with `--target_table`).",
        "parquet",
        choice(*TARGET_FORMATS),
    ),
    Option("target_table", "Iceberg: the table (`database.table`), created on the first run."),
    Option(
        "iceberg_catalog",
        "Iceberg: the Spark catalog of the table.",
        iceberg_writer.DEFAULT_CATALOG,
    ),
    Option(
        "iceberg_expire_older_than",
        "Iceberg: after each run, expire snapshots older than this (never one a watermark "
        "points at); `0`: keep all.",
        "0",
        parse_duration,
    ),
    Option(
        "iceberg_compact",
        "Iceberg: `true` compacts small files after each run.",
        "false",
        parse_bool,
    ),
    Option(
        "output_retention",
        "Parquet: keep the files each publish replaces this long, so `watermarks rewind` "
        "restores the output with the state; `0`: delete them at once (a rewind then keeps "
        "the output).",
        DEFAULT_OUTPUT_RETENTION,
        parse_duration,
    ),
    Option("partition_by", "Comma-separated partition columns of the target.", "", list_of_names),
    Option("source_table", "JDBC: the table (`<schema>.<table>`)."),
    Option(
        "source_format",
        "Files: `parquet`, `json` or `csv` (with a header row).",
        "parquet",
        choice(*SOURCE_FORMATS),
    ),
    Option(
        "source_schema",
        "Files: the source's columns as Spark DDL (`id BIGINT, updated TIMESTAMP, value STRING`), "
        "read as declared instead of inferred (inferring JSON or CSV reads every file once more). "
        "A value that does not fit its type stops the run before anything is written.",
    ),
    Option("source_user", "JDBC user when neither a secret nor a connection gives one."),
    *CREDENTIAL_OPTIONS,
    Option(
        "lookback",
        "For example `2 hours` or `3600` (seconds). JDBC: re-read `watermark_column >= previous - lookback`. "
        "Files: the late-file band; `0` (the default) means 900 s, a file band is never empty.",
        "0",
        parse_duration,
    ),
    Option(
        "max_future_skew",
        "How far past the run's start a watermark may be and still move the cursor; later rows are loaded, "
        "counted (`FutureWatermarkRows`) and re-read until their time comes.",
        DEFAULT_MAX_FUTURE_SKEW,
        parse_duration,
    ),
    Option(
        "null_watermarks",
        "`load` (read on every run) or `fail` (stop before writing).",
        "load",
        choice(*NULL_POLICIES),
    ),
    Option(
        "jdbc_num_partitions",
        "Parallel JDBC reads (needs `--jdbc_partition_column`).",
        "1",
        parse_positive_int,
    ),
    Option(
        "jdbc_partition_column", "Numeric, date or timestamp column splitting parallel JDBC reads."
    ),
    Option(
        "partition_moves",
        "`detect`: a row whose partition changed is removed from its old partition (found in the "
        "target's key index, `_index/`). "
        "`ignore`: rows never change partition.",
        "detect",
        choice(*PARTITION_MOVES),
    ),
    Option(
        "delete_marker",
        "Soft deletes: a boolean column (`is_deleted`), or a column and the values meaning "
        "deleted (`op=D`, `op in (D,X)`). A key whose latest version is a delete leaves the "
        "target (`docs/deletes.md`).",
        parse=deletes.parse_marker,
    ),
    Option(
        "keep_delete_marker",
        "With `--delete_marker`: `true` keeps the marker column in the target, `false` drops it.",
        "true",
        parse_bool,
    ),
    Option(
        "reconcile_every",
        "Hard deletes (JDBC, or `--file_snapshots`): every Nth run reads only the source's "
        "primary keys and removes target keys the source no longer has; `0`: never "
        "(`docs/deletes.md`).",
        "0",
        reconciling.parse_every,
    ),
    Option(
        "file_snapshots",
        "`true`: every file of this file source is a full snapshot, so a reconcile takes the "
        "keys of the newest file (`docs/deletes.md`).",
        "false",
        parse_bool,
    ),
    Option(
        "reconcile",
        "`true`: this run reconciles (hard deletes) whatever `--reconcile_every` says.",
        "false",
        parse_bool,
    ),
    Option(
        "reconcile_max_fraction",
        "The safety stop: a reconcile removing more than this fraction of the target's keys, "
        "or finding no source keys, writes nothing and fails the run.",
        str(reconciling.DEFAULT_MAX_FRACTION),
        reconciling.parse_fraction,
    ),
    Option(
        "schema_evolution",
        "A source schema change: `add_columns` (new columns join the target, older rows read "
        "null), `rescue` (new columns and values that do not fit go to the JSON column "
        "`_rescued_data`) or `fail` (stop before writing). Safe widening (int to bigint, float "
        "to double, wider decimal, date to timestamp) is accepted in every mode.",
        "add_columns",
        choice(*SCHEMA_EVOLUTIONS),
    ),
    Option(
        "catalog_table",
        "Parquet: the target's Glue Data Catalog table (`database.table`); a run that publishes "
        "adds new or widened columns to it (`glue:GetTable`, `glue:UpdateTable`).",
    ),
    *DISCOVERY_OPTIONS,
    *BATCH_OPTIONS,
    TRANSFORM_OPTION,
    *HISTORY_OPTIONS,
)
REQUIRED_ARGS, OPTIONAL_ARGS = split_options(LOAD_OPTIONS)


REFUSED_ARGS = {
    "source_password": "a password in job arguments is visible in GetJob, CloudTrail and "
    "Terraform state: use --source_secret_id (Secrets Manager) or --connection_name (Glue connection)",
}


@dataclass(frozen=True)
class LoadConfig:
    source: str
    watermark_column: str
    primary_key: tuple[str, ...]
    target_path: str = ""
    partition_by: tuple[str, ...] = ()
    source_table: str | None = None
    source_format: SourceFormat = "parquet"
    source_schema: str | None = None
    source_user: str | None = None
    source_secret_id: str | None = None
    connection_name: str | None = None
    # Programmatic only (tests, local tools): never a job argument, never printed.
    source_password: str | None = field(default=None, repr=False)
    lookback: timedelta = timedelta(0)
    max_future_skew: timedelta = timedelta(minutes=5)
    null_watermarks: NullWatermarkPolicy = "load"
    jdbc_num_partitions: int = 1
    jdbc_partition_column: str | None = None
    partition_moves: writer.PartitionMoves = "detect"
    schema_evolution: SchemaEvolution = "add_columns"
    catalog_table: str | None = None
    target_format: str = "parquet"
    target_table: str | None = None
    iceberg_catalog: str = iceberg_writer.DEFAULT_CATALOG
    # Optional maintenance after each committed run (see iceberg_maintenance); 0: none.
    iceberg_expire_older_than: timedelta = timedelta(0)
    iceberg_compact: bool = False
    output_retention: timedelta = timedelta(days=7)
    discovery: str = "listing"
    notification_queue_url: str | None = None
    full_listing_every: int = DEFAULT_FULL_LISTING_EVERY
    # Programmatic only: how long a received notification stays hidden (it should outlast the run).
    notification_visibility_seconds: int = DEFAULT_VISIBILITY_SECONDS
    delete_marker: deletes.DeleteMarker | None = None
    keep_delete_marker: bool = True
    reconcile_every: int = 0
    reconcile: bool = False
    file_snapshots: bool = False
    reconcile_max_fraction: float = reconciling.DEFAULT_MAX_FRACTION
    max_batch_files: int | None = None
    max_batch_bytes: int | None = None
    max_batch_rows: int | None = None
    max_batches_per_run: int | None = None
    transform: TransformSpec | None = None
    history: str | None = None
    history_columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.history_options  # noqa: B018 (validates the history options now)
        self.file_discovery  # noqa: B018 (validates the discovery options now)
        self.batch_limits.check_source(is_jdbc=self.is_jdbc, discovery=self.discovery)
        if self.delete_marker is not None:
            deletes.check_roles(
                self.delete_marker,
                primary_key=self.primary_key,
                watermark_column=self.watermark_column,
                partition_by=self.partition_by,
            )
        reconciling.check_source(self)
        if self.delete_marker is None and not self.keep_delete_marker:
            raise ArgumentError(
                "keep_delete_marker", "--keep_delete_marker false needs --delete_marker"
            )
        if self.discovery == "notifications" and not is_s3_uri(self.source):
            raise ArgumentError(
                "discovery",
                f"--discovery notifications needs an s3:// source (S3 event notifications), "
                f"got --source {redact_url(self.source)!r}",
            )
        # Each format checks its own options (a path, a table name) as it builds the target.
        build_target(self.target_options)
        if self.is_jdbc and not self.source_table:
            raise ArgumentError(
                "source_table", "--source is a JDBC URL: --source_table is required"
            )
        if not self.is_jdbc and self.source_format not in SOURCE_FORMATS:
            raise ArgumentError(
                "source_format",
                f"--source_format {self.source_format!r} is not one of {', '.join(SOURCE_FORMATS)}",
            )
        self._check_source_schema()
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
        if self.schema_evolution not in SCHEMA_EVOLUTIONS:
            raise ArgumentError(
                "schema_evolution",
                f"--schema_evolution {self.schema_evolution!r} is not one of "
                f"{', '.join(SCHEMA_EVOLUTIONS)}",
            )
        catalog_schema.check_option(self.catalog_table, self.target_format)
        if not self.primary_key:
            raise ArgumentError("primary_key", "--primary_key needs at least one column")
        overlap = set(self.partition_by) & {self.watermark_column}
        if overlap:
            raise ArgumentError(
                "partition_by", f"--partition_by cannot include the watermark column {overlap}"
            )

    def _check_source_schema(self) -> None:
        if self.source_schema is None:
            return
        if self.is_jdbc:
            raise ArgumentError(
                "source_schema",
                "--source_schema is for file sources; a JDBC source has the table's own types",
            )
        if not self.source_schema.strip():
            raise ArgumentError("source_schema", "--source_schema is empty: give columns as DDL")

    @property
    def history_options(self) -> HistoryOptions | None:
        """The history target's options (``None``: latest version only); a refusal is one
        ``ArgumentError`` line naming ``--history`` or ``--history_columns``."""
        if self.history is None:
            if self.history_columns:
                raise ArgumentError("history_columns", "--history_columns needs --history scd2")
            return None
        parse_history("history", self.history)
        if self.reconcile_every or self.reconcile or self.file_snapshots:
            # A gone key's delete is its stored row, at its watermark: it would erase a version.
            raise ArgumentError("history", "--history scd2 cannot reconcile yet (docs/history.md)")
        try:
            return HistoryOptions(
                self.watermark_column,
                self.history_columns or None,
                primary_key=self.primary_key,
            )
        except HistoryOptionError as error:
            if error.option == "history_columns":
                name, text = "history_columns", f"--history_columns: {error.value!r} {error.reason}"
            else:
                name = "history"
                text = (
                    f"--history {self.history}: the {error.option} column {error.value!r} "
                    f"{error.reason}"
                )
            raise ArgumentError(name, text) from None

    @property
    def iceberg_target(self) -> iceberg_writer.IcebergTarget:
        return iceberg_writer.IcebergTarget(str(self.target_table), self.iceberg_catalog)

    @property
    def target_options(self) -> TargetOptions:
        """What ``targets.registry.build`` needs to make this job's output."""
        return TargetOptions(
            format=self.target_format,
            path=self.target_path,
            table=self.target_table,
            catalog=self.iceberg_catalog,
            partition_by=self.partition_by,
            compact=self.iceberg_compact,
            expire_older_than=self.iceberg_expire_older_than,
            retain=self.output_retention or None,
            history=self.history_options,
        )

    @property
    def batch_limits(self) -> BatchLimits:
        """What bounds one batch and one run (``batches``)."""
        return BatchLimits(
            self.max_batch_files,
            self.max_batch_bytes,
            self.max_batch_rows,
            self.max_batches_per_run,
        )

    @property
    def file_discovery(self) -> Discovery:
        try:
            return Discovery(
                self.discovery,
                self.full_listing_every,
                self.notification_queue_url,
                self.notification_visibility_seconds,
            )
        except ValueError as error:
            message = str(error)
            name = next(
                (n for n in ("full_listing_every", "notification_queue_url") if n in message),
                "notification_queue_url" if self.discovery == "notifications" else "discovery",
            )
            raise ArgumentError(name, f"--{name}: {error}") from None

    @property
    def is_jdbc(self) -> bool:
        return self.source.startswith("jdbc:")

    @classmethod
    def from_args(cls, args: dict[str, str | None]) -> LoadConfig:
        for name, reason in REFUSED_ARGS.items():
            if args.get(name) is not None:
                raise ArgumentError(name, f"--{name} is refused: {reason}")
        source = args.get("source") or ""
        if source.startswith("jdbc:") and redact_url(source) != source:
            raise ArgumentError(
                "source",
                f"--source carries a password ({redact_url(source)}): "
                + REFUSED_ARGS["source_password"],
            )
        return cls(**typed_values(LOAD_OPTIONS, args))
