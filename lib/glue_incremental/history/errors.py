"""A history target's one-line errors, each keeping the offending value (``docs/history.md``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from glue_incremental.errors import GlueIncrementalError, user_columns


class HistoryError(GlueIncrementalError):
    """Base of the history core's errors."""


class HistoryOptionError(HistoryError, ValueError):
    """An option of a history target that cannot work; ``option`` and ``value`` name it."""

    def __init__(self, option: str, value: object, reason: str) -> None:
        self.option, self.value, self.reason = option, value, reason
        super().__init__(f"history: {option} {value!r} {reason}")


class UnknownHistoryColumn(HistoryError, ValueError):
    """A tracked column (``history_columns``) the source does not have."""

    def __init__(self, column: str, available: Iterable[str]) -> None:
        self.column = column
        self.available = user_columns(available)
        super().__init__(
            f"history: tracked column {column!r} is not a source column "
            f"(columns: {', '.join(self.available)}); nothing was written"
        )


class HistoryColumnTaken(HistoryError, ValueError):
    """A source column named like one of the columns a history target adds."""

    def __init__(self, column: str, option: str) -> None:
        self.column, self.option = column, option
        super().__init__(
            f"history: the source has a column {column!r}, the name of the {option} column; "
            "rename the source column (a load: with a --transform; a script: before writing, "
            f"or another {option} name in History); nothing was written"
        )


class LatestVersionTarget(HistoryError, ValueError):
    """A target that already holds latest-version rows (none of the added columns), which
    a history run would mix with versions; ``target`` names it, ``missing`` the columns."""

    def __init__(self, target: str, missing: Iterable[str]) -> None:
        self.target, self.missing = target, sorted(missing)
        super().__init__(
            f"history: {target} already holds latest-version rows (no {', '.join(self.missing)} "
            "column): load the history into a new target; nothing was written"
        )


class HistoryTarget(HistoryError, ValueError):
    """A write of latest-version rows (no ``--history``) to a ``target`` that holds versions:
    its merge by key would collapse every key's versions into one row."""

    def __init__(self, target: str) -> None:
        self.target = target
        super().__init__(
            f"{target} holds history versions (written with --history scd2): load it with "
            "--history scd2, or load latest versions into a new target; nothing was written"
        )


class NullWatermark(HistoryError, ValueError):
    """A delivery without a watermark: it cannot bound a version. ``key`` is its key values."""

    def __init__(self, key: Mapping[str, object]) -> None:
        self.key = dict(key)
        super().__init__(
            f"history: a row of key {self.key} has a null watermark, which cannot bound a "
            "version (use --null_watermarks fail, or give every row a watermark); "
            "nothing was written"
        )


class TrackedColumnsChanged(HistoryError, ValueError):
    """``history_columns`` other than those the target's versions were built with (recorded
    in the state's layout): ``old`` and ``new`` (None: every column but the watermark)."""

    def __init__(self, old: Sequence[str] | None, new: Sequence[str] | None) -> None:
        self.option = "history_columns"
        self.old = None if old is None else list(old)
        self.new = None if new is None else list(new)
        super().__init__(
            f"history: --history_columns changed from {_tracked(self.old)} to "
            f"{_tracked(self.new)} since the last committed run, and the stored versions follow "
            "the old ones; nothing was written: reset the watermark (watermarks reset) so the "
            f"next run rebuilds the history from the source, or keep {_tracked(self.old)}"
        )


def _tracked(columns: Sequence[str] | None) -> str:
    return "every column" if columns is None else ",".join(columns)


class InconsistentHistory(HistoryError, RuntimeError):
    """The stored versions of a key are not the ones its stored deliveries give under the
    run's options (tracked columns other than those they were built with, a target edited
    by hand, a read that missed part of the key's history); ``key`` names it."""

    def __init__(self, key: Mapping[str, object], detail: str) -> None:
        self.key, self.detail = dict(key), detail
        super().__init__(
            f"history: the stored versions of key {self.key} do not follow from its stored "
            f"deliveries under this run's options ({detail}): were the tracked columns changed "
            "since they were written (a custom script's History(columns=...)), or the target "
            "edited? Reset and reload it from the source; nothing was written"
        )
