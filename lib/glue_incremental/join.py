"""The incremental join's pure pieces: its spec, input checks and the per-partition join.

The join is *per partition*. Both sides are partitioned by the same columns
(``partition_by``), and rows only join within the same partition: the
partition columns are always part of the equality, in addition to
``join_keys`` (listing a partition column in ``join_keys`` too is allowed and
changes nothing). This is what makes the join incremental: an output
partition depends only on the same partition of each side, so when new data
lands in partition P on either side, recomputing output partition P from both
sides' full P is exactly a full recompute restricted to P. A join across
partitions (keys only) would let new data in P change output partition Q, and
could not be maintained by replacing only the affected partitions.

Equality rules
    Partition columns match null-safely (``<=>``): a null partition value
    (Hive's ``__HIVE_DEFAULT_PARTITION__``) is one partition, and its rows join
    each other. Join keys use SQL ``=``: a null key matches nothing (inner
    drops the row, left/full keep it unmatched), exactly as a full recompute.

Output columns, in this order
    1. the partition columns,
    2. the join keys that are not partition columns,
    3. the left side's other columns, in the left's order,
    4. the right side's other columns, in the right's order.

    Partition columns and keys come from the left for ``inner``/``left`` and
    are ``coalesce(left, right)`` for ``full`` (so a right-only row keeps its
    partition and key). A non-key column present on both sides (compared
    case-insensitively, as Spark resolves names) is renamed ``left_<name>``
    and ``right_<name>``; other columns keep their names. If a renamed column
    would still collide with another output column, ``validate_sides``
    rejects the input instead of guessing.

Key and partition column types must be equal on both sides (nullability
aside): an implicit cast (string vs int, date vs string) silently changes
which rows match, so the caller casts explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any, Literal, get_args

__all__ = [
    "JOIN_TYPES",
    "JoinInputError",
    "JoinLayout",
    "JoinSpec",
    "JoinSpecError",
    "JoinType",
    "join_partitions",
    "validate_sides",
]

JoinType = Literal["inner", "left", "full"]
JOIN_TYPES: tuple[str, ...] = get_args(JoinType)
SIDES = ("left", "right")


class JoinSpecError(ValueError):
    """The join's spec itself is invalid (checked at construction)."""


class JoinInputError(ValueError):
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

    columns: tuple[tuple[str, str, str], ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.columns]


def validate_sides(left_df: Any, right_df: Any, spec: JoinSpec) -> JoinLayout:
    """Check both sides against ``spec``; return the output layout.

    Raises ``JoinInputError`` (naming the side and column) when a side lacks a
    partition column or join key, repeats a column name, when a partition
    column or key has different types on the two sides, or when output names
    would collide. Only schemas are read: no Spark job runs.
    """
    schemas = {"left": left_df.schema, "right": right_df.schema}
    types: dict[str, dict[str, Any]] = {}
    for side, schema in schemas.items():
        fields: dict[str, Any] = {}
        for field in schema.fields:
            folded = [name for name in fields if name.lower() == field.name.lower()]
            if folded:
                raise JoinInputError(
                    side,
                    field.name,
                    f"appears twice (as {folded[0]!r}; Spark resolves names case-insensitively)",
                )
            fields[field.name] = field.dataType
        for kind, columns in (
            ("partition column", spec.partition_by),
            ("join key", spec.join_keys),
        ):
            for column in columns:
                if column not in fields:
                    near = [name for name in fields if name.lower() == column.lower()]
                    hint = f" (found {near[0]!r}: names are case-sensitive here)" if near else ""
                    raise JoinInputError(
                        side,
                        column,
                        f"{kind} is missing{hint}; {side} columns: {', '.join(fields) or 'none'}",
                    )
        types[side] = fields
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

    matched = set(spec.equality_columns)
    others = {side: [name for name in types[side] if name not in matched] for side in SIDES}
    folded_right = {name.lower() for name in others["right"]}
    folded_left = {name.lower() for name in others["left"]}
    columns: list[tuple[str, str, str]] = [(name, "both", name) for name in spec.equality_columns]
    for name in others["left"]:
        out = f"left_{name}" if name.lower() in folded_right else name
        columns.append((out, "left", name))
    for name in others["right"]:
        out = f"right_{name}" if name.lower() in folded_left else name
        columns.append((out, "right", name))
    seen: dict[str, tuple[str, str, str]] = {}
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
    return JoinLayout(tuple(columns))


def _strip_nullability(data_type: Any) -> Any:
    """The type with every nested ``nullable``/``containsNull`` set to True."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

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


def join_partitions(left_df: Any, right_df: Any, spec: JoinSpec) -> Any:
    """Join ``left_df`` and ``right_df`` per partition, with the layout of ``validate_sides``.

    The caller restricts both sides to the affected partitions first
    (``predicates.filter_partitions``). Both sides are renamed to positional
    internal names before joining, so two sides derived from the same
    DataFrame cannot produce ambiguous column references.
    """
    from pyspark.sql import functions as F

    layout = validate_sides(left_df, right_df, spec)
    internal = {
        "left": {name: f"__l{i}" for i, name in enumerate(left_df.columns)},
        "right": {name: f"__r{i}" for i, name in enumerate(right_df.columns)},
    }
    left = left_df.toDF(*internal["left"].values())
    right = right_df.toDF(*internal["right"].values())

    def side(which: str, name: str) -> Any:
        return F.col(internal[which][name])

    conditions = [side("left", c).eqNullSafe(side("right", c)) for c in spec.partition_by]
    conditions += [side("left", c) == side("right", c) for c in spec.key_columns]
    joined = left.join(right, reduce(lambda a, b: a & b, conditions), spec.join_type)

    selected = []
    for out, which, name in layout.columns:
        if which == "both":
            value = (
                F.coalesce(side("left", name), side("right", name))
                if spec.join_type == "full"
                else side("left", name)
            )
        else:
            value = side(which, name)
        selected.append(value.alias(out))
    return joined.select(*selected)
