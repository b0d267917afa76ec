"""Spark side of ``schema_evolution``: shape a batch, or a stored read, to the resolved schema.

``conform`` gives a batch exactly the resolved target's columns (in its order, then the
``delivery`` columns): a missing column null, a rescued value or new column (``rescue``)
in ``_rescued_data`` as JSON of the source values, null when nothing was rescued.
``with_columns_of`` lets a read of the target made before a change (older files, an
Iceberg snapshot) be merged with a batch made after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.schema import evolution as schema_evolution
from glue_incremental.schema.evolution import RESCUED_COLUMN, SchemaPlan

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun
    from glue_incremental.targets.base import Target


def _col(name: str) -> Column:
    return F.col(f"`{name}`")


def conform(
    rows: DataFrame,
    plan: SchemaPlan,
    *,
    partition_by: Sequence[str] = (),
    delivery: Sequence[str] = (),
) -> DataFrame:
    """``rows`` with the resolved target's columns; partition and delivery columns as read."""
    if not plan.changes and [f.name for f in rows.schema.fields if f.name not in delivery] == [
        f.name for f in plan.resolved.fields
    ]:
        return rows
    rescued: list[Column] = []
    for change in plan.rescued:
        value = _col(change.column)
        if change.target is None:
            rescued.append(value.alias(change.column))
        else:
            misfit = value.isNotNull() & value.cast(change.target).isNull()
            rescued.append(F.when(misfit, value).alias(change.column))
    present = set(rows.columns)
    out: list[Column] = []
    for field in plan.resolved.fields:
        name = field.name
        if name == RESCUED_COLUMN and rescued:
            text = F.to_json(F.struct(*rescued))
            out.append(F.when(text != F.lit("{}"), text).alias(name))
        elif name not in present:
            out.append(F.lit(None).cast(field.dataType).alias(name))
        elif name in partition_by:
            out.append(_col(name))
        else:
            out.append(_col(name).cast(field.dataType).alias(name))
    out += [_col(name) for name in delivery]
    return rows.select(*out)


def with_columns_of(
    stored: DataFrame, schema: StructType, columns: Sequence[str] | None = None
) -> DataFrame:
    """``stored`` with ``columns`` (default: all of ``schema``): the ones it lacks as nulls of
    ``schema``'s type, the others cast to it (a widened column read from older data)."""
    present = {f.name: f.dataType for f in stored.schema.fields}
    out: list[Column] = []
    for name in columns if columns is not None else schema.fieldNames():
        wanted = schema[name].dataType
        if name not in present:
            out.append(F.lit(None).cast(wanted).alias(name))
        elif present[name] != wanted:
            out.append(_col(name).cast(wanted).alias(name))
        else:
            out.append(_col(name))
    return stored.select(*out)


def evolve_output(
    run: IncrementalRun,
    target: Target,
    rows: DataFrame,
    mode: schema_evolution.SchemaEvolution,
    partition_by: Sequence[str],
) -> tuple[DataFrame, SchemaPlan]:
    """For a job that writes ``rows`` as computed (the join): plan against the target's
    schema, shape ``rows`` to it and evolve the target; call right before the publish."""
    plan = schema_evolution.plan(rows.schema, target.schema(run), mode, partition_by=partition_by)
    shaped = conform(rows, plan, partition_by=partition_by)
    target.evolve(run, plan)
    return shaped, plan
