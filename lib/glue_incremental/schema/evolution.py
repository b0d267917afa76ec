"""What a source's schema change does to the target: typed changes and the resolved schema.

Pure (``StructType`` in, dataclasses out, no SparkSession). Modes of ``--schema_evolution``:
``add_columns`` (new source columns join the target, older rows read null), ``rescue``
(new columns and misfit values go into one JSON column ``_rescued_data``) and ``fail``
(any new or missing column stops the run before anything is written). In every mode a
safe widening (int to bigint, float to double, int to double, a wider decimal, date to
timestamp) widens the target; a narrowing or incompatible type is a ``SchemaChangeError``
unless ``rescue`` keeps the value. A batch typed narrower than the target is cast up before
this plan (``schema.inferred_types.as_stored``). Outside ``fail`` a column gone from the source
stays, null for new rows. The first run (no target schema) has no changes; a full reload
(``reload``) takes the source's type of every column it reads (``Retyped``: the stored type
was wrong, and every row is rewritten). Design: ``docs/schema-evolution.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from glue_incremental.errors import GlueIncrementalError

SchemaEvolution = Literal["add_columns", "rescue", "fail"]
SCHEMA_EVOLUTIONS: tuple[SchemaEvolution, ...] = ("add_columns", "rescue", "fail")
RESCUED_COLUMN = "_rescued_data"  # Databricks Auto Loader's name for it

_INTEGRAL_RANK: dict[type[DataType], int] = {ByteType: 0, ShortType: 1, IntegerType: 2, LongType: 3}
_INTEGRAL_DIGITS: dict[type[DataType], int] = {
    ByteType: 3,
    ShortType: 5,
    IntegerType: 10,
    LongType: 19,
}


class SchemaChangeError(GlueIncrementalError, ValueError):
    """A source column whose type the target cannot take (or, with ``fail``, any new or
    missing column); ``column`` is its name, ``source_type``/``target_type`` its types
    (None where the column is absent on that side)."""

    def __init__(
        self, column: str, source_type: str | None, target_type: str | None, message: str
    ) -> None:
        self.column, self.source_type, self.target_type = column, source_type, target_type
        super().__init__(message)


@dataclass(frozen=True)
class Added:
    """A column the target gains (a new source column, or ``_rescued_data``)."""

    column: str
    type: DataType

    def describe(self) -> str:
        return f"added {self.column} {self.type.simpleString()}"


@dataclass(frozen=True)
class Missing:
    """A target column the source no longer has: kept, null for new rows."""

    column: str
    type: DataType

    def describe(self) -> str:
        return f"missing {self.column} (kept, null for new rows)"


@dataclass(frozen=True)
class Widened:
    """A target column whose type widens safely to the source's."""

    column: str
    old: DataType
    new: DataType

    def describe(self) -> str:
        return f"widened {self.column} {self.old.simpleString()} to {self.new.simpleString()}"


@dataclass(frozen=True)
class Retyped:
    """A full reload's column whose stored type is neither the source's nor wider: the
    reload rewrites every row, so the type it reads now wins (a CSV loaded as text before)."""

    column: str
    old: DataType
    new: DataType

    def describe(self) -> str:
        return f"retyped {self.column} {self.old.simpleString()} to {self.new.simpleString()}"


@dataclass(frozen=True)
class Rescued:
    """With ``rescue``: a source column whose values go to ``_rescued_data`` when they do not
    fit the target's type (``target`` None: a new column, always rescued)."""

    column: str
    source: DataType
    target: DataType | None

    def describe(self) -> str:
        into = f"not {self.target.simpleString()}" if self.target else "new"
        return f"rescued {self.column} ({self.source.simpleString()}, {into})"


Change = Added | Missing | Widened | Retyped | Rescued


@dataclass(frozen=True)
class SchemaPlan:
    """The changes a run makes and the target schema after it (target order, new last)."""

    changes: tuple[Change, ...]
    resolved: StructType
    # A full reload: every stored row is replaced by the publish, none needs rewriting first.
    reload: bool = False

    @property
    def added(self) -> tuple[Added, ...]:
        return tuple(c for c in self.changes if isinstance(c, Added))

    @property
    def missing(self) -> tuple[Missing, ...]:
        return tuple(c for c in self.changes if isinstance(c, Missing))

    @property
    def widened(self) -> tuple[Widened, ...]:
        return tuple(c for c in self.changes if isinstance(c, Widened))

    @property
    def retyped(self) -> tuple[Retyped, ...]:
        return tuple(c for c in self.changes if isinstance(c, Retyped))

    @property
    def rescued(self) -> tuple[Rescued, ...]:
        return tuple(c for c in self.changes if isinstance(c, Rescued))

    @property
    def evolves_target(self) -> bool:
        """True if the target's stored schema changes (columns added, widened or retyped)."""
        return bool(self.added or self.widened or self.retyped)

    def describe(self) -> list[str]:
        """One phrase per change, for the summary line."""
        return [change.describe() for change in self.changes]


def is_widening(old: DataType, new: DataType) -> bool:
    """True if every ``old`` value is exactly a ``new`` value (and the types differ)."""
    if old == new:
        return False
    if type(old) in _INTEGRAL_RANK and type(new) in _INTEGRAL_RANK:
        return _INTEGRAL_RANK[type(old)] < _INTEGRAL_RANK[type(new)]
    if isinstance(old, FloatType) and isinstance(new, DoubleType):
        return True
    if type(old) in _INTEGRAL_RANK and isinstance(new, DoubleType):
        # A double holds every integer of up to 15 digits exactly; a bigint's 19 it does not.
        return _INTEGRAL_DIGITS[type(old)] <= 15
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if isinstance(old, DecimalType) and type(new) in _INTEGRAL_RANK:
        return False
    if type(old) in _INTEGRAL_RANK and isinstance(new, DecimalType):
        digits = _INTEGRAL_DIGITS[type(old)]
        return new.precision - new.scale >= digits
    return isinstance(old, DateType) and isinstance(new, TimestampType | TimestampNTZType)


def plan(
    source: StructType,
    target: StructType | None,
    mode: SchemaEvolution,
    *,
    partition_by: Sequence[str] = (),
    reload: bool = False,
) -> SchemaPlan:
    """Compare ``source`` with ``target`` (None: the first write, no changes).

    Partition columns are compared by name only (a Parquet target stores them as
    strings). Raises ``SchemaChangeError`` for a narrowing or incompatible type (every
    mode but ``rescue``) and, with ``fail``, for the first new or missing column.
    ``reload`` (a full reload: every row is rewritten): a column of another type is
    ``Retyped`` to the source's, never refused or rescued; columns are kept as in any run.
    """
    if mode not in SCHEMA_EVOLUTIONS:
        raise ValueError(f"schema evolution {mode!r} is not one of {', '.join(SCHEMA_EVOLUTIONS)}")
    if target is None:
        return SchemaPlan((), source)
    source_types = {f.name: f.dataType for f in source.fields}
    target_types = {f.name: f.dataType for f in target.fields}
    if mode == "fail":
        _refuse_new_or_missing(source_types, target_types)
    changes: list[Change] = []
    resolved: list[StructField] = []
    for field in target.fields:
        name, stored = field.name, field.dataType
        if name not in source_types:
            if name != RESCUED_COLUMN:
                changes.append(Missing(name, stored))
            resolved.append(field)
            continue
        incoming = source_types[name]
        if name in partition_by or incoming == stored:
            resolved.append(field)
        elif is_widening(stored, incoming):
            changes.append(Widened(name, stored, incoming))
            resolved.append(StructField(name, incoming, True))
        elif reload:
            changes.append(Retyped(name, stored, incoming))
            resolved.append(StructField(name, incoming, True))
        elif mode == "rescue":
            changes.append(Rescued(name, incoming, stored))
            resolved.append(field)
        else:
            raise SchemaChangeError(
                name,
                incoming.simpleString(),
                stored.simpleString(),
                f"source schema changed: column {name!r} is {incoming.simpleString()} in the "
                f"source but {stored.simpleString()} in the target "
                f"({'narrower' if is_widening(incoming, stored) else 'not a safe widening'}); "
                "nothing was written (if the stored type is wrong, `watermarks reset` makes the "
                "next run a full reload that takes the source's types)",
            )
    for field in source.fields:
        if field.name in target_types:
            continue
        if mode == "rescue" and field.name != RESCUED_COLUMN:
            changes.append(Rescued(field.name, field.dataType, None))
        else:
            changes.append(Added(field.name, field.dataType))
            resolved.append(StructField(field.name, field.dataType, True))
    if any(isinstance(c, Rescued) for c in changes) and RESCUED_COLUMN not in target_types:
        changes.append(Added(RESCUED_COLUMN, StringType()))
        resolved.append(StructField(RESCUED_COLUMN, StringType(), True))
    return SchemaPlan(tuple(changes), StructType(resolved), reload)


def _refuse_new_or_missing(source: dict[str, DataType], target: dict[str, DataType]) -> None:
    new = [name for name in source if name not in target]
    gone = [name for name in target if name not in source]
    if not new and not gone:
        return
    parts = [f"column {n!r} is new ({source[n].simpleString()}, not in the target)" for n in new]
    parts += [f"column {n!r} is gone from the source ({target[n].simpleString()})" for n in gone]
    first = (new or gone)[0]
    raise SchemaChangeError(
        first,
        source[first].simpleString() if first in source else None,
        target[first].simpleString() if first in target else None,
        f"source schema changed: {'; '.join(parts)}; nothing was written (--schema_evolution fail)",
    )
