"""Partition values checked against their column's Spark type, and the errors about partitions.

``coerce(column, value, data_type)`` returns the value in the column's own type
(``"03"`` -> ``3`` for an int column) or raises ``InvalidPartitionValue`` naming
the column, the value and why. ``None`` is always allowed. Used by
``predicates`` before any literal reaches a predicate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, TypeAlias

from pyspark.sql.types import DataType, DecimalType

from glue_incremental.errors import GlueIncrementalError

# A partition as text, as its directory names it (a Hive null is None).
PartitionValues = tuple[str | None, ...]
# One partition column's value in its column's type (``coerce``), or as text; None is null.
PartitionValue: TypeAlias = str | int | float | bool | Decimal | date | datetime | None
# A partition as typed values (a join side's or an engine slot's), in partition_by order.
# (Still Any: the join and the engine pass these where text values are taken; their types
# narrow to ``tuple[PartitionValue, ...]`` once those call sites do.)
Partition = tuple[Any, ...]


class PartitionError(GlueIncrementalError, ValueError):
    """Base class of this module's errors."""


class MissingPartitionColumn(PartitionError):
    def __init__(self, side: str, column: str, available: Sequence[str]) -> None:
        self.side, self.column, self.available = side, column, list(available)
        hint = ""
        folded = [name for name in available if name.lower() == column.lower()]
        if folded:
            hint = f" (did you mean {folded[0]!r}? names are case-sensitive here)"
        super().__init__(
            f"{side}: partition column {column!r} is missing{hint}; "
            f"available columns: {', '.join(map(repr, available)) or 'none'}"
        )


class PartitionTypeMismatch(PartitionError):
    def __init__(self, column: str, types: dict[str, str]) -> None:
        self.column, self.types = column, dict(types)
        sides = ", ".join(f"{side}: {kind}" for side, kind in types.items())
        super().__init__(
            f"partition column {column!r} has different types ({sides}); "
            "cast one side so both agree"
        )


class InvalidPartitionValue(PartitionError):
    """A partition value that its column's type cannot hold."""

    def __init__(self, column: str, value: object, type: DataType | str, reason: str = "") -> None:
        self.column, self.value = column, value
        self.type = type.simpleString() if isinstance(type, DataType) else str(type)
        detail = f": {reason}" if reason else ""
        super().__init__(
            f"invalid partition value {value!r} for column {column!r} of type {self.type}{detail}"
        )


# The types a job may declare a partition column's values to hold (--partition_types).
PARTITION_TYPES = ("string", "int", "bigint", "date")
_INT_RE = re.compile(r"[+-]?\d+")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


class _Rejected(Exception):
    """A partition value a column's type cannot hold; ``_coerce`` names the column."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def coerce(column: str, value: object, data_type: DataType) -> PartitionValue:
    if value is None:
        return None
    kind = data_type.simpleString()
    try:
        return _coercer(kind)(value, kind, data_type)
    except _Rejected as rejected:
        raise InvalidPartitionValue(column, value, data_type, rejected.reason) from None


_Coercer: TypeAlias = Callable[[object, str, DataType], PartitionValue]


def _coercer(kind: str) -> _Coercer:
    if kind == "string" or kind.startswith(("varchar", "char")):
        return _as_string
    if kind in _INT_BITS:
        return _as_int
    if kind.startswith("decimal"):
        return _as_decimal
    coercers: dict[str, _Coercer] = {
        "date": _as_date,
        "timestamp": _as_timestamp,
        "timestamp_ntz": _as_timestamp,
        "boolean": _as_boolean,
        "float": _as_float,
        "double": _as_float,
    }
    return coercers.get(kind, _unsupported)


def _unsupported(value: object, kind: str, data_type: DataType) -> PartitionValue:
    raise _Rejected("unsupported partition column type")


def _as_string(value: object, kind: str, data_type: DataType) -> str:
    if not isinstance(value, str):
        raise _Rejected("expected a string")
    return value


def _as_int(value: object, kind: str, data_type: DataType) -> int:
    if isinstance(value, bool):
        raise _Rejected("expected an integer")
    if isinstance(value, str):
        if not _INT_RE.fullmatch(value.strip()):
            raise _Rejected("not an integer")
        number = int(value)
    elif isinstance(value, int):
        number = value
    else:
        raise _Rejected("expected an integer")
    bits = _INT_BITS[kind]
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise _Rejected("out of range")
    return number


def _as_date(value: object, kind: str, data_type: DataType) -> date:
    if isinstance(value, datetime):
        raise _Rejected("expected a date, not a datetime")
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE_RE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError as error:
            raise _Rejected(str(error)) from None
    raise _Rejected("not a valid date (YYYY-MM-DD)")


def _as_timestamp(value: object, kind: str, data_type: DataType) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise _Rejected("not a valid ISO-8601 timestamp") from None
    elif isinstance(value, datetime):
        parsed = value
    else:
        raise _Rejected("expected a timestamp")
    if kind == "timestamp":
        # Sessions run in UTC (glue_incremental.spark): a naive value means UTC.
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
    if parsed.tzinfo is not None:
        raise _Rejected("timestamp_ntz cannot hold a time zone")
    return parsed


def _as_boolean(value: object, kind: str, data_type: DataType) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise _Rejected("expected true or false")


def _as_float(value: object, kind: str, data_type: DataType) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise _Rejected("expected a number")
    try:
        number = float(value)
    except ValueError:
        raise _Rejected("not a number") from None
    if not math.isfinite(number):
        raise _Rejected("NaN and infinity are not partition values")
    return number


def _as_decimal(value: object, kind: str, data_type: DataType) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | Decimal):
        raise _Rejected("expected a decimal")
    try:
        decimal = Decimal(str(value).strip())
    except InvalidOperation:
        raise _Rejected("not a decimal") from None
    if not decimal.is_finite():
        raise _Rejected("not a finite decimal")
    assert isinstance(data_type, DecimalType)  # _coercer: a decimal(p,s) kind
    precision, scale = data_type.precision, data_type.scale
    exponent = decimal.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > scale:
        raise _Rejected(f"more than {scale} decimal places")
    if abs(decimal) >= Decimal(10) ** (precision - scale):
        raise _Rejected(f"does not fit decimal({precision},{scale})")
    return decimal
