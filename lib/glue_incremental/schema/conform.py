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

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from glue_incremental.io.jvm_calls import quoted, select_sql, type_sql
from glue_incremental.schema import evolution as schema_evolution
from glue_incremental.schema.evolution import RESCUED_COLUMN, SchemaPlan

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun
    from glue_incremental.targets.base import Target


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
    rescued: list[str] = []
    for change in plan.rescued:
        value = quoted(change.column)
        if change.target is None:
            rescued.append(f"{value} AS {value}")
        else:
            misfit = f"{value} IS NOT NULL AND CAST({value} AS {type_sql(change.target)}) IS NULL"
            rescued.append(f"CASE WHEN {misfit} THEN {value} END AS {value}")
    present = set(rows.columns)
    out: list[str] = []
    for field in plan.resolved.fields:
        name = quoted(field.name)
        if field.name == RESCUED_COLUMN and rescued:
            text = f"to_json(struct({', '.join(rescued)}))"
            out.append(f"CASE WHEN {text} != '{{}}' THEN {text} END AS {name}")
        elif field.name not in present:
            out.append(f"CAST(NULL AS {type_sql(field.dataType)}) AS {name}")
        elif field.name in partition_by:
            out.append(name)
        else:
            out.append(f"CAST({name} AS {type_sql(field.dataType)}) AS {name}")
    out += [quoted(name) for name in delivery]
    return select_sql(rows, out)


def with_columns_of(
    stored: DataFrame, schema: StructType, columns: Sequence[str] | None = None
) -> DataFrame:
    """``stored`` with ``columns`` (default: all of ``schema``): the ones it lacks as nulls of
    ``schema``'s type, the others cast to it (a widened column read from older data)."""
    present = {f.name: f.dataType for f in stored.schema.fields}
    out: list[str] = []
    for name in columns if columns is not None else schema.fieldNames():
        wanted = schema[name].dataType
        if name not in present:
            out.append(f"CAST(NULL AS {type_sql(wanted)}) AS {quoted(name)}")
        elif present[name] != wanted:
            out.append(f"CAST({quoted(name)} AS {type_sql(wanted)}) AS {quoted(name)}")
        else:
            out.append(quoted(name))
    return select_sql(stored, out)


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
