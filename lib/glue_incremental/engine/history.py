"""``job.write(..., history=...)``: a custom script's rows written as versions (SCD type 2).

``History`` declares the added columns and the tracked ones, checked at construction; at
the write it is bound to the write's ``keys`` and ``order_by`` (the watermark that bounds
the versions) and the declared output is built as its history target (Parquet:
``targets.parquet.history.ParquetHistoryTarget``; an Iceberg output is refused), the
same rules as ``--history scd2``.
Every refusal is one ``DeclarationError`` line naming ``History`` or ``write``, raised
before anything is written. Rules: ``docs/history.md``; API: ``docs/custom-jobs.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from glue_incremental.engine.declarations import Output
from glue_incremental.engine.errors import DeclarationError
from glue_incremental.history.errors import HistoryError, HistoryOptionError
from glue_incremental.history.options import (
    DEFAULT_IS_CURRENT,
    DEFAULT_VALID_FROM,
    DEFAULT_VALID_TO,
    HistoryOptions,
)
from glue_incremental.run.context import IncrementalRun
from glue_incremental.targets import registry as target_types
from glue_incremental.targets.registry import Target

# The names ``HistoryOptions`` gives ``History``'s arguments in its errors.
_ARGUMENTS = {"history_columns": "columns"}
# Stands for the write's ``order_by`` while ``History`` is checked alone: no column has it.
_NO_COLUMN = "\x00"


@dataclass(frozen=True)
class History:
    """Write the rows as versions: ``columns`` (None: every column of the row but the
    watermark, ``order_by``) open a version when they change;
    ``valid_from``/``valid_to``/``is_current`` name the added columns. Checked at
    construction: the names distinct and non-empty, ``columns`` non-empty and without an
    added name."""

    columns: tuple[str, ...] | None = None
    valid_from: str = DEFAULT_VALID_FROM
    valid_to: str = DEFAULT_VALID_TO
    is_current: str = DEFAULT_IS_CURRENT

    def __post_init__(self) -> None:
        if isinstance(self.columns, str):
            object.__setattr__(self, "columns", (self.columns,))
        elif self.columns is not None:
            object.__setattr__(self, "columns", tuple(self.columns))
        try:
            self.options(_NO_COLUMN, ())
        except HistoryOptionError as error:
            argument = _ARGUMENTS.get(error.option, error.option)
            raise DeclarationError(
                argument, f"History({argument}={error.value!r}): {error.reason}"
            ) from None

    def options(self, watermark_column: str, primary_key: Sequence[str]) -> HistoryOptions:
        """The target's options for a write bounded by ``watermark_column``."""
        return HistoryOptions(
            watermark_column,
            self.columns,
            self.valid_from,
            self.valid_to,
            self.is_current,
            tuple(primary_key),
        )


def bind(
    target: str, history: History | HistoryOptions, keys: Sequence[str], order_by: str
) -> HistoryOptions:
    """``history`` for ``write(target, ..., keys=keys, order_by=order_by)``: versions are
    bounded by ``order_by``, so a ``HistoryOptions`` naming another watermark is refused."""
    where = f"write({target!r}, history=...)"
    if isinstance(history, HistoryOptions) and history.watermark_column != order_by:
        raise DeclarationError(
            "history",
            f"{where}: watermark_column {history.watermark_column!r} is not "
            f"order_by {order_by!r}, which bounds the versions",
        )
    if not isinstance(history, History | HistoryOptions):
        raise DeclarationError(
            "history", f"{where}: {history!r} is not a History (or HistoryOptions)"
        )
    try:
        if isinstance(history, History):
            return history.options(order_by, keys)
        return replace(history, primary_key=tuple(keys))
    except HistoryOptionError as error:
        reason = str(error).removeprefix("history: ")
        raise DeclarationError(error.option, f"{where}: {reason}") from None


def history_target(
    run: IncrementalRun,
    name: str,
    output: Output,
    options: HistoryOptions,
    columns: Sequence[str],
) -> Target:
    """The declared ``output`` built as a history target, after the refusals: an output
    format without history, a tracked column not in ``columns`` (the rows' own, delivery
    and delete columns left out), a source column named like an added one, and a target
    that already holds latest-version rows. ``mark_start``'ed as the block's targets are."""
    where = f"write({name!r}, history=...)"
    if output.format != "parquet":  # the load keeps Iceberg history; a script not yet
        raise DeclarationError(
            "history",
            f"{where}: output {name!r} is {output.format}: a script keeps history on a "
            "parquet output only; nothing was written",
        )
    built = target_types.build(replace(output.options(), history=options))
    try:
        options.check_columns(columns)
        built.schema(run)  # a history target refuses latest-version rows when it reads it
    except HistoryError as error:
        raise DeclarationError(
            "history", f"{where}: {str(error).removeprefix('history: ')}"
        ) from error
    built.mark_start(run)
    return built
