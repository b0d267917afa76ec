"""What a custom job declares: its sources (read incrementally or whole) and its targets.

Each declaration is checked at construction, before the job takes its lease. A source
read incrementally has one state slot, named after it, in the job's state; a reference
table and the targets have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from glue_incremental.custom.errors import DeclarationError
from glue_incremental.sources.reading import SOURCE_FORMATS
from glue_incremental.targets.base import TargetOptions

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
    """

    path: str
    partition_by: tuple[str, ...]
    format: FileFormat = "parquet"
    schema: str | None = None
    upstream_job: str | None = None
    catalog: str = "glue_catalog"

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


Source = Dataset | Reference


@dataclass(frozen=True)
class Output:
    """A target: a Parquet path (write-ahead publish) or an Iceberg table, partitioned by
    ``partition_by``. Written once per run, by key (``write``) or by partitions
    (``replace_partitions``)."""

    format: Literal["parquet", "iceberg"] = "parquet"
    path: str = ""
    table: str | None = None
    partition_by: tuple[str, ...] = ()
    catalog: str = "glue_catalog"

    def __post_init__(self) -> None:
        if isinstance(self.partition_by, str):
            object.__setattr__(self, "partition_by", (self.partition_by,))
        if self.format == "parquet" and not self.path:
            raise DeclarationError("path", "a parquet output needs a path")
        if self.format == "iceberg" and not self.table:
            raise DeclarationError("table", "an iceberg output needs a table database.table")

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
