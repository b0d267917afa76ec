"""A batch typed narrower than the target, whose values fit the stored type, is no type change.

Types inferred from one batch (JSON, CSV) or carried by older files describe that batch's
values, not the column: ordinary integers read as ``bigint`` after one 20-digit value widened
the target to ``decimal(20,0)``; a column null in every row reads as ``string``. Refusing such
a batch would stall every later run. ``as_stored`` casts each such column up to the stored
type before the schema is planned, in every ``--schema_evolution`` mode: narrower by the
widening table (``schema.evolution.is_widening``; no value checked), a number whose every value
the stored number type holds exactly (JSON's whole ``bigint`` amounts in a ``double`` column),
or text null in every row (one small aggregate, only for such columns). A value that does not
fit, or a type wider than the stored one, is left as read: the plan sees a real change. ``typed_watermark`` types a watermark
read as text whose values are all numbers or timestamps (never ordered as text, where ``"10"``
sorts before ``"9"``). Design: ``docs/schema-evolution.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, NumericType, StringType, StructType

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.schema.evolution import is_widening

# Tried in order on a text watermark: the first type every value parses as wins.
_INTEGRAL = r"^\s*[+-]?[0-9]{1,18}\s*$"  # 18 digits: every such value is a bigint


class TextWatermarkError(GlueIncrementalError, ValueError):
    """A watermark declared as text whose values are numbers or timestamps; ``column``
    names it."""

    def __init__(self, column: str, message: str) -> None:
        self.column = column
        super().__init__(message)


def _col(name: str) -> Column:
    return F.col(f"`{name}`")


def as_stored(
    rows: DataFrame, stored: StructType | None, *, partition_by: Sequence[str] = ()
) -> DataFrame:
    """``rows`` with each column whose type is narrower than the stored one (or text null in
    every row) cast to the stored type; every other column as read. At most one small read
    (none unless a text column meets a stored non-text one)."""
    if stored is None:
        return rows
    types = {field.name: field.dataType for field in stored.fields}
    casts: dict[str, DataType] = {}
    # Per column checked by value: what counts its rows that do not fit (none: cast it up).
    suspects: dict[str, Column] = {}
    for field in rows.schema.fields:
        name, read = field.name, field.dataType
        if name not in types or name in partition_by or read == types[name]:
            continue
        if is_widening(read, types[name]):
            casts[name] = types[name]
        elif isinstance(read, StringType) and not isinstance(types[name], StringType):
            suspects[name] = F.count(_col(name))
        elif (
            isinstance(read, NumericType)
            and isinstance(types[name], NumericType)
            and not is_widening(types[name], read)  # a wider type is a change, values aside
        ):
            suspects[name] = _count_inexact(name, read, types[name])
    if suspects:
        counts = rows.agg(*suspects.values()).first()
        assert counts is not None  # a global aggregate always has one row
        for name, count in zip(suspects, counts, strict=True):
            if not count:
                casts[name] = types[name]
    if not casts:
        return rows
    return rows.select(
        *[
            _col(name).cast(casts[name]).alias(name) if name in casts else _col(name)
            for name in rows.columns
        ]
    )


def _count_inexact(name: str, read: DataType, stored: DataType) -> Column:
    """The rows whose number ``stored`` does not hold exactly: the cast fails (overflow) or
    does not come back to the value (rounded). Compared as read: Spark would compare a bigint
    with a double as doubles, where 2**53 + 1 equals its rounding."""
    value = _col(name)
    cast = F.expr(f"try_cast(`{name}` AS {stored.simpleString()})")
    back = cast.cast(read)
    return F.count(F.when(value.isNotNull() & (cast.isNull() | (back != value)), True))


def typed_watermark(rows: DataFrame, column: str, *, declared: bool = False) -> DataFrame:
    """``rows`` with a text ``column`` whose every value is an integer, a number or a
    timestamp cast to ``bigint``, ``double`` or ``timestamp`` (the first that fits all; a
    blank value counts as none and reads null); as read when it is not text, null or blank
    in every row, or holds a value that is none of them.

    ``declared`` (``--source_schema`` said ``string``): such a column is refused in one line
    instead, since a text watermark orders ``"10"`` before ``"9"``. One small read when the
    column is text."""
    if column not in rows.columns or not isinstance(rows.schema[column].dataType, StringType):
        return rows
    value = _col(column)
    candidates: list[tuple[str, Column]] = [
        ("bigint", value.rlike(_INTEGRAL)),
        ("double", F.expr(f"try_cast(`{column}` AS DOUBLE)").isNotNull()),
        ("timestamp", F.expr(f"try_cast(`{column}` AS TIMESTAMP)").isNotNull()),
    ]
    # A blank value is no value (as CSV reads an empty field): null, the lowest watermark,
    # not a reason to order every other value as text.
    present = value.isNotNull() & (F.trim(value) != "")
    found = rows.agg(
        F.count(F.when(present, True)).alias("values"),
        *[F.count(F.when(present & fits, True)).alias(name) for name, fits in candidates],
        F.first(F.when(present, value), ignorenulls=True).alias("sample"),
    ).first()
    assert found is not None  # a global aggregate always has one row
    if not found["values"]:
        return rows
    for name, _ in candidates:
        if found[name] == found["values"]:
            if declared:
                raise TextWatermarkError(
                    column,
                    f"--watermark_column {column!r} is declared string in --source_schema but "
                    f"every value is a {name} (e.g. {found['sample']!r}), which text orders "
                    f"wrongly ('10' before '9'): declare it `{column} {name.upper()}`; "
                    "nothing was written",
                )
            return rows.withColumn(column, F.expr(f"try_cast(`{column}` AS {name.upper()})"))
    return rows
