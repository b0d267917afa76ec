"""What a job on the engine declares: its sources (read incrementally or whole), its targets.

Each declaration is checked at construction, before the job takes its lease. A source
read incrementally has one state slot, named after it, in the job's state; a reference
table and the targets have none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, Protocol, runtime_checkable

from glue_incremental.args import ArgumentError
from glue_incremental.engine.errors import DeclarationError
from glue_incremental.engine.planned import Planned
from glue_incremental.partitions.values import PARTITION_TYPES
from glue_incremental.run.context import IncrementalRun
from glue_incremental.schema.evolution import SCHEMA_EVOLUTIONS, SchemaEvolution
from glue_incremental.sources import partition_types
from glue_incremental.sources.discovery import DEFAULT_FULL_LISTING_EVERY, Discovery
from glue_incremental.sources.reading import SOURCE_FORMATS
from glue_incremental.targets.base import TargetOptions
from glue_incremental.targets.iceberg.tables import IcebergTarget
from glue_incremental.targets.parquet import catalog_schema

FileFormat = Literal["parquet", "json", "csv", "iceberg"]
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def check_name(name: str) -> str:
    """A declared name is a state slot: lower-case letters, digits and ``_``."""
    if not name or not set(name) <= _NAME_CHARS or name[0].isdigit():
        raise DeclarationError(
            name, f"name {name!r} is not lower_snake_case (it names a state slot)"
        )
    return name


@dataclass(frozen=True)
class Dataset:
    """A partitioned dataset read incrementally: a file path (Hive-style ``key=value``
    directories; parquet, json or csv) or an Iceberg table ``database.table``.

    Its increment is what arrived since the commit the job last made (first run: all of
    it). ``upstream_job``: the platform job writing it; then only what that job
    committed is read. ``schema``: a DDL string, needed to run before the first file.
    ``lookback``: the file bookmark's band (0: the default band); ``full_listing_every``:
    an ``s3://`` path's ordered listing lists everything every that many runs.
    ``partition_types``: ``{column: type}`` (string, int, bigint, date); a partition value
    the type cannot hold stops the run when planned, before anything is written.
    """

    path: str
    partition_by: tuple[str, ...]
    format: FileFormat = "parquet"
    schema: str | None = None
    upstream_job: str | None = None
    catalog: str = "glue_catalog"
    lookback: timedelta = timedelta(0)
    full_listing_every: int = DEFAULT_FULL_LISTING_EVERY
    partition_types: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.partition_by, str):
            object.__setattr__(self, "partition_by", (self.partition_by,))
        if not self.path:
            raise DeclarationError("path", "a dataset needs a path (or database.table)")
        if not self.partition_by:
            raise DeclarationError(
                self.path, f"dataset {self.path}: partition_by names at least one column"
            )
        if self.format not in (*SOURCE_FORMATS, "iceberg"):
            raise DeclarationError(
                self.path,
                f"dataset {self.path}: format {self.format!r} is not one of "
                f"{', '.join((*SOURCE_FORMATS, 'iceberg'))}",
            )
        if self.upstream_job is not None and self.format == "iceberg":
            raise DeclarationError(
                self.path,
                f"dataset {self.path}: an Iceberg table shows only committed snapshots; "
                "upstream_job is for file datasets",
            )
        for column, kind in self.partition_types.items():
            if column not in self.partition_by or kind not in PARTITION_TYPES:
                raise DeclarationError(
                    self.path,
                    f"dataset {self.path}: partition_types {column}:{kind} needs a column of "
                    f"partition_by and one of {', '.join(PARTITION_TYPES)}",
                )
        self.discovery  # noqa: B018 (full_listing_every checked now)

    @property
    def discovery(self) -> Discovery:
        """How an ``s3://`` path finds its files (other paths keep the Hadoop listing)."""
        try:
            return Discovery("listing", self.full_listing_every)
        except ValueError as error:
            raise DeclarationError(self.path, f"dataset {self.path}: {error}") from None


@dataclass(frozen=True)
class Reference:
    """A small table read whole on every run (no state): a file path or an Iceberg table."""

    path: str
    format: FileFormat = "parquet"
    catalog: str = "glue_catalog"

    def __post_init__(self) -> None:
        if self.format not in (*SOURCE_FORMATS, "iceberg"):
            raise DeclarationError(
                self.path, f"reference {self.path}: format {self.format!r} is unknown"
            )

    def read(self, spark: Any) -> Any:
        """The whole table, as of now; partition values as the strings in its paths, as a
        ``Dataset``'s (Spark finds the partitions when the read is created)."""
        if self.format == "iceberg":
            return spark.table(IcebergTarget(self.path, self.catalog).name)
        reader = spark.read.format(self.format)
        if self.format == "csv":
            reader = reader.option("header", "true")
        with partition_types.as_text(spark):
            return reader.load(self.path)


@runtime_checkable
class Incremental(Protocol):
    """A declared source that plans itself against its slot (a custom ``JdbcTable``)."""

    def plan(self, run: IncrementalRun, name: str) -> Planned: ...


@runtime_checkable
class Whole(Protocol):
    """A declared source read whole on every run, without a slot (``Reference``,
    a custom ``JdbcReference``)."""

    def read(self, spark: Any) -> Any: ...


Source = Dataset | Reference | Incremental | Whole


@dataclass(frozen=True)
class Output:
    """A target: a Parquet path (write-ahead publish) or an Iceberg table, partitioned by
    ``partition_by``. Written once per run, by key (``write``) or by partitions
    (``replace_partitions``).

    ``schema_evolution`` (``add_columns``, ``rescue`` or ``fail``; None: written as
    computed): what ``replace_partitions`` does when the rows' schema differs from the
    target's (``docs/schema-evolution.md``). ``catalog_table``: a Parquet target's Glue
    Data Catalog table, given the new columns after a commit."""

    format: Literal["parquet", "iceberg"] = "parquet"
    path: str = ""
    table: str | None = None
    partition_by: tuple[str, ...] = ()
    catalog: str = "glue_catalog"
    schema_evolution: SchemaEvolution | None = None
    catalog_table: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.partition_by, str):
            object.__setattr__(self, "partition_by", (self.partition_by,))
        if self.format == "parquet" and not self.path:
            raise DeclarationError("path", "a parquet output needs a path")
        if self.format == "iceberg" and not self.table:
            raise DeclarationError("table", "an iceberg output needs a table database.table")
        if self.schema_evolution is not None and self.schema_evolution not in SCHEMA_EVOLUTIONS:
            raise DeclarationError(
                "schema_evolution",
                f"output schema_evolution {self.schema_evolution!r} is not one of "
                f"{', '.join(SCHEMA_EVOLUTIONS)}",
            )
        try:
            catalog_schema.check_option(self.catalog_table, self.format)
        except ArgumentError as error:
            raise DeclarationError("catalog_table", str(error).splitlines()[0]) from None

    def options(self) -> TargetOptions:
        return TargetOptions(
            format=self.format,
            path=self.path,
            table=self.table,
            catalog=self.catalog,
            partition_by=tuple(self.partition_by),
        )


def parquet(path: str, partition_by: tuple[str, ...] | str = ()) -> Output:
    """A Parquet output at ``path`` (published write-ahead)."""
    return Output("parquet", path=path, partition_by=_columns(partition_by))


def iceberg(table: str, partition_by: tuple[str, ...] | str = ()) -> Output:
    """An Iceberg output ``database.table`` (one snapshot per run)."""
    return Output("iceberg", table=table, partition_by=_columns(partition_by))


def _columns(value: tuple[str, ...] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)
