"""Helpers of the watermark store's tests: counting DynamoDB requests, exact value equality,
the values a watermark may hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

# Value names: the encoding reserves a leading "$" for its type tags.
VALUE_NAMES = st.text(min_size=1, max_size=12).filter(lambda name: not name.startswith("$"))
_FIXED_OFFSETS = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23))
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.1, 1e-300, 5e-324, -0.0]),
    st.text(max_size=20),
    st.decimals(allow_nan=False, allow_infinity=False),
    # A day away from the ends of datetime's range: normalising to UTC must stay inside it.
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=_FIXED_OFFSETS
    ),
    st.dates(),
)


def watermark_values(*, max_size: int, max_leaves: int) -> st.SearchStrategy[Any]:
    """Any value a watermark may hold: JSON's, exact floats and Decimals, aware datetimes, dates,
    nested in lists and maps of at most ``max_size`` items."""
    return st.recursive(
        _SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=max_size),
            st.dictionaries(VALUE_NAMES, children, max_size=max_size),
        ),
        max_leaves=max_leaves,
    )


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
