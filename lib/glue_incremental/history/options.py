"""A history target's options: its three added columns and the columns that open a version.

Validated at construction (one line, ``HistoryOptionError``), with no side effect;
``check_columns`` checks them against the source's columns before anything is written.
Rules: ``docs/history.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from glue_incremental.history.errors import (
    HistoryColumnTaken,
    HistoryOptionError,
    LatestVersionTarget,
    UnknownHistoryColumn,
)
from glue_incremental.history.values import canonical

DEFAULT_VALID_FROM = "valid_from"
DEFAULT_VALID_TO = "valid_to"
DEFAULT_IS_CURRENT = "is_current"
# The history modes a load can keep; only SCD type 2 so far.
HISTORY_MODES = ("scd2",)
# The run details a history target sets, to 0 when it changes nothing (summed over
# batches); CloudWatch's ``VersionsOpened``/``VersionsClosed`` (``run.metrics``).
VERSION_COUNTS = ("versions_opened", "versions_closed")


@dataclass(frozen=True)
class HistoryOptions:
    """``history_columns``: the columns whose change opens a version; ``None`` means every
    column of the row but ``watermark_column`` (delivery columns are never row values).
    ``primary_key`` names the key in errors. The three names are the added columns."""

    watermark_column: str
    history_columns: tuple[str, ...] | None = None
    valid_from: str = DEFAULT_VALID_FROM
    valid_to: str = DEFAULT_VALID_TO
    is_current: str = DEFAULT_IS_CURRENT
    primary_key: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        added = self.added_columns
        for option, name in added.items():
            if not isinstance(name, str) or not name.strip():
                raise HistoryOptionError(option, name, "must be a column name")
        names = list(added.values())
        for option, name in added.items():
            if names.count(name) > 1:
                raise HistoryOptionError(option, name, "names two of the added columns")
            if name == self.watermark_column or name in self.primary_key:
                raise HistoryOptionError(option, name, "is also a key or watermark column")
        if self.history_columns is None:
            return
        if not self.history_columns:
            raise HistoryOptionError("history_columns", "", "is empty: name at least one column")
        for column in self.history_columns:
            if column == self.watermark_column:
                raise HistoryOptionError(
                    "history_columns", column, "is the watermark column: it bounds versions"
                )
            if column in names:
                raise HistoryOptionError("history_columns", column, "is an added history column")

    @property
    def added_columns(self) -> dict[str, str]:
        """The columns a history target adds, by option name."""
        return {
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "is_current": self.is_current,
        }

    def check_columns(self, columns: Iterable[str]) -> None:
        """Refuse a tracked column ``columns`` lacks, and a column named like an added one
        in any case (Spark resolves names regardless of case: ``VALID_FROM`` is ``valid_from``)."""
        present = list(columns)
        by_folded = {column.casefold(): column for column in present}
        for option, name in self.added_columns.items():
            if name.casefold() in by_folded:
                raise HistoryColumnTaken(by_folded[name.casefold()], option)
        for column in self.history_columns or ():
            if column not in present:
                raise UnknownHistoryColumn(column, present)

    def check_target(self, target: str, columns: Collection[str] | None) -> None:
        """Refuse a ``target`` whose stored ``columns`` (``None``: no target yet) hold rows
        without the added columns: latest-version rows, which versions must not join."""
        if columns is None:
            return
        missing = [name for name in self.added_columns.values() if name not in columns]
        if missing:
            raise LatestVersionTarget(target, missing)

    def same_tracked(self, row: Mapping[str, object], other: Mapping[str, object]) -> bool:
        """Whether ``row`` and ``other`` have equal tracked values (``history.values.canonical``;
        a missing column, as schema evolution leaves older rows, is null)."""
        if self.history_columns is not None:
            names: Iterable[str] = self.history_columns
        else:
            names = (set(row) | set(other)) - {self.watermark_column}
        return all(canonical(row.get(name)) == canonical(other.get(name)) for name in names)
