"""A file bookmark's stored shape (``FileBookmarkState``) and the checks of its fields.

``sources.files.FileBookmark`` validates itself with these on construction and reads a stored
state through them: any field that is not what a bookmark writes raises
``InvalidBookmarkState`` naming it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TypedDict

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.sources.listing import FINGERPRINT_HEX_CHARS

_HEX = frozenset("0123456789abcdef")


class FileBookmarkState(TypedDict):
    """A ``FileBookmark`` as stored (``to_state``): JSON lists, never tuples."""

    version: int
    high_mark_ms: int | None
    band_start_ms: int | None
    band_fingerprints: list[str]
    # [directory URI, count, counted_to_ms]
    dir_old_counts: list[list[str | int]]
    dir_counts_complete: bool


class InvalidBookmarkState(GlueIncrementalError, ValueError):
    """A stored file bookmark that cannot be used; ``field`` names the offending part."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        super().__init__(f"invalid file bookmark state: {field}: {reason} (got {shown})")


def validate_marks(high: int | None, start: int | None) -> None:
    for name, value in (("high_mark_ms", high), ("band_start_ms", start)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidBookmarkState(
                name, value, "expected an integer (epoch milliseconds) or null"
            )
    if (high is None) != (start is None):
        raise InvalidBookmarkState(
            "band_start_ms", start, "must be null exactly when high_mark_ms is null"
        )
    if high is not None and start is not None and start > high:
        raise InvalidBookmarkState("band_start_ms", start, f"must be <= high_mark_ms ({high})")


def validate_fingerprints(fingerprints: object) -> None:
    if not isinstance(fingerprints, tuple):
        raise InvalidBookmarkState("band_fingerprints", fingerprints, "expected a tuple")
    for index, fingerprint in enumerate(fingerprints):
        if not (
            isinstance(fingerprint, str)
            and len(fingerprint) == FINGERPRINT_HEX_CHARS
            and set(fingerprint) <= _HEX
        ):
            raise InvalidBookmarkState(
                f"band_fingerprints[{index}]",
                fingerprint,
                f"expected {FINGERPRINT_HEX_CHARS} lowercase hex characters",
            )


def validate_directory_counts(counts: object) -> None:
    if not isinstance(counts, tuple):
        raise InvalidBookmarkState("dir_old_counts", counts, "expected a tuple")
    seen: set[str] = set()
    for index, pair in enumerate(counts):
        where = f"dir_old_counts[{index}]"
        if not (isinstance(pair, tuple) and len(pair) == 3):
            raise InvalidBookmarkState(where, pair, "expected (directory, count, counted_to_ms)")
        directory, count, counted_to = pair
        if not isinstance(directory, str) or not directory:
            raise InvalidBookmarkState(f"{where}[0]", directory, "expected a directory URI")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidBookmarkState(f"{where}[1]", count, "expected a count >= 0")
        if isinstance(counted_to, bool) or not isinstance(counted_to, int):
            raise InvalidBookmarkState(
                f"{where}[2]", counted_to, "expected an integer (epoch milliseconds)"
            )
        if directory in seen:
            raise InvalidBookmarkState(f"{where}[0]", directory, "directory listed twice")
        seen.add(directory)


def as_int(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise InvalidBookmarkState(field, value, "expected an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return int(value)
    raise InvalidBookmarkState(field, value, "expected an integer")


def as_optional_int(value: object, field: str) -> int | None:
    return None if value is None else as_int(value, field)


def as_list(value: object, field: str) -> list[object]:
    if not isinstance(value, list | tuple):
        raise InvalidBookmarkState(field, value, "expected a list")
    return list(value)
