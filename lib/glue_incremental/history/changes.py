"""One key's change as rows to upsert and delete, for a target that stores all in one table.

``key_changes`` runs ``groups.key_rows`` on one key's stored rows and the run's deliveries
and returns only the rows that differ (``OP`` upsert or delete, one per row identity),
plus ``key_rows``' counts row. A stored row is a version (its representative's delivery
inline) or an absorbed delivery, stored as a version valid for no time (``valid_from =
valid_to =`` its watermark, ``is_current`` false), so every "as of" and ``is_current``
query skips it. A row's identity is (role, ``valid_from``): one version per start, one
winner per watermark. Used by the Iceberg history target (``docs/history.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from glue_incremental.history.groups import (
    ABSORBED,
    COUNTS,
    INCOMING,
    REPRESENTATIVE,
    ROLE,
    VERSION,
    Layout,
    key_rows,
)

# The change column of ``key_changes``' rows (``Layout.columns`` then this one).
OP = "__history_op"
UPSERT, DELETE = "upsert", "delete"


def stored_row(layout: Layout, role: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` as stored in one table: an absorbed delivery bounded by its own watermark."""
    row = dict(values)
    options = layout.options
    if role == ABSORBED:
        watermark = row.get(options.watermark_column)
        row.update({options.valid_from: watermark, options.valid_to: watermark})
        row[options.is_current] = False
    return row


def key_changes(layout: Layout, grouped: tuple[Any, Iterable[Any]]) -> Iterator[tuple[Any, ...]]:
    """A key's changed rows (``Layout.columns`` and ``OP``) from its tagged rows: the stored
    ones (``VERSION`` rows carrying their delivery columns, ``ABSORBED``) and the run's
    (``INCOMING``); nothing for a key without an incoming delivery or whose state is unchanged."""
    options = layout.options
    group: list[dict[str, Any]] = []
    stored: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for tagged in grouped[1]:
        row = tagged.asDict() if hasattr(tagged, "asDict") else dict(tagged)
        role = row[ROLE]
        if role in (VERSION, ABSORBED):
            out = layout.out(role, stored_row(layout, role, row))
            stored[_identity(layout, out)] = out
            if role == VERSION and layout.delivery_of(row) is not None:
                group.append({**row, ROLE: REPRESENTATIVE})
        group.append(row)
    if not any(row[ROLE] == INCOMING for row in group):
        return
    columns = layout.columns
    new: list[dict[str, Any]] = []
    delivered: dict[Any, dict[str, Any]] = {}
    for out in key_rows(layout, (grouped[0], group)):
        values = dict(zip(columns, out, strict=True))
        role = values[ROLE]
        if role == COUNTS:
            yield (*out, None)
        elif role == REPRESENTATIVE:
            delivered[values[options.watermark_column]] = values
        else:
            new.append(values)
    after: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for values in new:
        role = values[ROLE]
        if role == VERSION:
            representative = delivered.get(values[options.watermark_column], {})
            values.update({name: representative.get(name) for name in layout.delivery})
        out = layout.out(role, stored_row(layout, role, values))
        after[_identity(layout, out)] = out
    for identity, out in after.items():
        if stored.get(identity) != out:
            yield (*out, UPSERT)
    for identity, out in stored.items():
        if identity not in after:
            yield (*out, DELETE)


def _identity(layout: Layout, out: tuple[Any, ...]) -> tuple[Any, ...]:
    values = dict(zip(layout.columns, out, strict=True))
    return values[ROLE], values[layout.options.valid_from]
