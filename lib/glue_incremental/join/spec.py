"""The join's pure part: the spec, the side checks, partition arithmetic, the per-partition join.

Nothing here reads or writes: every function takes DataFrames or values and returns
DataFrames or values. Rows join only within the same partition (partition columns are
always part of the equality), which is what lets the job recompute partitions one by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any, Literal, get_args

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
)

from glue_incremental.errors import GlueIncrementalError

JoinType = Literal["inner", "left", "full"]
JOIN_TYPES: tuple[str, ...] = get_args(JoinType)
SIDES = ("left", "right")

# One output column: (output name, side, input name); side "both" is a matched column.
OutputColumn = tuple[str, str, str]


class JoinSpecError(GlueIncrementalError, ValueError):
    """The join's spec itself is invalid (checked at construction)."""


class JoinInputError(GlueIncrementalError, ValueError):
    """One side's DataFrame does not fit the spec; raised before anything is read or written."""

    def __init__(self, side: str, column: str, problem: str) -> None:
        self.side, self.column, self.problem = side, column, problem
        super().__init__(f"{side} side, column {column!r}: {problem}")


def _names(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")] if value.strip() else []
    try:
        names = tuple(value)
    except TypeError:
        raise JoinSpecError(f"{what} must be a sequence of column names, got {value!r}") from None
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise JoinSpecError(f"{what} must be non-empty column names, got {name!r}")
    if len(set(names)) != len(names):
        raise JoinSpecError(f"{what} repeats a column: {list(names)}")
    return names


@dataclass(frozen=True)
class JoinSpec:
    """What to join: keys, type, and the partition columns both sides share.

    Lists and comma-separated strings are accepted and stored as tuples.
    ``partition_by`` must be non-empty (the join is maintained per partition);
    ``join_keys`` must be non-empty and may overlap ``partition_by``.
    """

    join_keys: tuple[str, ...]
    join_type: JoinType = "inner"
    partition_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        keys = _names(self.join_keys, "join_keys")
        partitions = _names(self.partition_by, "partition_by")
        if not keys:
            raise JoinSpecError("join_keys must name at least one column")
        if not partitions:
            raise JoinSpecError(
                "partition_by must name at least one column: the incremental join "
                "recomputes whole partitions, so both sides must share partition columns"
            )
        join_type = self.join_type.strip().lower() if isinstance(self.join_type, str) else None
        if join_type not in JOIN_TYPES:
            raise JoinSpecError(
                f"join_type must be one of {', '.join(JOIN_TYPES)}, got {self.join_type!r}"
            )
        object.__setattr__(self, "join_keys", keys)
        object.__setattr__(self, "partition_by", partitions)
        object.__setattr__(self, "join_type", join_type)

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The join keys that are not partition columns."""
        return tuple(key for key in self.join_keys if key not in self.partition_by)

    @property
    def equality_columns(self) -> tuple[str, ...]:
        """Every column the join matches on: partition columns, then the other keys."""
        return self.partition_by + self.key_columns


@dataclass(frozen=True)
class JoinLayout:
    """Where every output column comes from: ``(output name, side, input name)``.

    ``side`` is ``"left"``, ``"right"`` or ``"both"`` (a matched column: the
    left's value, or ``coalesce(left, right)`` for a full join).
    """

    columns: tuple[OutputColumn, ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.columns]


def validate_sides(left_df: DataFrame, right_df: DataFrame, spec: JoinSpec) -> JoinLayout:
    """Check both sides against ``spec``; return the output layout.

    Raises ``JoinInputError`` (naming the side and column) when a side lacks a
    partition column or join key, repeats a column name, when a partition
    column or key has different types on the two sides, or when output names
    would collide. Only schemas are read: no Spark job runs.
    """
    types = {
        side: _side_fields(side, df.schema, spec)
        for side, df in (("left", left_df), ("right", right_df))
    }
    _check_equality_types(types, spec)
    columns = _output_columns(types, spec)
    _check_collisions(columns)
    return JoinLayout(tuple(columns))


def _side_fields(side: str, schema: StructType, spec: JoinSpec) -> dict[str, DataType]:
    """The side's columns by name, once each, holding every partition column and join key."""
    fields: dict[str, DataType] = {}
    for column in schema.fields:
        folded = [name for name in fields if name.lower() == column.name.lower()]
        if folded:
            raise JoinInputError(
                side,
                column.name,
                f"appears twice (as {folded[0]!r}; Spark resolves names case-insensitively)",
            )
        fields[column.name] = column.dataType
    for kind, required in (("partition column", spec.partition_by), ("join key", spec.join_keys)):
        for column_name in required:
            if column_name not in fields:
                raise _missing(side, column_name, kind, fields)
    return fields


def _missing(side: str, column: str, kind: str, fields: Mapping[str, Any]) -> JoinInputError:
    near = [name for name in fields if name.lower() == column.lower()]
    hint = f" (found {near[0]!r}: names are case-sensitive here)" if near else ""
    return JoinInputError(
        side, column, f"{kind} is missing{hint}; {side} columns: {', '.join(fields) or 'none'}"
    )


def _check_equality_types(types: Mapping[str, Mapping[str, DataType]], spec: JoinSpec) -> None:
    for column in spec.equality_columns:
        left_type, right_type = types["left"][column], types["right"][column]
        if _strip_nullability(left_type) != _strip_nullability(right_type):
            kind = "partition column" if column in spec.partition_by else "join key"
            raise JoinInputError(
                "right",
                column,
                f"{kind} type {right_type.simpleString()} differs from the left's "
                f"{left_type.simpleString()}; cast one side so both agree",
            )


def _output_columns(
    types: Mapping[str, Mapping[str, DataType]], spec: JoinSpec
) -> list[OutputColumn]:
    """Matched columns once, then each side's others; a name both sides use gets its side."""
    matched = set(spec.equality_columns)
    others = {side: [name for name in types[side] if name not in matched] for side in SIDES}
    folded = {side: {name.lower() for name in others[side]} for side in SIDES}
    columns: list[OutputColumn] = [(name, "both", name) for name in spec.equality_columns]
    for side, other in (("left", "right"), ("right", "left")):
        for name in others[side]:
            out = f"{side}_{name}" if name.lower() in folded[other] else name
            columns.append((out, side, name))
    return columns


def _check_collisions(columns: Sequence[OutputColumn]) -> None:
    seen: dict[str, OutputColumn] = {}
    for entry in columns:
        out, side, name = entry
        first = seen.setdefault(out.lower(), entry)
        if first is not entry:
            raise JoinInputError(
                side,
                name,
                f"output column {out!r} would collide with {first[0]!r} "
                f"(from the {first[1]} side's {first[2]!r}); rename one of them",
            )


def _strip_nullability(data_type: DataType) -> DataType:
    """The type with every nested ``nullable``/``containsNull`` set to True."""
    if isinstance(data_type, StructType):
        return StructType(
            [StructField(f.name, _strip_nullability(f.dataType), True) for f in data_type.fields]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(_strip_nullability(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(
            _strip_nullability(data_type.keyType), _strip_nullability(data_type.valueType), True
        )
    return data_type


def join_partitions(left_df: DataFrame, right_df: DataFrame, spec: JoinSpec) -> DataFrame:
    """Join ``left_df`` and ``right_df`` per partition, with the layout of ``validate_sides``.

    The caller restricts both sides to the affected partitions first
    (``partitions.predicates.filter_partitions``). Both sides are renamed to positional
    internal names before joining, so two sides derived from the same
    DataFrame cannot produce ambiguous column references.
    """
    layout = validate_sides(left_df, right_df, spec)
    internal = {
        "left": {name: f"__l{i}" for i, name in enumerate(left_df.columns)},
        "right": {name: f"__r{i}" for i, name in enumerate(right_df.columns)},
    }
    left = left_df.toDF(*internal["left"].values())
    right = right_df.toDF(*internal["right"].values())

    def side(which: str, name: str) -> Column:
        return F.col(internal[which][name])

    conditions = [side("left", c).eqNullSafe(side("right", c)) for c in spec.partition_by]
    conditions += [side("left", c) == side("right", c) for c in spec.key_columns]
    joined = left.join(right, reduce(lambda a, b: a & b, conditions), spec.join_type)
    coalesce = spec.join_type == "full"
    return joined.select(
        *[
            _output_value(side, which, name, coalesce).alias(out)
            for out, which, name in layout.columns
        ]
    )


def _output_value(side: Any, which: str, name: str, coalesce: bool) -> Column:
    if which != "both":
        return side(which, name)
    if coalesce:
        return F.coalesce(side("left", name), side("right", name))
    return side("left", name)
