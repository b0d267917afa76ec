"""Watermark values in human units, for ``watermarks show`` and ``history`` (not ``--json``).

Timestamps print as ISO 8601 in UTC (``2024-05-01T12:00:00Z``, microseconds kept when
set); epoch-millisecond marks (names ending ``_ms``) print as the same; a file source's
bookmark (``files``, ``sources.files.FileBookmark``) prints as its high mark, the band
it still remembers (from when, how many files) and the directories it counted. ``--json``
keeps the stored values for machines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

MS_SUFFIX = "_ms"
# What a reader looks for first; a long table cell is cut at its end, so these lead.
FIRST = ("cursor", "files")


def utc(value: datetime) -> str:
    """``value`` as ISO 8601 UTC with ``Z`` (a naive datetime is taken as UTC)."""
    value = value if value.tzinfo else value.replace(tzinfo=UTC)
    text = value.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def epoch_ms(value: Any) -> str:
    """Epoch milliseconds as ISO 8601 UTC (not a number: as given)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return json.dumps(value, default=str)
    moment = datetime.fromtimestamp(float(value) / 1000, UTC)
    text = utc(moment)
    # Milliseconds are the unit: print them, never spurious microseconds.
    if moment.microsecond:
        text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return text


def file_marks(files: Mapping[str, Any]) -> str:
    """A file source's bookmark in one line: high mark, band, tracked directories."""
    high = files.get("high_mark_ms")
    if high is None:
        return "no file read yet (next run reads everything)"
    parts = [f"files up to {epoch_ms(high)}"]
    band = files.get("band_fingerprints") or []
    start = files.get("band_start_ms")
    if start is not None:
        parts.append(f"{len(band)} file(s) of the band after {epoch_ms(start)} remembered")
    directories = files.get("dir_old_counts") or []
    if directories:
        shown = []
        for entry in directories[:3]:
            directory, count = entry[0], entry[1]
            counted_to = f" to {epoch_ms(entry[2])}" if len(entry) > 2 else ""
            shown.append(f"{directory}: {count}{counted_to}")
        more = f" (+{len(directories) - 3} more)" if len(directories) > 3 else ""
        parts.append("directories " + "; ".join(shown) + more)
    return ", ".join(parts)


def value_text(name: str, value: Any) -> str:
    """One watermark value in human units (see the module docstring)."""
    if isinstance(value, datetime):
        return utc(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if name == "files" and isinstance(value, Mapping) and "high_mark_ms" in value:
        return f"[{file_marks(value)}]"
    if name.endswith(MS_SUFFIX) and isinstance(value, int | float) and not isinstance(value, bool):
        return epoch_ms(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{key}={value_text(str(key), value[key])}" for key in sorted(value))
        return "{" + inner + "}"
    return json.dumps(value, default=str, separators=(",", ":"))


def summary(values: Mapping[str, Any] | None) -> str:
    """Every value of a state, ``name=value``: the cursor and file marks first, then by name."""
    if values is None:
        return "(reset: next run loads everything)"
    names = sorted(
        values,
        key=lambda name: (name not in FIRST, FIRST.index(name) if name in FIRST else 0, name),
    )
    return ", ".join(f"{name}={value_text(name, values[name])}" for name in names) or "{}"
