"""Partition predicates for a list of affected partitions, built safely and compactly.

Turns partitions (tuples aligned to the partition columns) into a Spark SQL string
for Glue's ``push_down_predicate`` (``to_sql_predicate``), a ``Column``
(``partition_filter``) or a filtered DataFrame (``filter_partitions``) pruned at the
scan. Values are always escaped string literals, identifiers backtick-quoted;
partitions are grouped into ``IN`` lists; an empty list gives ``false``. A predicate
over Glue's 2,048-character limit raises ``PredicateTooLarge``. Quoting rules and
grouping: ``docs/partition-predicates.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import reduce

from py4j.java_gateway import JavaObject
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StructField, StructType

from glue_incremental.partitions.values import (
    InvalidPartitionValue,
    MissingPartitionColumn,
    PartitionError,
    PartitionTypeMismatch,
    PartitionValue,
    coerce,
)

__all__ = [
    "DEFAULT_LITERAL_LIMIT",
    "DEFAULT_MAX_PREDICATE_LENGTH",
    "FileScan",
    "InvalidPartitionValue",
    "MissingPartitionColumn",
    "PartitionError",
    "PartitionTypeMismatch",
    "PredicateTooLarge",
    "affected_partitions",
    "filter_partitions",
    "normalise_partitions",
    "partition_counts",
    "partition_filter",
    "quote_identifier",
    "scanned_files",
    "sql_string_literal",
    "to_sql_predicate",
    "validate_partition_values",
]

# See the module docstring: Glue Data Catalog's GetPartitions Expression limit.
DEFAULT_MAX_PREDICATE_LENGTH = 2048
# filter_partitions: up to this many partitions become a literal predicate.
# Each literal costs a py4j round trip (~0.3 ms) and grows the plan; above it
# a broadcast semi-join prunes as exactly, through Dynamic Partition Pruning.
DEFAULT_LITERAL_LIMIT = 500

_SCALAR_TYPES = (str, int, float, Decimal, date, bool)
_MARKER = "__glue_incremental_keep"
_KEY = "__glue_incremental_partition"


class PredicateTooLarge(PartitionError):
    def __init__(self, length: int, limit: int) -> None:
        self.length, self.limit = length, limit
        super().__init__(
            f"partition predicate is {length} characters, over the limit of {limit}; "
            "load the table as a DataFrame and use filter_partitions (no length limit), "
            "or split the partitions into several loads"
        )


# --------------------------------------------------------------------------- partitions


def normalise_partitions(
    partitions: Iterable[object], columns: Sequence[str]
) -> list[PartitionRow]:
    """Distinct partition tuples in a deterministic order (nulls last per level).

    With one partition column a bare scalar is accepted for ``(scalar,)``.
    """
    columns = _check_columns(columns)
    seen: dict[PartitionRow, None] = {}
    for raw in partitions:
        if isinstance(raw, tuple | list):
            row: tuple[object, ...] = tuple(raw)
        elif len(columns) == 1 and (raw is None or isinstance(raw, _SCALAR_TYPES)):
            row = (raw,)
        else:
            raise PartitionError(
                f"partition {raw!r} is not a tuple of {len(columns)} values for {list(columns)}"
            )
        if len(row) != len(columns):
            raise PartitionError(
                f"partition {row!r} has {len(row)} values, expected {len(columns)} "
                f"for columns {list(columns)}"
            )
        values: list[PartitionValue] = []
        for column, value in zip(columns, row, strict=True):
            if not (value is None or isinstance(value, _SCALAR_TYPES)):
                raise InvalidPartitionValue(
                    column, value, type(value).__name__, "not a scalar partition value"
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidPartitionValue(column, value, "double", "NaN/infinity")
            values.append(value)
        seen.setdefault(tuple(values), None)
    return sorted(seen, key=lambda row: tuple(_sort_key(value) for value in row))


def _sort_key(value: PartitionValue) -> tuple:
    if value is None:
        return (1, "", "")
    if isinstance(value, datetime):
        return (0, "datetime", value.isoformat())
    return (0, type(value).__name__, value)


def _check_columns(columns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(columns, str):
        columns = (columns,)
    columns = tuple(columns)
    if not columns:
        raise PartitionError("at least one partition column is required")
    for column in columns:
        if not isinstance(column, str) or not column:
            raise PartitionError(f"partition column names must be non-empty strings: {column!r}")
    if len(set(columns)) != len(columns):
        raise PartitionError(f"partition columns repeat a name: {list(columns)}")
    return columns


def affected_partitions(
    *frames: DataFrame, columns: Sequence[str], names: Sequence[str] | None = None
) -> list[PartitionRow]:
    """The distinct partition tuples touched by any of ``frames``, sorted.

    One Spark action in total, whatever the number of frames or partitions:
    the frames' partition columns are unioned, de-duplicated and collected.
    Every frame must have every column, with the same type in all frames
    (``MissingPartitionColumn`` / ``PartitionTypeMismatch`` name the side;
    ``names`` labels the frames, default ``frame 0``, ``frame 1``...).
    """
    counts = partition_counts(*frames, columns=columns, names=names)
    return normalise_partitions(
        (partition for by_partition in counts.values() for partition in by_partition), columns
    )


def partition_counts(
    *frames: DataFrame, columns: Sequence[str], names: Sequence[str] | None = None
) -> dict[str, dict[PartitionRow, int]]:
    """Rows per partition tuple, per frame label; one Spark action in total.

    Same checks and labels as ``affected_partitions`` (which is the union of
    the keys); frames with no rows map to ``{}``.
    """
    columns = _check_columns(columns)
    if names is not None and len(names) != len(frames):
        raise PartitionError(f"{len(names)} names given for {len(frames)} frames")
    labels = list(names) if names is not None else [f"frame {i}" for i in range(len(frames))]
    if len(set(labels)) != len(labels):
        raise PartitionError(f"frame names repeat: {labels}")
    if not frames:
        return {}
    types: dict[str, dict[str, str]] = {column: {} for column in columns}
    for label, frame in zip(labels, frames, strict=True):
        fields = {field.name: field.dataType for field in frame.schema.fields}
        for column in columns:
            if column not in fields:
                raise MissingPartitionColumn(label, column, list(fields))
            types[column][label] = fields[column].simpleString()
    for column, by_side in types.items():
        if len(set(by_side.values())) > 1:
            raise PartitionTypeMismatch(column, by_side)
    side = "__glue_incremental_frame"
    selected = [
        frame.select(F.lit(index).alias(side), *[_col(column) for column in columns])
        for index, frame in enumerate(frames)
    ]
    rows = (
        reduce(lambda a, b: a.union(b), selected)
        .groupBy(side, *[_col(column) for column in columns])
        .count()
        .collect()
    )
    counts: dict[str, dict[PartitionRow, int]] = {label: {} for label in labels}
    for row in rows:
        values = tuple(row[1 : 1 + len(columns)])
        counts[labels[row[0]]][values] = int(row[-1])
    return {
        label: {p: by_partition[p] for p in normalise_partitions(by_partition, columns)}
        for label, by_partition in counts.items()
    }


# --------------------------------------------------------------------------- validation


def validate_partition_values(
    partitions: Iterable[object], columns: Sequence[str], schema: StructType | DataFrame
) -> list[PartitionRow]:
    """Check every value against its column's type in ``schema``; return them typed.

    ``schema`` is a ``StructType`` (or anything with ``.schema``, a DataFrame).
    A value the type cannot hold (``"2024-13-45"`` for a date, ``"abc"`` for an
    int) raises ``InvalidPartitionValue(column, value, type)``. Strings that do
    parse are converted (``"03"`` -> ``3`` for an int column) so literals
    compare in the column's own type. ``None`` is always allowed.
    """
    columns = _check_columns(columns)
    struct = schema.schema if isinstance(schema, DataFrame) else schema
    fields = {field.name: field.dataType for field in struct.fields}
    for column in columns:
        if column not in fields:
            raise MissingPartitionColumn("schema", column, list(fields))
    typed = [
        tuple(
            coerce(column, value, fields[column])
            for column, value in zip(columns, row, strict=True)
        )
        for row in normalise_partitions(partitions, columns)
    ]
    return normalise_partitions(typed, columns)


# --------------------------------------------------------------------------- predicate plan


# One partition's values as callers give them (a path's text, or typed values).
PartitionRow = tuple[PartitionValue, ...]


@dataclass(frozen=True)
class _In:
    """``column`` is one of ``values`` (non-null, sorted), or null when ``has_null``."""

    column: str
    values: PartitionRow
    has_null: bool


@dataclass(frozen=True)
class _And:
    """Every part holds: one ``_In`` per level, then a deeper subtree's terms."""

    parts: tuple[_Node, ...]


@dataclass(frozen=True)
class _Or:
    """Any part holds; no parts: false."""

    parts: tuple[_Node, ...]


_Node = _In | _And | _Or
_FALSE = _Or(())


def _plan(partitions: Iterable[object], columns: Sequence[str]) -> _Node:
    columns = _check_columns(columns)
    rows = normalise_partitions(partitions, columns)
    if not rows:
        return _FALSE
    return _group(rows, columns, 0)


def _group(rows: list[PartitionRow], columns: tuple[str, ...], level: int) -> _Node:
    column = columns[level]
    if level == len(columns) - 1:
        values = tuple(dict.fromkeys(row[level] for row in rows if row[level] is not None))
        return _In(column, values, any(row[level] is None for row in rows))
    children: dict[PartitionValue, list[PartitionRow]] = {}
    for row in rows:  # rows are sorted, so values come in order
        children.setdefault(row[level], []).append(row)
    by_subtree: dict[_Node, list[PartitionValue]] = {}
    for value, child_rows in children.items():
        by_subtree.setdefault(_group(child_rows, columns, level + 1), []).append(value)
    terms: list[_Node] = []
    for subtree, subtree_values in by_subtree.items():
        present = tuple(value for value in subtree_values if value is not None)
        head = _In(column, present, len(present) != len(subtree_values))
        tail = subtree.parts if isinstance(subtree, _And) else (subtree,)
        terms.append(_And((head, *tail)))
    return terms[0] if len(terms) == 1 else _Or(tuple(terms))


# --------------------------------------------------------------------------- SQL text


def quote_identifier(name: str) -> str:
    """``name`` as a Spark SQL identifier: backticks, inner backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def sql_string_literal(value: object, *, escaped_string_literals: bool = False) -> str:
    """``value`` as a Spark SQL string literal that means exactly ``value``.

    See the module docstring for the escaping rules. Dates, numbers and
    booleans are rendered as text; Spark casts the literal to the column type.
    """
    text = _as_text(value)
    if escaped_string_literals:
        if "'" in text or "\\" in text:
            return f"CAST(X'{text.encode('utf-8').hex().upper()}' AS STRING)"
        return f"'{text}'"
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PartitionError(f"{value!r} cannot be a partition value")
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    raise PartitionError(f"{value!r} ({type(value).__name__}) cannot be a partition value")


def to_sql_predicate(
    partitions: Iterable[object],
    columns: Sequence[str],
    *,
    max_length: int | None = DEFAULT_MAX_PREDICATE_LENGTH,
    escaped_string_literals: bool = False,
) -> str:
    """A Spark SQL predicate matching exactly ``partitions`` (for ``push_down_predicate``).

    Raises ``PredicateTooLarge(length, limit)`` past ``max_length`` characters
    (``None``: no limit).
    """
    text = _sql(_plan(partitions, columns), escaped_string_literals, top=True)
    if max_length is not None and len(text) > max_length:
        raise PredicateTooLarge(len(text), max_length)
    return text


def _sql(node: _Node, escaped: bool, *, top: bool = False) -> str:
    if isinstance(node, _In):
        name = quote_identifier(node.column)
        literals = [sql_string_literal(v, escaped_string_literals=escaped) for v in node.values]
        terms = []
        if len(literals) == 1:
            terms.append(f"{name} = {literals[0]}")
        elif literals:
            terms.append(f"{name} IN ({','.join(literals)})")
        if node.has_null:
            terms.append(f"{name} IS NULL")
        return terms[0] if len(terms) == 1 else f"({' OR '.join(terms)})"
    if isinstance(node, _And):
        text = " AND ".join(_sql(part, escaped) for part in node.parts)
        return text if top else f"({text})"
    if not node.parts:
        return "false"
    text = " OR ".join(_sql(part, escaped) for part in node.parts)
    return text if top else f"({text})"


# --------------------------------------------------------------------------- Columns


def _col(name: str) -> Column:
    return F.col(quote_identifier(name))


def partition_filter(
    partitions: Iterable[object],
    columns: Sequence[str],
    *,
    schema: StructType | DataFrame | None = None,
) -> Column:
    """The same predicate as ``to_sql_predicate``, as a ``Column`` (no SQL text).

    With ``schema`` (a StructType or DataFrame) values are first checked and
    converted to their column's type (``validate_partition_values``).
    """
    if schema is not None:
        partitions = validate_partition_values(partitions, columns, schema)
    return _column(_plan(partitions, columns))


def _column(node: _Node) -> Column:
    if isinstance(node, _In):
        column = _col(node.column)
        terms = []
        if len(node.values) == 1:
            terms.append(column == F.lit(node.values[0]))
        elif node.values:
            terms.append(column.isin(list(node.values)))
        if node.has_null:
            terms.append(column.isNull())
        return reduce(lambda a, b: a | b, terms)
    if isinstance(node, _And):
        return reduce(lambda a, b: a & b, (_column(part) for part in node.parts))
    if not node.parts:
        return F.lit(False)
    return reduce(lambda a, b: a | b, (_column(part) for part in node.parts))


def filter_partitions(
    df: DataFrame,
    partitions: Iterable[object],
    columns: Sequence[str],
    *,
    literal_limit: int = DEFAULT_LITERAL_LIMIT,
) -> DataFrame:
    """``df`` restricted to ``partitions``, pruned at the file scan.

    Values are validated against ``df``'s partition column types first
    (``InvalidPartitionValue``). Up to ``literal_limit`` partitions: a literal
    predicate, shown in the scan's ``PartitionFilters`` and pruned while
    planning. Above it: a left semi-join with a broadcast DataFrame of the
    partition tuples, keyed on ``struct(<partition columns>)``, which Spark's
    Dynamic Partition Pruning turns into
    ``PartitionFilters: [dynamicpruningexpression(struct(...) IN dynamicpruning#..)]``
    so only those partitions' files are read (exactly those: one struct key,
    not a cross product of per-column value sets). Rows are the same either way.
    Null partition values match null partitions in both paths.
    """

    columns = _check_columns(columns)
    typed = validate_partition_values(partitions, columns, df.schema)
    if len(typed) <= literal_limit:
        return df.where(_column(_plan(typed, columns)))
    fields = {field.name: field for field in df.schema.fields}
    schema = StructType(
        [StructField(f"p{i}", fields[column].dataType, True) for i, column in enumerate(columns)]
        + [StructField(_MARKER, IntegerType(), False)]
    )
    wanted = (
        df.sparkSession.createDataFrame([(*row, 1) for row in typed], schema)
        # A comparison on data Spark cannot fold: DPP only prunes from a side
        # with a "likely selective" filter (PartitionPruning.hasSelectivePredicate).
        .where(F.col(_MARKER) == 1)
        .select(F.struct(*[F.col(f"p{i}") for i in range(len(columns))]).alias(_KEY))
    )
    key = F.struct(*[_col(column).alias(f"p{i}") for i, column in enumerate(columns)])
    return df.join(F.broadcast(wanted), key == F.col(_KEY), "left_semi")


# --------------------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class FileScan:
    """One file scan of an executed plan: its partition filters and what it read."""

    partition_filters: tuple[str, ...]
    partitions: int
    files: tuple[str, ...]


def scanned_files(df: DataFrame) -> list[FileScan]:
    """The file scans of ``df``'s executed plan and the partitions/files they read.

    Call it after an action on this same DataFrame (``df.collect()``), so
    dynamic pruning has run. ``df.inputFiles()`` is no substitute: for a
    path-based table it lists every file of the location, pruned or not.
    """
    scans: list[FileScan] = []

    def walk(plan: JavaObject) -> None:
        name = plan.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            walk(plan.executedPlan())
            return
        if name.endswith("QueryStageExec"):
            walk(plan.plan())
            return
        if name == "FileSourceScanExec":
            directories = plan.dynamicallySelectedPartitions()
            files: list[str] = []
            for i in range(len(directories)):
                statuses = directories[i].files()
                files.extend(statuses.apply(j).getPath().toString() for j in range(statuses.size()))
            filters = plan.partitionFilters()
            scans.append(
                FileScan(
                    partition_filters=tuple(
                        filters.apply(i).toString() for i in range(filters.size())
                    ),
                    partitions=len(directories),
                    files=tuple(sorted(files)),
                )
            )
        children = plan.children()
        for i in range(children.size()):
            walk(children.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    return scans
