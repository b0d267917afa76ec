"""How watermark values are stored: versioned, lossless JSON.

The whole ``watermarks`` mapping is one DynamoDB string ``{"v": 1, "values": {...}}``.
Floats round-trip bit for bit; ``datetime`` (aware, normalised to UTC, microseconds
kept), ``date`` and ``Decimal`` (exponent kept) are tagged. Naive datetimes, tuples,
NaN and infinities are rejected with ``InvalidWatermarkValue`` before anything is
written. ``decode`` dispatches on ``v``. Design: ``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import TypeAlias

from glue_incremental.errors import GlueIncrementalError, UnreadableState

# A cursor: the greatest watermark value a run loaded (a JDBC column's or a file's time).
CursorValue: TypeAlias = str | int | float | Decimal | datetime | date | None
# A value of a state as ``decode`` returns it: cursors, flags, lists and nested mappings.
StoredValue: TypeAlias = "CursorValue | bool | list[StoredValue] | dict[str, StoredValue]"
# A slot's values as read back (``encode`` takes any mapping and checks every value).
StateValues: TypeAlias = "dict[str, StoredValue]"

ENCODING_VERSION = 1
_TAGS = ("$datetime", "$date", "$decimal")


class InvalidWatermarkValue(GlueIncrementalError, ValueError):
    """A value that cannot be stored losslessly; ``path`` names where it is."""

    def __init__(self, path: str, value: object, reason: str) -> None:
        self.path = path
        self.value = value
        super().__init__(f"watermark value {path!s} = {value!r} cannot be stored: {reason}")


def encode(values: Mapping[str, object]) -> str:
    """Encode a mapping of watermark attributes; raises InvalidWatermarkValue."""
    if not isinstance(values, Mapping):
        raise InvalidWatermarkValue("watermarks", values, "expected a mapping of name -> value")
    try:
        payload = {"v": ENCODING_VERSION, "values": _to_json(dict(values), "watermarks")}
    except RecursionError:
        raise InvalidWatermarkValue(
            "watermarks", "...", "nested too deeply to be a watermark"
        ) from None
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)


def decode(text: str | None) -> StateValues | None:
    """Decode what ``encode`` produced; None stays None (a reset state)."""
    if text is None:
        return None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableState(
            text[:80], f"stored watermark value is not JSON ({error}): {text[:80]!r}"
        ) from None
    if payload is None:
        return None
    version = payload.get("v") if isinstance(payload, dict) else None
    if type(version) is int and version == 1 and "values" in payload:
        values = _from_json(payload["values"])
        if isinstance(values, dict):
            return values
        raise UnreadableState(
            text[:80], f"stored watermark values are not a mapping: {text[:80]!r}"
        )
    if type(version) is int and version > ENCODING_VERSION:
        raise UnreadableState(
            text[:80],
            f"stored watermark encoding v={version!r} is newer than this library understands "
            f"(knows v{ENCODING_VERSION}): upgrade glue_incremental",
        )
    raise UnreadableState(
        text[:80],
        f"stored watermark value is not a glue_incremental encoding (expected "
        f'{{"v": {ENCODING_VERSION}, "values": {{...}}}}): {text[:80]!r}',
    )


def normalise_datetime(value: datetime, path: str = "value") -> datetime:
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise InvalidWatermarkValue(
            path,
            value,
            "naive datetime; attach a timezone (for example value.replace(tzinfo=UTC)) "
            "so the stored cursor means one instant",
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidWatermarkValue(
            path, value, "its UTC instant is outside the years 1..9999 that datetime can hold"
        ) from None


def _to_json(value: object, path: str) -> object:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidWatermarkValue(path, value, "NaN and infinity do not order against data")
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidWatermarkValue(path, value, "NaN and infinity do not order against data")
        return {"$decimal": str(value)}
    if isinstance(value, datetime):
        return {"$datetime": normalise_datetime(value, path).isoformat(timespec="microseconds")}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, tuple):
        raise InvalidWatermarkValue(
            path,
            value,
            "tuples come back from JSON as lists and would not compare equal; use a list",
        )
    if isinstance(value, list):
        return [_to_json(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidWatermarkValue(f"{path}.{key!r}", item, "keys must be strings")
            if key.startswith("$"):
                raise InvalidWatermarkValue(
                    f"{path}.{key}", item, "keys starting with '$' are reserved"
                )
            out[key] = _to_json(item, f"{path}.{key}")
        return out
    raise InvalidWatermarkValue(path, value, f"type {type(value).__name__} is not JSON-encodable")


def _from_json(value: object) -> StoredValue:
    """JSON data (what ``json.loads`` returns) with the tagged values turned back."""
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    if isinstance(value, dict):
        if len(value) == 1:
            ((tag, raw),) = value.items()
            if tag == "$datetime":
                return datetime.fromisoformat(raw)
            if tag == "$date":
                return date.fromisoformat(raw)
            if tag == "$decimal":
                return Decimal(raw)
        return {key: _from_json(item) for key, item in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"not JSON data: {value!r}")  # json.loads returns nothing else
