"""The incremental join: its spec, input checks, the per-partition join, and the job.

Rows join only within the same partition (partition columns always part of the
equality), so recomputing output partition P from both sides' full P equals a full
recompute restricted to P: a run recomputes and replaces exactly the partitions
that either side changed. Both sides' bookmarks commit in one transaction; before
both sides have data nothing is written or committed. A side written by an upstream
job of this platform is read only as far as that job committed. Design, output
columns and the upstream rule: ``docs/incremental-join.md``, ``docs/upstream-commits.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import reduce
from typing import Any, Literal, cast, get_args

from glue_incremental.args import (
    ArgumentError,
    Option,
    choice,
    parse_duration,
    parse_optional_path,
    required_list,
    split_options,
    typed_values,
)
from glue_incremental.runtime import hooks

__all__ = [
    "JOIN_TYPES",
    "JoinInputError",
    "JoinJobConfig",
    "JoinLayout",
    "JoinSpec",
    "JoinSpecError",
    "JoinType",
    "UpstreamChanged",
    "UpstreamContractError",
    "join_partitions",
    "main",
    "run_join",
    "validate_sides",
]

JoinType = Literal["inner", "left", "full"]
JOIN_TYPES: tuple[str, ...] = get_args(JoinType)
SIDES = ("left", "right")


class JoinSpecError(ValueError):
    """The join's spec itself is invalid (checked at construction)."""


class JoinInputError(ValueError):
    """One side's DataFrame does not fit the spec; raised before anything is read or written."""

    def __init__(self, side: str, column: str, problem: str) -> None:
        self.side, self.column, self.problem = side, column, problem
        super().__init__(f"{side} side, column {column!r}: {problem}")


def _names(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")] if value.strip() else []
    try:
        names = tuple(value)
    except TypeError:
        raise JoinSpecError(f"{what} must be a sequence of column names, got {value!r}") from None
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise JoinSpecError(f"{what} must be non-empty column names, got {name!r}")
    if len(set(names)) != len(names):
        raise JoinSpecError(f"{what} repeats a column: {list(names)}")
    return names


@dataclass(frozen=True)
class JoinSpec:
    """What to join: keys, type, and the partition columns both sides share.

    Lists and comma-separated strings are accepted and stored as tuples.
    ``partition_by`` must be non-empty (the join is maintained per partition);
    ``join_keys`` must be non-empty and may overlap ``partition_by``.
    """

    join_keys: tuple[str, ...]
    join_type: JoinType = "inner"
    partition_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        keys = _names(self.join_keys, "join_keys")
        partitions = _names(self.partition_by, "partition_by")
        if not keys:
            raise JoinSpecError("join_keys must name at least one column")
        if not partitions:
            raise JoinSpecError(
                "partition_by must name at least one column: the incremental join "
                "recomputes whole partitions, so both sides must share partition columns"
            )
        join_type = self.join_type.strip().lower() if isinstance(self.join_type, str) else None
        if join_type not in JOIN_TYPES:
            raise JoinSpecError(
                f"join_type must be one of {', '.join(JOIN_TYPES)}, got {self.join_type!r}"
            )
        object.__setattr__(self, "join_keys", keys)
        object.__setattr__(self, "partition_by", partitions)
        object.__setattr__(self, "join_type", join_type)

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The join keys that are not partition columns."""
        return tuple(key for key in self.join_keys if key not in self.partition_by)

    @property
    def equality_columns(self) -> tuple[str, ...]:
        """Every column the join matches on: partition columns, then the other keys."""
        return self.partition_by + self.key_columns


@dataclass(frozen=True)
class JoinLayout:
    """Where every output column comes from: ``(output name, side, input name)``.

    ``side`` is ``"left"``, ``"right"`` or ``"both"`` (a matched column: the
    left's value, or ``coalesce(left, right)`` for a full join).
    """

    columns: tuple[tuple[str, str, str], ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.columns]


def validate_sides(left_df: Any, right_df: Any, spec: JoinSpec) -> JoinLayout:
    """Check both sides against ``spec``; return the output layout.

    Raises ``JoinInputError`` (naming the side and column) when a side lacks a
    partition column or join key, repeats a column name, when a partition
    column or key has different types on the two sides, or when output names
    would collide. Only schemas are read: no Spark job runs.
    """
    schemas = {"left": left_df.schema, "right": right_df.schema}
    types: dict[str, dict[str, Any]] = {}
    for side, schema in schemas.items():
        fields: dict[str, Any] = {}
        for column in schema.fields:
            folded = [name for name in fields if name.lower() == column.name.lower()]
            if folded:
                raise JoinInputError(
                    side,
                    column.name,
                    f"appears twice (as {folded[0]!r}; Spark resolves names case-insensitively)",
                )
            fields[column.name] = column.dataType
        for kind, required in (
            ("partition column", spec.partition_by),
            ("join key", spec.join_keys),
        ):
            for column in required:
                if column not in fields:
                    near = [name for name in fields if name.lower() == column.lower()]
                    hint = f" (found {near[0]!r}: names are case-sensitive here)" if near else ""
                    raise JoinInputError(
                        side,
                        column,
                        f"{kind} is missing{hint}; {side} columns: {', '.join(fields) or 'none'}",
                    )
        types[side] = fields
    for column in spec.equality_columns:
        left_type, right_type = types["left"][column], types["right"][column]
        if _strip_nullability(left_type) != _strip_nullability(right_type):
            kind = "partition column" if column in spec.partition_by else "join key"
            raise JoinInputError(
                "right",
                column,
                f"{kind} type {right_type.simpleString()} differs from the left's "
                f"{left_type.simpleString()}; cast one side so both agree",
            )

    matched = set(spec.equality_columns)
    others = {side: [name for name in types[side] if name not in matched] for side in SIDES}
    folded_right = {name.lower() for name in others["right"]}
    folded_left = {name.lower() for name in others["left"]}
    columns: list[tuple[str, str, str]] = [(name, "both", name) for name in spec.equality_columns]
    for name in others["left"]:
        out = f"left_{name}" if name.lower() in folded_right else name
        columns.append((out, "left", name))
    for name in others["right"]:
        out = f"right_{name}" if name.lower() in folded_left else name
        columns.append((out, "right", name))
    seen: dict[str, tuple[str, str, str]] = {}
    for entry in columns:
        out, side, name = entry
        first = seen.setdefault(out.lower(), entry)
        if first is not entry:
            raise JoinInputError(
                side,
                name,
                f"output column {out!r} would collide with {first[0]!r} "
                f"(from the {first[1]} side's {first[2]!r}); rename one of them",
            )
    return JoinLayout(tuple(columns))


def _strip_nullability(data_type: Any) -> Any:
    """The type with every nested ``nullable``/``containsNull`` set to True."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(data_type, StructType):
        return StructType(
            [StructField(f.name, _strip_nullability(f.dataType), True) for f in data_type.fields]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(_strip_nullability(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(
            _strip_nullability(data_type.keyType), _strip_nullability(data_type.valueType), True
        )
    return data_type


def join_partitions(left_df: Any, right_df: Any, spec: JoinSpec) -> Any:
    """Join ``left_df`` and ``right_df`` per partition, with the layout of ``validate_sides``.

    The caller restricts both sides to the affected partitions first
    (``predicates.filter_partitions``). Both sides are renamed to positional
    internal names before joining, so two sides derived from the same
    DataFrame cannot produce ambiguous column references.
    """
    from pyspark.sql import functions as F

    layout = validate_sides(left_df, right_df, spec)
    internal = {
        "left": {name: f"__l{i}" for i, name in enumerate(left_df.columns)},
        "right": {name: f"__r{i}" for i, name in enumerate(right_df.columns)},
    }
    left = left_df.toDF(*internal["left"].values())
    right = right_df.toDF(*internal["right"].values())

    def side(which: str, name: str) -> Any:
        return F.col(internal[which][name])

    conditions = [side("left", c).eqNullSafe(side("right", c)) for c in spec.partition_by]
    conditions += [side("left", c) == side("right", c) for c in spec.key_columns]
    joined = left.join(right, reduce(lambda a, b: a & b, conditions), spec.join_type)

    selected = []
    for out, which, name in layout.columns:
        if which == "both":
            value = (
                F.coalesce(side("left", name), side("right", name))
                if spec.join_type == "full"
                else side("left", name)
            )
        else:
            value = side(which, name)
        selected.append(value.alias(out))
    return joined.select(*selected)


# =========================================================================== the job
# One run and the upstream rule are described in docs/incremental-join.md and
# docs/upstream-commits.md.

# "iceberg": the side is an Iceberg table (--left_path db.table), read by snapshot.
SOURCE_FORMATS = ("parquet", "json", "csv", "iceberg")
TARGET_FORMATS = ("parquet", "iceberg")
# --partition_types: the values a partition column may hold (checked before writing).
PARTITION_TYPES = ("string", "int", "bigint", "date")
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
DEFAULT_BAND_SECONDS = 900
MAX_UPSTREAM_RUNS_LISTED = 100


def _upstream_option(name: str, value: str | None) -> dict[str, str]:
    return _parse_upstream(value)


def _pairs_option(name: str, value: str | None) -> dict[str, str]:
    return _parse_pairs(name, value)


# The job's arguments, declared once: parser, config, README table (tests keep it in sync).
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
    Option(
        "left_format",
        "`parquet`, `json`, `csv` (header row) or `iceberg` (the path is a table `database.table`, "
        "read by snapshot).",
        "parquet",
        choice(*SOURCE_FORMATS),
    ),
    Option(
        "right_format",
        "`parquet`, `json`, `csv` (header row) or `iceberg` (the path is a table `database.table`, "
        "read by snapshot).",
        "parquet",
        choice(*SOURCE_FORMATS),
    ),
    Option(
        "upstream_jobs",
        "`left=orders_load,right=payments_load`: sides written by jobs of this platform; only what "
        "they committed is read.",
        "",
        _upstream_option,
    ),
    Option(
        "partition_types",
        "`column:type` list (string, int, bigint, date): invalid partition values stop the run "
        "before anything is written.",
        "",
        _pairs_option,
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
)
REQUIRED_ARGS, OPTIONAL_ARGS = split_options(JOIN_OPTIONS)


class UpstreamChanged(RuntimeError):
    """An upstream job published into partitions this run was reading; nothing was committed."""

    def __init__(self, side: str, job: str, partitions: Sequence[tuple]) -> None:
        self.side, self.job, self.partitions = side, job, list(partitions)
        shown = ", ".join(map(str, self.partitions[:5]))
        super().__init__(
            f"{side} side: upstream job {job!r} published into partition(s) {shown} while this "
            "run read them; nothing was committed: rerun"
        )


class UpstreamContractError(ValueError):
    """The upstream job's committed state does not say when its output was published."""


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

    def __post_init__(self) -> None:
        if self.target_format not in TARGET_FORMATS:
            raise ArgumentError(
                "target_format",
                f"--target_format {self.target_format!r} is not one of {', '.join(TARGET_FORMATS)}",
            )
        if self.target_format == "iceberg":
            if not self.target_table:
                raise ArgumentError(
                    "target_table", "--target_format iceberg needs --target_table database.table"
                )
            self.iceberg_target  # noqa: B018 (validates the name now, before any run)
        elif not self.target_path:
            raise ArgumentError("target_path", "--target_path is required for a Parquet target")
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
        if self.target_path and self.target_path.rstrip("/") in (
            self.left_path.rstrip("/"),
            self.right_path.rstrip("/"),
        ):
            raise ArgumentError("target_path", "--target_path must differ from both sides' paths")

    @property
    def iceberg_target(self) -> Any:
        from glue_incremental.iceberg import IcebergTarget

        return IcebergTarget(str(self.target_table), self.iceberg_catalog)

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


def _parse_upstream(value: str | None) -> dict[str, str]:
    """``left=orders_load,right=payments_load``: which side is which upstream job's output."""
    pairs = {}
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


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """Entry point of ``glue_scripts/incremental_join.py``; returns the run summary."""
    from glue_incremental.runtime import GlueJob

    job = GlueJob.from_argv(argv, required=REQUIRED_ARGS, optional=OPTIONAL_ARGS, spark=spark)
    config = JoinJobConfig.from_args(job.args)
    with job.run() as run:
        run_join(run, config)
    return run.summary


@dataclass
class _Upstream:
    job: str
    slot: str | None
    version: int | None
    run_id: str | None
    published_at_ms: int | None
    runs_consumed: list[str]

    def state(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "version": self.version,
            "run_id": self.run_id,
            "published_at_ms": self.published_at_ms,
        }


@dataclass
class _Side:
    name: str
    root: str
    fmt: str
    declared_schema: Any  # StructType (partition columns as strings) or None
    previous: dict[str, Any] | None
    band_start_ms: int | None
    exists: bool
    listing: list[Any]
    pruned_partitions: set[tuple]
    plan: Any
    upstream: _Upstream | None
    unsettled: set[tuple]
    new_rows: Any
    iceberg_snapshot: int | None = None

    @property
    def has_schema(self) -> bool:
        return (
            bool(self.declared_schema)
            or bool(self.listing)
            or bool(self.pruned_partitions)
            or self.iceberg_snapshot is not None
        )

    def existing_partitions(self, columns: Sequence[str]) -> set[tuple]:
        return {_partition_of(f, columns) for f in self.listing} | self.pruned_partitions


def run_join(run: Any, config: JoinJobConfig) -> None:
    """One run of the incremental join inside ``run`` (an entered ``IncrementalRun``).

    A publish of the Parquet output that a crashed run left half done is
    finished or undone first, before anything is read; for an Iceberg output, a
    snapshot whose DynamoDB commit a crash prevented rolls the state forward.
    """
    spark = run.spark
    key = "spark.sql.sources.partitionColumnTypeInference.enabled"
    before = spark.conf.get(key)
    # Partition values stay strings, exactly as named in paths: a directory
    # ``hour=03`` is the partition "03" on both sides and in the output.
    spark.conf.set(key, "false")
    try:
        if config.target_format == "iceberg":
            if not run.dry_run and run.bookmark.commits:
                from glue_incremental import iceberg

                rolled = iceberg.roll_forward(
                    spark, config.iceberg_target, run.store, str(run.state_name), run.lease
                )
                if rolled is not None:
                    run.summary["rolled_forward_from_snapshot"] = rolled.snapshot_id
        elif not run.dry_run:
            from glue_incremental import writer

            writer.recover(spark, config.target_path)
        _run_join(run, config)
    finally:
        spark.conf.set(key, before)


def _run_join(run: Any, config: JoinJobConfig) -> None:
    from glue_incremental import writer
    from glue_incremental.predicates import (
        filter_partitions,
        normalise_partitions,
        partition_counts,
        validate_partition_values,
    )

    spark, spec = run.spark, config.spec
    columns = spec.partition_by
    to_iceberg = config.target_format == "iceberg"
    if to_iceberg:
        from glue_incremental import iceberg

        started_from = iceberg.current_snapshot(spark, config.iceberg_target)
    sides = {name: _plan_side(run, config, name) for name in SIDES}

    new = {name: side.new_rows for name, side in sides.items() if side.new_rows is not None}
    counts = partition_counts(*new.values(), columns=columns, names=list(new)) if new else {}
    touched = normalise_partitions((p for c in counts.values() for p in c), columns)
    if config.partition_types:
        validate_partition_values(touched, columns, _declared_types(config, columns))

    pending_before = [
        tuple(values)
        for side in sides.values()
        for values in ((side.previous or {}).get("pending_partitions") or [])
    ]
    candidates = normalise_partitions([*touched, *pending_before], columns)
    affected = [p for p in candidates if not any(p in s.unsettled for s in sides.values())]
    pending = {name: [p for p in candidates if p in side.unsettled] for name, side in sides.items()}
    waiting = [name for name, side in sides.items() if not side.has_schema]
    full_reload = not run.bookmark.reads_state and not any(pending.values())

    details: dict[str, Any] = {
        "affected_partitions": len(affected),
        "pending_partitions": {name: [list(p) for p in ps] for name, ps in pending.items()},
        "files_read": {name: len(side.plan.files) for name, side in sides.items()},
        "records_read_by_side": {name: sum(c.values()) for name, c in counts.items()},
        "file_plans": {name: side.plan.summary() for name, side in sides.items()},
        "upstream_runs_consumed": {
            name: side.upstream.runs_consumed for name, side in sides.items() if side.upstream
        },
    }
    records_read = sum(sum(c.values()) for c in counts.values())
    late = sum(side.plan.late_file_count for side in sides.values())
    if run.dry_run:
        run.record(records_read=0, records_written=0, plan=details)
        return
    if waiting:
        run.record(
            records_read=0,
            records_written=0,
            late_files_skipped=late,
            waiting_for=waiting,
            **details,
        )
        return

    result = writer.WriteResult(0)
    wrote = False
    joined = None
    if affected:
        full = {name: _read_full(spark, side, affected, columns) for name, side in sides.items()}
        validate_sides(full["left"], full["right"], spec)
        filtered = {
            name: filter_partitions(frame, affected, columns) for name, frame in full.items()
        }
        joined = join_partitions(filtered["left"], filtered["right"], spec)
        hooks.point("join.joined", **filtered, joined=joined, affected=list(affected))
        if not to_iceberg:
            result = writer.replace_partitions(
                spark,
                joined,
                config.target_path,
                partition_by=columns,
                affected=None if full_reload else affected,
                run_id=run.run_id,
                before_publish=run.guard,
            )
        wrote = True

    published_at_ms = int(run.clock() * 1000)
    hooks.point("join.published", run_id=run.run_id)
    for side in sides.values():
        if side.upstream is not None and affected:
            _recheck_upstream(spark, side, affected, columns)
    states = {
        name: {
            **(
                {"iceberg_snapshot_id": side.iceberg_snapshot}
                if side.fmt == "iceberg"
                else {"files": side.plan.next_bookmark.to_state()}
            ),
            "pending_partitions": [list(p) for p in pending[name]],
            "upstream": side.upstream.state() if side.upstream else None,
            "published_at_ms": published_at_ms,
        }
        for name, side in sides.items()
    }
    if to_iceberg:
        for state in states.values():
            state["iceberg_table"] = config.iceberg_target.name
    if to_iceberg and joined is not None:
        # One snapshot replaces every affected partition; it carries both sides' states.
        published = iceberg.publish_partitions(
            spark,
            config.iceberg_target,
            joined,
            partition_by=columns,
            affected=None if full_reload else affected,
            started_from=started_from.snapshot_id if started_from else None,
            properties=iceberg.snapshot_properties(
                run_id=run.run_id,
                state_name=str(run.state_name),
                state_versions={
                    name: iceberg.started_version(run.store, str(run.state_name), name)
                    for name in SIDES
                },
                watermarks=states,
                commits=run.bookmark.commits,
            ),
            guard=run.guard,
        )
        result = writer.WriteResult(published.records_written)
        run.summary["iceberg_snapshot_id"] = published.snapshot_id
    changed = wrote or any(
        _without(states[name], "published_at_ms") != _without(side.previous, "published_at_ms")
        for name, side in sides.items()
    )
    if changed:
        run.commit(states)
    high_marks = [s.plan.next_bookmark.high_mark_ms for s in sides.values()]
    known = [mark for mark in high_marks if mark is not None]
    run.record(
        records_read=records_read,
        records_written=result.records_written,
        watermark_time=datetime.fromtimestamp(min(known) / 1000, UTC) if known else None,
        late_files_skipped=late,
        partitions_written=result.partitions_written,
        partitions_removed=result.partitions_removed,
        **details,
    )


def _without(values: Mapping[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {key: value for key, value in (values or {}).items() if key not in keys}


def _declared_types(config: JoinJobConfig, columns: Sequence[str]) -> Any:
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    return StructType(
        [
            StructField(c, _parse_datatype_string(config.partition_types.get(c, "string")))
            for c in columns
        ]
    )


def _partition_of(source: Any, columns: Sequence[str]) -> tuple:
    values = dict(source.partition) if hasattr(source, "partition") else dict(source)
    return tuple(None if values.get(c) == HIVE_NULL else values.get(c) for c in columns)


def _plan_side(run: Any, config: JoinJobConfig, name: str) -> _Side:
    from glue_incremental.sources import files as file_source

    if config.format(name) == "iceberg":
        return _plan_iceberg_side(run, config, name)
    spark = run.spark
    root = config.path(name)
    columns = config.spec.partition_by
    previous = run.previous(name)
    bookmark = file_source.FileBookmark.from_state(previous.get("files") if previous else None)
    upstream = None
    upper_ms = None
    if name in config.upstream_jobs:
        upstream = _upstream_view(run.store, config.upstream_jobs[name], previous)
        # Nothing committed upstream yet: nothing of it is visible.
        upper_ms = upstream.published_at_ms if upstream.published_at_ms is not None else -1
    replay_to = run.upper_bound(name)
    if replay_to:
        to_mark = file_source.FileBookmark.from_state(replay_to.get("files")).high_mark_ms
        if to_mark is not None:
            upper_ms = to_mark if upper_ms is None else min(upper_ms, to_mark)
    try:
        listing, stats = file_source.list_source_files(
            spark, root, modified_after_ms=bookmark.band_start_ms
        )
        exists = True
    except file_source.SourceNotFound:
        listing, stats, exists = [], None, False
    pruned = (
        {
            _partition_of(_dir_partition(stats.root_uri, uri), columns)
            for uri in stats.pruned_directories
        }
        if stats is not None
        else set()
    )
    band = config.lookback.total_seconds() or DEFAULT_BAND_SECONDS
    plan = file_source.plan_from_listing(
        listing,
        bookmark,
        run_start_ms=int(run.started_at * 1000),
        band_seconds=int(band),
        upper_bound_ms=upper_ms,
        stats=stats,
    )
    unsettled: set[tuple] = set()
    if upstream is not None:
        unsettled = _unsettled(spark, root, listing, upper_ms, columns)
    declared = None
    schema_text = config.schema(name)
    if schema_text:
        from pyspark.sql.types import _parse_datatype_string

        declared = _string_partitions(_parse_datatype_string(schema_text), columns)
    new_rows = None
    if plan.files:
        new_rows = file_source.read_files(
            spark,
            plan.files,
            root_uri=root,
            # An Iceberg side never gets here: it is read by snapshot, not by files.
            source_format=cast(Literal["parquet", "json", "csv"], config.format(name)),
            schema=declared,
            options=_read_options(config.format(name)),
        )
        new_rows = _partition_strings(new_rows, columns)
    return _Side(
        name=name,
        root=root,
        fmt=config.format(name),
        declared_schema=declared,
        previous=previous,
        band_start_ms=bookmark.band_start_ms,
        exists=exists,
        listing=listing,
        pruned_partitions=pruned,
        plan=plan,
        upstream=upstream,
        unsettled=unsettled,
        new_rows=new_rows,
    )


@dataclass(frozen=True)
class _IcebergPlan:
    """What a file plan reports, for a side read by Iceberg snapshot (no files listed)."""

    start_snapshot: int | None
    end_snapshot: int | None
    files: tuple = ()
    late_file_count: int = 0

    @property
    def next_bookmark(self) -> Any:
        return self  # high_mark_ms below: no file times for an Iceberg side

    high_mark_ms = None

    def summary(self) -> dict[str, Any]:
        return {
            "iceberg_start_snapshot": self.start_snapshot,
            "iceberg_end_snapshot": self.end_snapshot,
        }


def _plan_iceberg_side(run: Any, config: JoinJobConfig, name: str) -> _Side:
    """An Iceberg side: the rows that changed since the snapshot this side last consumed.

    Only committed snapshots exist, so no upstream rule is needed. First run: the whole
    table at its current snapshot. Later: the changelog between the two snapshots
    (inserted, deleted and updated rows, whose partitions are the affected ones). If the
    consumed snapshot is no longer an ancestor (the upstream was rewound), the whole
    table is read again.
    """
    from glue_incremental import iceberg

    spark = run.spark
    columns = config.spec.partition_by
    previous = run.previous(name)
    target = _iceberg_side_target(config, name)
    current = iceberg.current_snapshot(spark, target)
    end = current.snapshot_id if current else None
    start = (previous or {}).get("iceberg_snapshot_id")
    new_rows = None
    if end is not None and start != end:
        if start is not None and iceberg.is_ancestor(spark, target, end, start):
            new_rows = iceberg.changed_rows(spark, target, start, end)
        else:
            start = None
            new_rows = iceberg.read_at(spark, target, end)
        new_rows = _partition_strings(new_rows, columns)
    return _Side(
        name=name,
        root=target.name,
        fmt="iceberg",
        declared_schema=None,
        previous=previous,
        band_start_ms=None,
        exists=end is not None,
        listing=[],
        pruned_partitions=set(),
        plan=_IcebergPlan(start, end),
        upstream=None,
        unsettled=set(),
        new_rows=new_rows,
        iceberg_snapshot=end,
    )


def _iceberg_side_target(config: JoinJobConfig, name: str) -> Any:
    from glue_incremental.iceberg import IcebergTarget

    return IcebergTarget(config.path(name), config.iceberg_catalog)


def _read_options(fmt: str) -> dict[str, str]:
    return {"header": "true"} if fmt == "csv" else {}


def _dir_partition(root: str, uri: str) -> tuple[tuple[str, str], ...]:
    from urllib.parse import unquote

    relative = uri[len(root.rstrip("/")) :] if uri.startswith(root.rstrip("/")) else uri
    pairs = []
    for part in relative.strip("/").split("/"):
        key, found, value = part.partition("=")
        if found and key:
            pairs.append((unquote(key), unquote(value)))
    return tuple(pairs)


def _unsettled(
    spark: Any, root: str, listing: Sequence[Any], upper_ms: int | None, columns: Sequence[str]
) -> set[tuple]:
    """Partitions holding a file newer than the upstream's commit, or caught mid-publish."""
    from glue_incremental import publish, writer
    from glue_incremental.sources import files as file_source

    found = {
        _partition_of(source, columns)
        for source in listing
        if upper_ms is not None and source.modified_ms > upper_ms
    }
    fs = writer.open_filesystem(spark, root)
    for run_dir in fs.list_dirs(publish.staging_root(root)):
        intent = publish.Intent.from_bytes(fs.read_bytes(f"{run_dir}/{publish.INTENT_FILE}"))
        for relative in intent.partitions if intent else ():
            found.add(_partition_of(writer.dir_to_values(relative, columns), columns))
        try:
            staged, _ = file_source.list_source_files(spark, f"{run_dir}/{publish.DATA_DIR}")
        except (file_source.SourceNotFound, ValueError):
            continue
        found |= {_partition_of(source, columns) for source in staged}
    return found


def _recheck_upstream(spark: Any, side: _Side, affected: Sequence[tuple], columns: Any) -> None:
    from glue_incremental.sources import files as file_source

    assert side.upstream is not None
    try:
        listing, _ = file_source.list_source_files(
            spark, side.root, modified_after_ms=side.band_start_ms
        )
    except file_source.SourceNotFound:
        listing = []
    upper = side.upstream.published_at_ms if side.upstream.published_at_ms is not None else -1
    now = _unsettled(spark, side.root, listing, upper, columns)
    changed = sorted((p for p in affected if p in now), key=str)
    if changed:
        raise UpstreamChanged(side.name, side.upstream.job, changed)


def _upstream_view(store: Any, job: str, previous: Mapping[str, Any] | None) -> _Upstream:
    """The upstream job's latest committed state and the runs committed since the last one read."""
    slots = store.slots(job)
    slot = "default" if "default" in slots else (sorted(slots)[0] if slots else None)
    if slot is None:
        return _Upstream(job, None, None, None, None, [])
    state = store.current_state(job, slot)
    chosen = state if state and state.get("watermarks") is not None else None
    if chosen is None:  # reset: the output of its last committed run is still there
        chosen = next(
            (
                item
                for item in store.iter_history(job, slot)
                if isinstance(item.get("watermarks"), Mapping)
                and "published_at_ms" in item["watermarks"]
            ),
            None,
        )
    if chosen is None:
        return _Upstream(job, slot, None, None, None, [])
    published = chosen["watermarks"].get("published_at_ms")
    if not isinstance(published, int) or isinstance(published, bool):
        raise UpstreamContractError(
            f"upstream job {job!r} (slot {slot!r}) committed no integer 'published_at_ms' "
            "in its state: it is not a job of this platform, or too old to be an upstream"
        )
    seen = previous.get("upstream") if previous else None
    since = seen.get("version") if isinstance(seen, Mapping) and seen.get("job") == job else None
    consumed = []
    current = state["version"] if state else chosen["version"]
    for item in store.iter_history(job, slot):
        if since is not None and item["version"] <= since:
            break
        if item["version"] <= current:
            consumed.append(item["job_run_id"])
        if len(consumed) >= MAX_UPSTREAM_RUNS_LISTED:
            break
    return _Upstream(job, slot, current, chosen["job_run_id"], published, consumed[::-1])


def _read_full(spark: Any, side: _Side, affected: Sequence[tuple], columns: Sequence[str]) -> Any:
    """The side's whole dataset (lazily; the caller prunes it to ``affected``)."""
    from glue_incremental.writer import partition_dir

    if side.fmt == "iceberg":
        from glue_incremental import iceberg
        from glue_incremental.iceberg import IcebergTarget

        table = side.root.split(".", 1)[1]
        frame = iceberg.read_at(
            spark, IcebergTarget(table, side.root.split(".")[0]), side.iceberg_snapshot
        )
        return _partition_strings(frame, columns)
    options = _read_options(side.fmt)
    if not side.exists or not (side.listing or side.pruned_partitions):
        # has_schema guarantees a declared schema here
        return spark.createDataFrame([], side.declared_schema)
    reader = spark.read.format(side.fmt).options(**options).option("basePath", side.root)
    # Only the affected partitions' directories are listed and read, not the history;
    # the caller's partition filter still shows in the scan's PartitionFilters.
    present = side.existing_partitions(columns)
    wanted = [p for p in affected if p in present]
    paths = [f"{side.root.rstrip('/')}/{partition_dir(columns, _as_text(p))}" for p in wanted]
    schema = side.declared_schema
    if schema is None and (side.fmt != "parquet" or not paths):
        # Infer from the partitions about to be read (or one file), not the whole history.
        sample_paths = paths or [side.listing[0].uri if side.listing else side.root]
        sample = spark.read.format(side.fmt).options(**options).option("basePath", side.root)
        schema = _string_partitions(sample.load(sample_paths).schema, columns)
    if not paths:
        return spark.createDataFrame([], schema)
    if schema is not None:
        reader = reader.schema(schema)
    return _partition_strings(reader.load(paths), columns)


def _string_partitions(schema: Any, columns: Sequence[str]) -> Any:
    """``schema`` with the partition columns as strings (appended if absent).

    A schema handed to the reader decides how directory values are parsed: a
    partition column typed ``void`` (inferred from files whose partition is
    all null) would turn every other partition's value into null.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    fields = [
        StructField(f.name, StringType(), True) if f.name in columns else f for f in schema.fields
    ]
    names = {f.name for f in fields}
    fields += [StructField(c, StringType(), True) for c in columns if c not in names]
    return StructType(fields)


def _partition_strings(df: Any, columns: Sequence[str]) -> Any:
    """Partition columns as strings, as in paths. Spark types a partition column whose
    values are all null (``__HIVE_DEFAULT_PARTITION__``) as ``void``; a declared schema
    may type it too. Other columns are untouched; a missing column is left for the
    validation to report."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    from glue_incremental.predicates import quote_identifier

    types = {f.name: f.dataType for f in df.schema.fields}
    if all(isinstance(types.get(c, StringType()), StringType) for c in columns):
        return df
    return df.select(
        *[
            F.col(quote_identifier(name)).cast(StringType()).alias(name)
            if name in columns and not isinstance(types[name], StringType)
            else F.col(quote_identifier(name))
            for name in df.columns
        ]
    )


def _as_text(values: tuple) -> tuple:
    return tuple(None if v is None else str(v) for v in values)
