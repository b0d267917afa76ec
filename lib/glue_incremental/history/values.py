"""A value as the history core compares, hashes and breaks ties by (``canonical``).

The same value read under two types a widening allows (``schema.evolution.is_widening``:
an int and the double or decimal it widens to, two decimal scales, a date and the midnight
timestamp it widens to) is one value, so a
delivery stored before a widening is the same delivery read after it, and a tie goes to the
same row. NaN equals NaN, as in Spark SQL; arrays, structs and maps compare by content and
can be hashed. No Spark, no I/O.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

# Floats and decimals whose value is a whole number in this range compare as that int.
_LONG = 2**63


class _NotANumber:
    """NaN as one value: equal to itself, with NaN's text (a tie's digest reads ``repr``)."""

    def __repr__(self) -> str:
        return "nan"

    def __reduce__(self) -> str:  # one instance per process, across pickling too
        return "NAN"


NAN = _NotANumber()


# Types already in their one form (the common case: a check per value, nothing built).
_PLAIN = frozenset({str, int, bool, type(None)})


def canonical_row(row: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """A row's (name, value) pairs with each value ``canonical``."""
    plain = _PLAIN
    return tuple((name, v if type(v) in plain else canonical(v)) for name, v in row)


def canonical(value: Any) -> Any:
    """``value`` with every number that widening keeps equal in one form, a date as its
    midnight (naive, as Spark gives a timestamp in the session's UTC), NaN as ``NAN``,
    arrays and structs as tuples, maps as tuples of sorted items, bytes as ``bytes``."""
    if type(value) in _PLAIN or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        if value != value:
            return NAN
        return int(value) if value.is_integer() and -_LONG <= value < _LONG else value
    if isinstance(value, Decimal):
        if value.is_nan():
            return NAN
        if value == value.to_integral_value() and -_LONG <= value < _LONG:
            return int(value)
        return value.normalize()
    if isinstance(value, list | tuple):
        return tuple(canonical(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted(((canonical(k), canonical(v)) for k, v in value.items()), key=repr))
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day)
    return value
