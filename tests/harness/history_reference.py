"""The independent reference for history targets: SCD type 2 built from the set of every
delivery ever made, in pure Python, without the library's code.

The rules are docs/history.md's: per key and watermark the winning delivery (the later
delivery, an unknown one lowest, a null part of one lowest; then the greater SHA-256 of
``repr((deleted, sorted row items))``, values in their comparable form); then runs of
consecutive winners with equal tracked values (a missing column is null; values compared in
their comparable form: a whole number the same whatever its numeric type, a date the same
as its midnight timestamp, NaN equal to NaN,
arrays and maps by content), a delete ending a run; each run of upserts is one
version from its first watermark to the next run's first (null for the last), holding the
values of its last row.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any


class _NaN:
    def __repr__(self) -> str:
        return "nan"


_NAN = _NaN()


def comparable(value: Any) -> Any:
    """The value as the rules compare it (see the module's docstring)."""
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    if isinstance(value, Decimal) and value.is_nan():
        return _NAN
    if isinstance(value, float | Decimal) and not isinstance(value, bool):
        whole = value == int(value) if math.isfinite(value) else False
        if whole and abs(int(value)) <= 2**63 and int(value) != 2**63:
            return int(value)
        return value.normalize() if isinstance(value, Decimal) else value
    if isinstance(value, list | tuple):
        return tuple(comparable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted(((comparable(k), comparable(v)) for k, v in value.items()), key=repr))
    if isinstance(value, bytearray):
        return bytes(value)
    if type(value) is date:
        return datetime.combine(value, datetime.min.time())
    return value


@dataclass(frozen=True)
class Made:
    """One delivery as a source made it: the row (key and watermark among its columns)."""

    row: Mapping[str, Any]
    delivery: tuple[Any, ...] | None = None
    deleted: bool = False


def history(
    made: Iterable[Made],
    primary_key: Sequence[str],
    watermark: str,
    tracked: Sequence[str] | None = None,
    names: tuple[str, str, str] = ("valid_from", "valid_to", "is_current"),
) -> list[dict[str, Any]]:
    """Every version row, sorted by key then ``valid_from``."""
    by_key: dict[tuple[Any, ...], list[Made]] = {}
    for one in made:
        by_key.setdefault(tuple(one.row[k] for k in primary_key), []).append(one)
    rows: list[dict[str, Any]] = []
    for key in sorted(by_key):
        rows.extend(_key_history(by_key[key], watermark, tracked, names))
    return rows


def _order(one: Made) -> tuple[Any, ...]:
    if one.delivery is None:
        known: tuple[Any, ...] = (0,)
    else:
        known = (1, [(0, 0) if part is None else (1, part) for part in one.delivery])
    text = repr((one.deleted, tuple((k, comparable(v)) for k, v in sorted(one.row.items()))))
    return (*known, hashlib.sha256(text.encode("utf-8")).hexdigest())


def _key_history(
    made: list[Made], watermark: str, tracked: Sequence[str] | None, names: tuple[str, str, str]
) -> list[dict[str, Any]]:
    ordered = sorted(made, key=lambda one: (one.row[watermark], _order(one)))
    # The last of each watermark's group is its winner.
    winners = [
        list(group)[-1] for _, group in itertools.groupby(ordered, lambda m: m.row[watermark])
    ]
    columns = sorted({name for one in made for name in one.row} - {watermark})
    compared = list(tracked) if tracked is not None else columns

    def state(one: Made) -> tuple[Any, ...] | None:
        return None if one.deleted else tuple(comparable(one.row.get(name)) for name in compared)

    runs = [list(group) for _, group in itertools.groupby(winners, state)]
    rows = []
    valid_from, valid_to, is_current = names
    for index, run in enumerate(runs):
        if run[0].deleted:
            continue
        end = runs[index + 1][0].row[watermark] if index + 1 < len(runs) else None
        rows.append(
            {
                **run[-1].row,
                valid_from: run[0].row[watermark],
                valid_to: end,
                is_current: end is None,
            }
        )
    return rows
