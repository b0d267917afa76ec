"""What a run summary says about a state: a digest people can read, never the state itself.

A file bookmark holds up to thousands of fingerprints and directories; one
CloudWatch Logs event cannot carry that and on-call cannot read it. The digest
keeps the cursor (or high mark), the band's size, the number of tracked
directories and the encoded size in bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import TypeAlias

from glue_incremental.watermarks.encoding import encode

# What the digest shows of one value: a scalar, dates as ISO text, long text cut.
DigestValue: TypeAlias = bool | int | float | str | None


def state_bytes(values: Mapping[str, object] | None) -> int:
    """The UTF-8 size of the state as the watermark store encodes it (0 for no state)."""
    return 0 if values is None else len(encode(values).encode())


def state_digest(
    values: Mapping[str, object] | None,
) -> dict[str, DigestValue | dict[str, DigestValue]] | None:
    """Cursor, file high mark, band size, tracked directories and state bytes; None stays None."""
    if values is None:
        return None
    digest: dict[str, DigestValue | dict[str, DigestValue]] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            digest[key] = _files_digest(value)
        elif isinstance(value, list | tuple):
            digest[f"{key}_count"] = len(value)
        else:
            digest[key] = _scalar(value)
    digest["state_bytes"] = state_bytes(values)
    return digest


# A file bookmark's collections, by the name on-call reads.
_COUNTED = {"band_fingerprints": "band_size", "dir_old_counts": "tracked_directories"}


def _files_digest(files: Mapping[str, object]) -> dict[str, DigestValue]:
    summary: dict[str, DigestValue] = {}
    for key, value in files.items():
        if isinstance(value, list | tuple | Mapping):
            summary[_COUNTED.get(key, f"{key}_count")] = len(value)
        else:
            summary[key] = _scalar(value)
    return summary


def _scalar(value: object) -> DigestValue:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float):
        return value
    text = str(value)
    return text if len(text) <= 200 else text[:200] + "..."
