"""Helpers of the watermark store's tests: counting DynamoDB requests, exact value equality."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any


class Requests:
    """Counts the DynamoDB requests a client sends (a botocore event hook)."""

    def __init__(self, client: Any) -> None:
        self.operations: list[str] = []
        client.meta.events.register("before-send.dynamodb.*", self._seen)

    def _seen(self, event_name: str, **_kwargs: Any) -> None:
        self.operations.append(event_name.rsplit(".", 1)[-1])

    def clear(self) -> None:
        self.operations.clear()


def same(a: object, b: object) -> bool:
    """Equal, of the same type, floats bit for bit (0.0 vs -0.0), Decimals with their exponent,
    datetimes aware and in UTC."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex()  # type: ignore[union-attr]
    if isinstance(a, Decimal):
        return a.as_tuple() == b.as_tuple()  # type: ignore[union-attr]
    if isinstance(a, datetime):
        return a == b and b.tzinfo == UTC and a.utcoffset() is not None  # type: ignore[union-attr]
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[union-attr]
    return a == b
