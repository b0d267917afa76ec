"""The incremental load job: a JDBC table or a file dataset into a Parquet or Iceberg target.

First run (no state, a reset, or ``job-bookmark-disable``): everything is read and the
target is replaced as a whole. Later runs read only what changed: JDBC rows with
``watermark_column >= previous - lookback`` (inclusive, pushed down; rows read again
merge by key), or files through the file bookmark (``sources.files``, ``sources.discovery``).

Rows merge by ``--primary_key``, keeping the greatest ``--watermark_column``; only
partitions that receive rows are rewritten, a key whose partition changed leaves its old
one (``key_index``). Null watermarks are counted and, by ``--null_watermarks``, read on
every run or stop the run before anything is written. Each run, or bounded batch, is one
``engine.job.CustomJob`` block: its slot the plan (``load.planned.PlannedLoad``), its write
the merge, its commit the one transaction. Source and target are interfaces: this module
never asks their format. Options: ``load_config``; ``docs/custom-jobs.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.deletes import markers as delete_markers
from glue_incremental.engine import cursors
from glue_incremental.engine.declarations import Output
from glue_incremental.engine.job import CustomJob, Previewed
from glue_incremental.engine.source_plan import SchemaError, SourcePlan, require_columns
from glue_incremental.history.options import VERSION_COUNTS
from glue_incremental.io.spark_steps import named
from glue_incremental.load import batched_run, reconcile
from glue_incremental.load import sources as load_sources
from glue_incremental.load.config import (  # noqa: F401 (re-exported: the job's public names)
    DEFAULT_FILE_BAND,
    LOAD_OPTIONS,
    NULL_POLICIES,
    OPTIONAL_ARGS,
    PARTITION_MOVES,
    REFUSED_ARGS,
    REQUIRED_ARGS,
    SOURCE_FORMATS,
    TARGET_FORMATS,
    LoadConfig,
)
from glue_incremental.load.planned import PlannedLoad
from glue_incremental.run.context import GlueJob, IncrementalRun
from glue_incremental.run.state import (
    check_same_layout,
    target_layout,
)
from glue_incremental.schema import conform as schema_conform
from glue_incremental.schema import evolution as schema_evolution
from glue_incremental.schema import inferred_types
from glue_incremental.targets import registry as targets
from glue_incremental.targets.registry import Target
from glue_incremental.transforms import function as transforms
from glue_incremental.watermarks import DEFAULT_SLOT

OUTPUT = "output"  # the block's one target


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """Entry point of ``glue_scripts/incremental_load.py``; returns the run summary."""
    job = GlueJob.from_argv(
        argv,
        required=REQUIRED_ARGS,
        optional={**OPTIONAL_ARGS, **dict.fromkeys(REFUSED_ARGS)},
        spark=spark,
    )
    config = LoadConfig.from_args(job.args)
    with job.run() as run:
        run_load(run, config)
    return run.summary


def run_load(run: IncrementalRun, config: LoadConfig) -> None:
    """Read what is new since the state, merge it into the target, then commit.

    The target recovers first, before the source or the target is read: a
    Parquet publish that a crashed run left half done is finished or undone; an
    Iceberg snapshot whose DynamoDB commit a crash prevented rolls the state forward.
    """
    if config.transform is not None:
        config.transform.load()  # a transform that does not import stops the run before any read
    target = targets.build(config.target_options)
    target.recover(run)
    source = load_sources.build(config)
    if run.dry_run:
        plan = source.plan(run, batched_run.limits_for(run, config))
        if isinstance(target, Previewed):  # a history target: the versions it would change
            # A dry block over every listed batch: computes, writes nothing.
            _load_plan(
                run, config, target, batched_run.every_listed_batch(run, config, source, plan)
            )
        else:
            plan.release()
        _print_plan(run, plan.summary)
        return
    batched_run.run_batches(run, config, source, lambda plan: _load_plan(run, config, target, plan))


def _load_plan(run: IncrementalRun, config: LoadConfig, target: Target, plan: SourcePlan) -> None:
    """One plan (a run, or one batch of it) as one custom-job block: read, merge, commit.

    The block's slot ``DEFAULT_SLOT`` is the plan (``PlannedLoad``); its write is the merge
    by key and its commit ``CustomJob``'s. An exception publishes and commits nothing and
    leaves the source as it found it."""
    job = CustomJob(
        {},
        sources={},
        targets={OUTPUT: _output(config)},
        published_point=None,
        built_targets={OUTPUT: target},
    )
    planned = PlannedLoad(plan, run.previous(), plan.carried)
    job.adopt(DEFAULT_SLOT, planned)
    with job.running(run, recover=False):  # recovered once, before the first batch
        rows = transforms.apply(
            config.transform,
            plan.read(),
            _contract(config, plan),
            transforms.Identity(config.primary_key, config.watermark_column, plan.delivery),
        )
        _load_rows(job, config, target, rows, planned)
        job.describe(**plan.details)  # the summary's plan details, as the source gives them


def _output(config: LoadConfig) -> Output:
    """The load's target as a declared output (the target itself is built with its options)."""
    return Output(
        cast(Any, config.target_format),
        path=config.target_path,
        table=config.target_table,
        partition_by=tuple(config.partition_by),
        catalog=config.iceberg_catalog,
        catalog_table=config.catalog_table,
    )


def _contract(config: LoadConfig, plan: SourcePlan) -> transforms.Contract:
    """The delivery and delete-marker columns are protected too: the merge reads them."""
    keep = (*config.primary_key, config.watermark_column, *config.partition_by, *plan.delivery)
    if config.delete_marker is not None:
        keep = (*keep, config.delete_marker.column)
    return transforms.Contract(keep, config.target_path, config.target_table)


# -- merge ------------------------------------------------------------------------------------


def _load_rows(
    job: CustomJob,
    config: LoadConfig,
    target: Target,
    rows: DataFrame | None,
    planned: PlannedLoad,
) -> None:
    """Conform ``rows``, count them and stage their merge into the target (the block
    commits the slot after it).

    A source that ``rereads`` (JDBC: from ``reread_from``, the read's lower bound) may
    return versions already loaded, so only versions the target does not hold count as
    new (``RecordsNew``). File sources read only files not loaded before, so every row
    they read is new.
    """
    run, plan = job.run, planned.plan
    delivery = plan.delivery
    layout = target_layout(
        config.partition_by,
        config.primary_key,
        config.watermark_column,
        _target_names(config, target),
        history=config.history_options,
    )
    check_same_layout(run.committed_values(), layout)
    # The state names the output's table (if any), so a rewind can roll it back with it.
    carried = replace(
        plan.carried,
        iceberg_table=target.state_table(),
        layout=layout,
        partition_types=plan.partition_types() or None,
    )
    target_schema = target.schema(run)
    cursor_limit = datetime.fromtimestamp(run.started_at, UTC) + config.max_future_skew
    full_reload = not run.bookmark.reads_state or run.previous() is None
    if rows is not None:
        rows = delete_markers.mark(
            rows,
            config.delete_marker,
            keep_marker=config.keep_delete_marker,
            reads_tombstones=config.file_snapshots or _filters_deleted(run, config, target),
        )
    hidden = (*delivery, delete_markers.DELETED)  # merge-only columns, never compared or written
    stored_runs = (run.previous() or {}).get("runs_since_reconcile")
    runs_since = stored_runs if isinstance(stored_runs, int) else None
    reconciles = not full_reload and reconcile.due(config, runs_since, on_demand=config.reconcile)
    planned.carried = replace(
        carried,
        runs_since_reconcile=reconcile.runs_since_after(config, runs_since, reconciled=reconciles),
    )
    if rows is None and full_reload and target_schema is not None and not run.dry_run:
        rows, delivery = run.spark.createDataFrame([], target_schema), ()  # replaced by nothing
    if rows is None and reconciles and target_schema is not None:  # no new file: still reconcile
        types = {name: load_sources.DELIVERY_TYPES[name] for name in delivery}
        rows = reconcile.nothing_read(run.spark, target_schema, types)
    if rows is None:
        return
    with _misfits_named(config, plan):  # the first actions on a declared read
        rows = _typed(rows, config, target_schema)
    source_rows = rows.drop(*hidden)
    require_columns(source_rows.columns, config, "source " + config.source)
    try:
        schema_plan = schema_evolution.plan(
            source_rows.schema,
            target_schema,
            config.schema_evolution,
            partition_by=config.partition_by,
            reload=full_reload,  # every row is rewritten: the types read now win
        )
    except schema_evolution.SchemaChangeError as error:
        raise _inferred_misfit(config, plan, target_schema, error) from None
    rows = schema_conform.conform(
        rows,
        schema_plan,
        partition_by=config.partition_by,
        delivery=[name for name in hidden if name in rows.columns],
    )
    planned.rows = rows = rows.persist()  # unpersisted when the block ends
    with _misfits_named(config, plan):
        stats = planned.stats = _batch_stats(rows, config, cursor_limit, merges=not full_reload)
    if stats.nulls and config.null_watermarks == "fail":
        raise SchemaError(
            config.watermark_column,
            f"{stats.nulls} source rows have a null {config.watermark_column!r}; "
            "nothing was written (--null_watermarks fail)",
        )
    if plan.rereads and stats.rows and target_schema is not None:
        with named(run.spark, "count the new versions of a reread"):
            planned.records_new = _count_new_versions(
                rows.drop(*hidden), config, plan.reread_from, target.read_as_of_start(run)
            )  # a target read before the change: aligned to the batch there
    state = planned.state(int(run.clock() * 1000), None)
    run.store.check_fits(str(run.state_name), run.run_id, state)
    merging, read_rows = rows, None
    if reconciles:
        reconciled = reconcile.with_gone_keys(
            run, config, target, rows, lambda: load_sources.source_keys(run, config)
        )
        merging = reconciled.rows
        # Only the keys read are looked up in other partitions; each gone key's delete names
        # every partition its stored rows are in.
        read_rows = rows if reconciled.in_place else None
        run.details["reconcile"] = reconciled.counts.as_details()
    if stats.rows or full_reload or reconciles:
        job.write(
            OUTPUT,
            merging,
            keys=config.primary_key,
            order_by=config.watermark_column,
            partition_moves=config.partition_moves,
            delivery=delivery,
            deleted=delete_markers.DELETED if delete_markers.DELETED in merging.columns else None,
            incoming_range=stats.keys if merging is rows else None,  # gone keys: outside it
            null_order_by=stats.nulls if merging is rows else None,
            read_rows=read_rows,
            read_range=stats.keys if read_rows is not None else None,
            schema=schema_plan,
            replace_all=full_reload,
            # A reconcile or an empty reload that changed nothing commits nothing by itself.
            commit_unchanged=False,
        )


def _filters_deleted(run: IncrementalRun, config: LoadConfig, target: Target) -> bool:
    """A transform's earlier runs may have filtered keys out (their tombstones remain): the
    rows read are ranked against those tombstones even when this run filters none, so an older
    version of such a key arriving late stays out, as it would with a delete marker. Only
    asked with a transform and without a marker (a marker already reads them)."""
    return (
        config.transform is not None
        and config.delete_marker is None
        and run.previous() is not None
        and target.keeps_tombstones(run)
    )


def _typed(rows: DataFrame, config: LoadConfig, stored: Any) -> DataFrame:
    """A file source's text watermark typed when its values are numbers or timestamps, then
    columns typed narrower than ``stored`` cast up to it (``inferred_types``)."""
    if not config.is_jdbc:
        declared = config.source_schema is not None
        rows = inferred_types.typed_watermark(rows, config.watermark_column, declared=declared)
    return inferred_types.as_stored(rows, stored, partition_by=config.partition_by)


def _target_names(config: LoadConfig, target: Target) -> dict[str, str | None]:
    """The output a state describes: its format, and its table or else its path."""
    table = target.state_table()
    where = {"target_table": table} if table else {"target_path": config.target_path.rstrip("/")}
    return {"target_format": config.target_format, **where}


def _batch_stats(
    rows: DataFrame, config: LoadConfig, limit: datetime, *, merges: bool = False
) -> cursors.BatchStats:
    """The batch's counts (its first action); a batch that ``merges`` with the target also
    gets its partitions for the merge."""
    partitions = config.partition_by if merges else ()
    return cursors.batch_stats(rows, config.watermark_column, limit, config.primary_key, partitions)


@contextmanager
def _misfits_named(config: LoadConfig, plan: SourcePlan) -> Iterator[None]:
    """A declared schema's misfit (Spark's ``FAILFAST``, which names the record but not its
    file) as one line naming the file, line, column and value (``SourcePlan.misfit``)."""
    try:
        yield
    except Exception as error:
        if config.source_schema is None or "FAILFAST" not in str(error):
            raise
        found = plan.misfit(None)
        column, where = found if found else (None, "the file and line were not found")
        raise SchemaError(
            column or "source_schema",
            f"a source value does not fit --source_schema ({config.source_schema}): {where}; "
            "nothing was written",
        ) from error


def _inferred_misfit(
    config: LoadConfig,
    plan: SourcePlan,
    stored: StructType | None,
    refused: schema_evolution.SchemaChangeError,
) -> schema_evolution.SchemaChangeError:
    """``refused`` naming the file, line and value of the first row whose ``refused.column``
    does not read as the type the target stores (``SourcePlan.misfit``): an inferred batch
    types a number column as text for one such value. ``refused`` as it is if none is found
    (a declared schema, JDBC, Parquet, a column the files lack)."""
    column = refused.column
    if stored is None or config.source_schema is not None or config.is_jdbc:
        return refused
    if column not in stored.fieldNames():
        return refused
    found = plan.misfit(StructType([stored[column]]))
    if found is None or found[0] != column:
        return refused
    head, nothing, rest = str(refused).partition("; nothing was written")
    return schema_evolution.SchemaChangeError(
        column, refused.source_type, refused.target_type, f"{head}: {found[1]}{nothing}{rest}"
    )


def _count_new_versions(
    rows: DataFrame, config: LoadConfig, reread_from: Any, target: DataFrame | None
) -> int:
    """Rows the target does not hold yet, value for value.

    A whole row is compared, not only (primary key, watermark): a row changed
    in place without its watermark moving (a date or second-precision column)
    is new. Compared as strings (the target reads partition columns as
    strings) and null-safe, so a re-read null-watermark row is not new either.
    Only target rows at or after ``reread_from`` can match a row of this read.
    ``target`` holds the stored versions as of the run's start (``Target.read_as_of_start``).
    """
    if target is None:
        return rows.count()
    version = list(rows.columns)
    target = schema_conform.with_columns_of(target, rows.schema)
    if reread_from is not None:
        watermark = F.col(f"`{config.watermark_column}`")
        target = target.where(
            (
                watermark
                >= F.lit(_bound_text(reread_from)).cast(
                    rows.schema[config.watermark_column].dataType
                )
            )
            | watermark.isNull()
        )

    def as_text(frame: DataFrame) -> DataFrame:
        return frame.select(
            *(F.col(f"`{name}`").cast("string").alias(f"v{i}") for i, name in enumerate(version))
        )

    loaded = as_text(target).distinct()
    batch = as_text(rows)
    condition = [batch[f"v{i}"].eqNullSafe(loaded[f"v{i}"]) for i in range(len(version))]
    return batch.join(loaded, condition, "left_anti").count()


def _bound_text(value: Any) -> str:
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo else value
        return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    return str(value)


def _print_plan(run: IncrementalRun, plan: Mapping[str, object]) -> None:
    run.record(records_read=0, records_written=0, plan=plan)
    # A history target's preview left the versions it would open and close in the details.
    versions = {name: run.details[name] for name in VERSION_COUNTS if name in run.details}
    print(
        json.dumps(
            {"event": "dry_run", "job_name": run.job_name, **plan, **versions},
            default=str,
            sort_keys=True,
        )
    )
