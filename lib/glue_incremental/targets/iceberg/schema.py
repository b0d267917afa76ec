"""Iceberg's schema evolution for a ``SchemaPlan``: ``ADD COLUMN`` and allowed type promotions.

Metadata commits only (no snapshot, no data file rewritten): columns are tracked by id,
so files written before read an added column as null. Iceberg promotes int to long,
float to double and a decimal to a larger precision of the same scale
(https://iceberg.apache.org/spec/#schema-evolution); any other widening the library
accepts (date to timestamp, a decimal's scale) is refused before the first statement.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.types import DataType, DecimalType, DoubleType, FloatType, IntegerType, LongType

from glue_incremental.schema.evolution import SchemaChangeError, SchemaPlan, Widened
from glue_incremental.targets.iceberg.tables import IcebergTarget


def promotable(old: DataType, new: DataType) -> bool:
    """True if Iceberg's spec allows promoting ``old`` to ``new`` in place."""
    if isinstance(old, IntegerType) and isinstance(new, LongType):
        return True
    if isinstance(old, FloatType) and isinstance(new, DoubleType):
        return True
    return (
        isinstance(old, DecimalType)
        and isinstance(new, DecimalType)
        and old.scale == new.scale
        and new.precision > old.precision
    )


def statements(table: str, plan: SchemaPlan) -> list[str]:
    """The DDL making ``table`` hold ``plan.resolved``; SchemaChangeError if Iceberg cannot."""
    for change in plan.widened:
        _require_promotable(table, change)
    added = [
        f"ALTER TABLE {table} ADD COLUMN `{c.column}` {c.type.simpleString()}" for c in plan.added
    ]
    widened = [
        f"ALTER TABLE {table} ALTER COLUMN `{c.column}` TYPE {c.new.simpleString()}"
        for c in plan.widened
    ]
    return added + widened + _retyped(table, plan)


def _retyped(table: str, plan: SchemaPlan) -> list[str]:
    """A full reload's retyped column: promoted in place where Iceberg allows it, else dropped
    and added again with the new type at the same place (a new column id: the reload's
    overwrite replaces every data file, so no stored value is read through the new id)."""
    statements: list[str] = []
    names = plan.resolved.fieldNames()
    for change in plan.retyped:
        column, new = change.column, change.new.simpleString()
        if promotable(change.old, change.new):
            statements.append(f"ALTER TABLE {table} ALTER COLUMN `{column}` TYPE {new}")
            continue
        at = names.index(column)
        place = "FIRST" if at == 0 else f"AFTER `{names[at - 1]}`"
        statements.append(f"ALTER TABLE {table} DROP COLUMN `{column}`")
        statements.append(f"ALTER TABLE {table} ADD COLUMN `{column}` {new} {place}")
    return statements


def evolve(spark: SparkSession, target: IcebergTarget, plan: SchemaPlan) -> None:
    for statement in statements(target.quoted, plan):
        spark.sql(statement)


def _require_promotable(table: str, change: Widened) -> None:
    if promotable(change.old, change.new):
        return
    old, new = change.old.simpleString(), change.new.simpleString()
    raise SchemaChangeError(
        change.column,
        new,
        old,
        f"source schema changed: column {change.column!r} is {new} in the source but {old} in "
        f"Iceberg table {table}, a promotion Iceberg does not allow; nothing was written",
    )
