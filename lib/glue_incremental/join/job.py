"""The join job: a thin client of the run engine (``glue_incremental.engine``).

Two declared datasets (``left``, ``right``: their state slots) planned together, one
declared output. A run replaces exactly the partitions either side changed (plus those
left pending), then commits both sides' bookmarks in one transaction. Before both sides
have data nothing is written or committed. A half-done publish a crashed run left is
finished or undone first. One run: ``docs/incremental-join.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pyspark.sql import DataFrame

from glue_incremental.engine import job as engine
from glue_incremental.engine.declarations import Dataset, Output
from glue_incremental.hooks import hooks
from glue_incremental.join.config import OPTIONAL_ARGS, REQUIRED_ARGS, JoinJobConfig
from glue_incremental.join.spec import SIDES, JoinSpec, join_partitions, validate_sides
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import GlueJob, IncrementalRun
from glue_incremental.transforms import function as transforms

OUTPUT = "output"


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """Entry point of ``glue_scripts/incremental_join.py``; returns the run summary."""
    job = GlueJob.from_argv(argv, required=REQUIRED_ARGS, optional=OPTIONAL_ARGS, spark=spark)
    config = JoinJobConfig.from_args(job.args)
    with job.run() as run:
        run_join(run, config)
    return run.summary


def run_join(run: IncrementalRun, config: JoinJobConfig) -> None:
    """One run of the incremental join inside ``run`` (an entered ``IncrementalRun``).

    A publish of the Parquet output that a crashed run left half done is
    finished or undone first, before anything is read; for an Iceberg output, a
    snapshot whose DynamoDB commit a crash prevented rolls the state forward.
    """
    if config.transform is not None:
        config.transform.load()  # a transform that does not import stops the run before any read
    job = engine.CustomJob(
        {},
        sources=dict(_datasets(config)),
        targets={OUTPUT: _output(config)},
        published_point="join.published",
    )
    with job.running(run):
        _join(job, config)


def _join(job: engine.CustomJob, config: JoinJobConfig) -> None:
    """The script: the affected partitions of both sides, read whole, joined, replaced."""
    affected = job.affected_partitions(*SIDES)
    job.describe(**_details(job, affected))
    if job.dry_run or not job.wait_for_schemas(*SIDES) or not affected:
        return
    joined = _join_affected(job, affected, config.spec)
    joined = cast(DataFrame, transforms.apply(config.transform, joined, _contract(config)))
    job.replace_partitions(OUTPUT, joined, affected)


def _datasets(config: JoinJobConfig) -> Mapping[str, Dataset]:
    """Each side as a declared dataset; its slot is the side's name."""
    return {
        side: Dataset(
            config.path(side),
            partition_by=tuple(config.spec.partition_by),
            format=cast(Any, config.format(side)),
            schema=config.schema(side),
            # An Iceberg side shows only committed snapshots: its upstream is not needed.
            upstream_job=None
            if config.format(side) == "iceberg"
            else config.upstream_jobs.get(side),
            catalog=config.iceberg_catalog,
            lookback=config.lookback,
            full_listing_every=config.full_listing_every,
            partition_types=config.partition_types,
        )
        for side in SIDES
    }


def _output(config: JoinJobConfig) -> Output:
    return Output(
        cast(Any, config.target_format),
        path=config.target_path,
        table=config.target_table,
        partition_by=tuple(config.spec.partition_by),
        catalog=config.iceberg_catalog,
        schema_evolution=config.schema_evolution,
        catalog_table=config.catalog_table,
    )


def _details(job: engine.CustomJob, affected: Sequence[Partition]) -> dict[str, Any]:
    """What the run summary says of the plan (also the whole summary of a dry run)."""
    planned = {name: job.planned(name) for name in SIDES}
    return {
        "affected_partitions": len(affected),
        "pending_partitions": {name: [list(p) for p in s.pending] for name, s in planned.items()},
        "files_read": {name: len(s.side.plan.files) for name, s in planned.items()},
        "records_read_by_side": {
            name: s.records_read for name, s in planned.items() if s.side.new_rows is not None
        },
        "file_plans": {name: s.side.plan_summary() for name, s in planned.items()},
        "upstream_runs_consumed": {
            name: s.side.upstream.runs_consumed for name, s in planned.items() if s.side.upstream
        },
    }


def _join_affected(
    job: engine.CustomJob, affected: Sequence[Partition], spec: JoinSpec
) -> DataFrame:
    """Both sides' full data of the affected partitions, joined (lazily)."""
    sides = {name: job.read_partitions(name, affected) for name in SIDES}
    validate_sides(sides["left"], sides["right"], spec)
    joined = join_partitions(sides["left"], sides["right"], spec)
    hooks.point("join.joined", **sides, joined=joined, affected=list(affected))
    return joined


def _contract(config: JoinJobConfig) -> transforms.Contract:
    keep = (*config.spec.partition_by, *config.spec.join_keys)
    return transforms.Contract(keep, config.target_path, config.target_table)
