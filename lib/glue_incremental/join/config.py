"""The join job's options, declared once, and its validated configuration.

``JOIN_OPTIONS`` produces the Glue argument parser, ``JoinJobConfig`` and the table
in ``docs/incremental-join.md`` (a test keeps them in sync). Every check runs at construction, before a run
starts, and raises ``ArgumentError`` naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from glue_incremental.args import (
    DISCOVERY_OPTIONS,
    ArgumentError,
    Option,
    choice,
    parse_duration,
    parse_optional_path,
    required_list,
    split_options,
    typed_values,
)
from glue_incremental.join.spec import SIDES, JoinSpec, JoinSpecError
from glue_incremental.partitions.values import PARTITION_TYPES
from glue_incremental.schema.evolution import SCHEMA_EVOLUTIONS, SchemaEvolution
from glue_incremental.sources.discovery import DEFAULT_FULL_LISTING_EVERY, Discovery
from glue_incremental.sources.reading import SOURCE_FORMATS as FILE_FORMATS
from glue_incremental.targets.base import TargetOptions
from glue_incremental.targets.iceberg.tables import IcebergTarget
from glue_incremental.targets.parquet import catalog_schema
from glue_incremental.targets.registry import FACTORIES as TARGET_FACTORIES
from glue_incremental.targets.registry import build as build_target
from glue_incremental.transforms.function import TRANSFORM_OPTION, TransformSpec

# "iceberg": the side is an Iceberg table (--left_path db.table), read by snapshot.
SOURCE_FORMATS = (*FILE_FORMATS, "iceberg")
TARGET_FORMATS = tuple(TARGET_FACTORIES)  # one per ``targets.base.Target`` implementation

_SIDE_FORMAT_HELP = (
    "`parquet`, `json`, `csv` (header row) or `iceberg` (the path is a table `database.table`, "
    "read by snapshot)."
)


def _parse_pairs(name: str, value: str | None, separator: str = ":") -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in (value or "").split(","):
        if not item.strip():
            continue
        key, found, kind = item.partition(separator)
        if not found or not key.strip() or not kind.strip():
            raise ArgumentError(name, f"--{name}: expected name{separator}value, got {item!r}")
        if key.strip() in pairs:
            raise ArgumentError(name, f"--{name} names {key.strip()!r} twice")
        pairs[key.strip()] = kind.strip().lower()
    return pairs


def _parse_upstream(name: str, value: str | None) -> dict[str, str]:
    """``left=orders_load,right=payments_load``: which side is which upstream job's output."""
    pairs: dict[str, str] = {}
    for item in (value or "").split(","):
        if not item.strip():
            continue
        side, found, job = item.partition("=")
        side, job = side.strip().lower(), job.strip()
        if not found or side not in SIDES or not job:
            raise ArgumentError(
                "upstream_jobs",
                f"--upstream_jobs entries are side=job (side left or right), got {item.strip()!r}",
            )
        if side in pairs:
            raise ArgumentError("upstream_jobs", f"--upstream_jobs names the {side} side twice")
        pairs[side] = job
    return pairs


def _listing_only(name: str, value: str | None) -> str:
    """Join sides discover by listing only: a queue per side would need its own argument."""
    mode = (value or "").strip().lower()
    if mode != "listing":
        raise ArgumentError(
            name,
            f"--{name} {value!r}: join sides support only `listing` (S3 notifications need a "
            "queue per side, which the join does not take)",
        )
    return mode


_FULL_LISTING_EVERY = next(o for o in DISCOVERY_OPTIONS if o.name == "full_listing_every")

# The job's arguments, declared once: parser, config, docs table (tests keep it in sync).
JOIN_OPTIONS: tuple[Option, ...] = (
    Option("left_path", "The left partitioned dataset.", required=True),
    Option("right_path", "The right partitioned dataset.", required=True),
    Option(
        "join_keys",
        "Comma-separated. Partition columns are always matched as well.",
        parse=required_list,
        required=True,
    ),
    Option(
        "partition_by",
        "One or more levels, for example `date,hour`, the same on both sides and in the output.",
        parse=required_list,
        required=True,
    ),
    Option(
        "target_path",
        "The Parquet output (`--target_format parquet`, required then); only affected partitions "
        "are rewritten.",
        parse=parse_optional_path,
    ),
    Option(
        "target_format",
        "`parquet` (a partitioned path) or `iceberg` (a table, with `--target_table`): one "
        "overwrite of the affected partitions per run.",
        "parquet",
        choice(*TARGET_FORMATS),
    ),
    Option("target_table", "Iceberg: the output table (`database.table`)."),
    Option(
        "iceberg_catalog",
        "Iceberg: the Spark catalog of the output and of Iceberg sides.",
        "glue_catalog",
    ),
    Option(
        "join_type",
        "`inner`, `left` or `full`. For full joins, keys are coalesced; clashing names become "
        "`left_x`/`right_x`.",
        "inner",
    ),
    Option("left_format", _SIDE_FORMAT_HELP, "parquet", choice(*SOURCE_FORMATS)),
    Option("right_format", _SIDE_FORMAT_HELP, "parquet", choice(*SOURCE_FORMATS)),
    Option(
        "upstream_jobs",
        "`left=orders_load,right=payments_load`: sides written by jobs of this platform; only what "
        "they committed is read.",
        "",
        _parse_upstream,
    ),
    Option(
        "partition_types",
        "`column:type` list (string, int, bigint, date): invalid partition values stop the run "
        "before anything is written.",
        "",
        _parse_pairs,
    ),
    Option(
        "left_schema", "Optional fixed DDL schema of the left side (partition columns as strings)."
    ),
    Option("right_schema", "Optional fixed DDL schema of the right side."),
    Option(
        "lookback",
        "The file bookmarks' band, for example `15 minutes` or `900` (default 900 s).",
        "0",
        parse_duration,
    ),
    Option(
        "discovery",
        "`s3://` sides: `listing` only (from the newest partitions on, for `key=value` layouts "
        "sorting in time order; `notifications` is refused).",
        "listing",
        _listing_only,
    ),
    _FULL_LISTING_EVERY,
    TRANSFORM_OPTION,
    Option(
        "schema_evolution",
        "The output's schema changing (a side added or widened a column): `add_columns` "
        "(new columns join the output, older rows read null), `rescue` (they go to the JSON "
        "column `_rescued_data`) or `fail` (stop before writing). Safe widening is accepted "
        "in every mode.",
        "add_columns",
        choice(*SCHEMA_EVOLUTIONS),
    ),
    Option(
        "catalog_table",
        "Parquet: the output's Glue Data Catalog table (`database.table`); a run that publishes "
        "adds new or widened columns to it (`glue:GetTable`, `glue:UpdateTable`).",
    ),
)
REQUIRED_ARGS, OPTIONAL_ARGS = split_options(JOIN_OPTIONS)


@dataclass(frozen=True)
class JoinJobConfig:
    """The job's arguments, validated."""

    left_path: str
    right_path: str
    spec: JoinSpec
    target_path: str = ""
    left_format: str = "parquet"
    right_format: str = "parquet"
    upstream_jobs: Mapping[str, str] = field(default_factory=dict)
    partition_types: Mapping[str, str] = field(default_factory=dict)
    left_schema: str | None = None
    right_schema: str | None = None
    lookback: timedelta = timedelta(0)
    target_format: str = "parquet"
    target_table: str | None = None
    iceberg_catalog: str = "glue_catalog"
    discovery: str = "listing"
    full_listing_every: int = DEFAULT_FULL_LISTING_EVERY
    transform: TransformSpec | None = None
    schema_evolution: SchemaEvolution = "add_columns"
    catalog_table: str | None = None

    def __post_init__(self) -> None:
        if self.schema_evolution not in SCHEMA_EVOLUTIONS:
            raise ArgumentError(
                "schema_evolution",
                f"--schema_evolution {self.schema_evolution!r} is not one of "
                f"{', '.join(SCHEMA_EVOLUTIONS)}",
            )
        catalog_schema.check_option(self.catalog_table, self.target_format)
        self._check_target()
        self._check_sides()
        self._check_partition_types()
        self.side_discovery  # noqa: B018 (validates the discovery options now)

    def _check_target(self) -> None:
        # Each format checks its own options (a path, a table name) as it builds the target.
        build_target(self.target_options)
        if self.target_path and self.target_path.rstrip("/") in (
            self.left_path.rstrip("/"),
            self.right_path.rstrip("/"),
        ):
            raise ArgumentError("target_path", "--target_path must differ from both sides' paths")

    def _check_sides(self) -> None:
        for side in SIDES:
            fmt = self.format(side)
            if fmt not in SOURCE_FORMATS:
                raise ArgumentError(
                    f"{side}_format",
                    f"--{side}_format {fmt!r} is not one of {', '.join(SOURCE_FORMATS)}",
                )
        for side in self.upstream_jobs:
            if side not in SIDES:
                raise ArgumentError("upstream_jobs", f"--upstream_jobs: unknown side {side!r}")

    def _check_partition_types(self) -> None:
        for column, kind in self.partition_types.items():
            if column not in self.spec.partition_by:
                raise ArgumentError(
                    "partition_types",
                    f"--partition_types names {column!r}, which is not in --partition_by",
                )
            if kind not in PARTITION_TYPES:
                raise ArgumentError(
                    "partition_types",
                    f"--partition_types {column}:{kind}: type must be one of "
                    f"{', '.join(PARTITION_TYPES)}",
                )

    @property
    def side_discovery(self) -> Discovery:
        """How an ``s3://`` file side finds its files (other roots keep the Hadoop listing)."""
        _listing_only("discovery", self.discovery)
        try:
            return Discovery("listing", self.full_listing_every)
        except ValueError as error:
            raise ArgumentError("full_listing_every", f"--full_listing_every: {error}") from None

    @property
    def iceberg_target(self) -> IcebergTarget:
        return IcebergTarget(str(self.target_table), self.iceberg_catalog)

    @property
    def target_options(self) -> TargetOptions:
        """What ``targets.registry.build`` needs to make the join's output (no maintenance options)."""
        return TargetOptions(
            format=self.target_format,
            path=self.target_path,
            table=self.target_table,
            catalog=self.iceberg_catalog,
            partition_by=tuple(self.spec.partition_by),
        )

    def side_target(self, side: str) -> IcebergTarget:
        """An Iceberg side's table (``--{side}_path database.table``)."""
        return IcebergTarget(self.path(side), self.iceberg_catalog)

    def path(self, side: str) -> str:
        return self.left_path if side == "left" else self.right_path

    def format(self, side: str) -> str:
        return (self.left_format if side == "left" else self.right_format).lower()

    def schema(self, side: str) -> str | None:
        return self.left_schema if side == "left" else self.right_schema

    @classmethod
    def from_args(cls, args: Mapping[str, str | None]) -> JoinJobConfig:
        values = typed_values(JOIN_OPTIONS, args)
        keys, partitions = values.pop("join_keys"), values.pop("partition_by")
        try:
            spec = JoinSpec(keys, values.pop("join_type") or "inner", partitions)
        except JoinSpecError as error:
            raise ArgumentError(str(error).split(" ", 1)[0], f"--{error}") from None
        return cls(spec=spec, **values)
