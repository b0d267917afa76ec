"""Where a job's output goes: ``build`` makes the ``Target`` its options name, by format.

One entry per format in ``FACTORIES``; a third format is one class (``base.Target``) plus
its entry and its contract tests. Interface and invariants: ``docs/targets-and-sources.md``.
"""

from __future__ import annotations

from collections.abc import Callable

from glue_incremental.args import ArgumentError
from glue_incremental.targets.base import (
    Published,
    Settle,
    StatesBySlot,
    Target,
    TargetOptions,
    UpsertSpec,
)
from glue_incremental.targets.iceberg.history import IcebergHistoryTarget
from glue_incremental.targets.iceberg.target import IcebergTableTarget
from glue_incremental.targets.parquet.history import ParquetHistoryTarget
from glue_incremental.targets.parquet.target import ParquetTarget

__all__ = [
    "FACTORIES",
    "IcebergTableTarget",
    "ParquetTarget",
    "Published",
    "Settle",
    "StatesBySlot",
    "Target",
    "TargetOptions",
    "UpsertSpec",
    "build",
]

FACTORIES: dict[str, Callable[[TargetOptions], Target]] = {
    "parquet": ParquetTarget.from_options,
    "iceberg": IcebergTableTarget.from_options,
}


def build(options: TargetOptions) -> Target:
    """The target ``options`` describe; ArgumentError naming ``target_format`` if unknown."""
    if options.history is not None:
        return _history_target(options)
    factory = FACTORIES.get(options.format)
    if factory is None:
        raise ArgumentError(
            "target_format",
            f"--target_format {options.format!r} is not one of {', '.join(FACTORIES)}",
        )
    return factory(options)


def _history_target(options: TargetOptions) -> Target:
    """A history target (``docs/history.md``): Parquet or Iceberg."""
    assert options.history is not None
    if options.format == "iceberg":
        return IcebergHistoryTarget.from_history_options(options)
    if options.format != "parquet":
        raise ArgumentError(
            "history",
            f"--history scd2 needs --target_format parquet or iceberg (got {options.format!r})",
        )
    plain = ParquetTarget.from_options(options)
    return ParquetHistoryTarget(
        plain.path, plain.partition_by, plain.retain, history=options.history
    )
