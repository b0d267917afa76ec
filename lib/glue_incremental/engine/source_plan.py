"""One run's read, planned (``SourcePlan``), and the interface every planned source has.

A source plans its read from the run's stored state and reads lazily; nothing is written
until the engine's block publishes and commits. The load's sources (``load/sources.py``)
and a custom job's JDBC tables (``engine/jdbc_table.py``) return the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from glue_incremental.engine import batch_plan
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState

__all__ = ["RequiredColumns", "SchemaError", "Source", "SourcePlan", "require_columns"]


def _nothing_after_commit(run: IncrementalRun) -> None:
    return None


def _nothing() -> None:
    return None


def _no_types() -> dict[str, str]:
    return {}


def _no_misfit(schema: StructType | None = None) -> tuple[str | None, str] | None:
    return None


@dataclass(frozen=True)
class SourcePlan:
    """One run's read, planned: what a dry run prints, how to read, the state it leaves.

    ``carried`` is the next state but for the cursor (still the previous one) and the
    publish time. ``rereads``: rows read may be versions already loaded (then only those
    the target lacks count as new), at or after ``reread_from`` when that is known.
    """

    summary: Mapping[str, object]
    read: Callable[[], DataFrame | None]
    carried: LoadState
    details: Mapping[str, object]
    delivery: Sequence[str] = ()
    late_files: int = 0
    file_high_mark_ms: int | None = None
    rereads: bool = False
    reread_from: Any = None
    after_commit: Callable[[IncrementalRun], None] = field(default=_nothing_after_commit)
    # For a run that will not commit (a failure, a dry run): leave the source as it was found.
    release: Callable[[], None] = field(default=_nothing)
    # After ``read``: the source's partition column types to keep in the state (files).
    partition_types: Callable[[], dict[str, str]] = field(default=_no_types)
    # A bounded batch (``batches``) that left more for the next batch to read.
    more: bool = False
    # After a read failed on a value that does not fit the declared schema (or ``schema``, a
    # stored type an inferred batch does not fit): (column, where), naming the file, line,
    # column and value (``reading.first_misfit``); None if not found.
    misfit: Callable[[StructType | None], tuple[str | None, str] | None] = field(default=_no_misfit)


class Source(Protocol):
    def plan(
        self, run: IncrementalRun, limits: batch_plan.BatchLimits = batch_plan.UNBOUNDED
    ) -> SourcePlan:
        """Plan this run's read (one batch of at most ``limits``) from the run's stored state;
        reads data lazily, writes nothing."""
        ...


class SchemaError(GlueIncrementalError, ValueError):
    """The source does not have the columns the job needs, or changed shape."""

    def __init__(self, column: str, message: str) -> None:
        self.column = column
        super().__init__(message)


class RequiredColumns(Protocol):
    """The columns a source must have: a load's config, a JDBC table's options."""

    @property
    def watermark_column(self) -> str: ...
    @property
    def primary_key(self) -> Sequence[str]: ...
    @property
    def partition_by(self) -> Sequence[str]: ...


def require_columns(columns: Sequence[str], config: RequiredColumns, where: str) -> None:
    """SchemaError naming the first key, watermark or partition column ``columns`` lacks."""
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
