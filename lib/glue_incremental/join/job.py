"""The join job: plan both sides, recompute the affected partitions, publish, commit both sides.

A run replaces exactly the partitions either side changed (plus those left pending), then
commits both sides' bookmarks in one transaction. Before both sides have data nothing is
written or committed. A half-done publish a crashed run left is finished or undone first.
One run: ``docs/incremental-join.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from glue_incremental import catalog_schema, schema_conform, targets, transforms, writer
from glue_incremental.hooks import hooks
from glue_incremental.join.config import OPTIONAL_ARGS, REQUIRED_ARGS, JoinJobConfig
from glue_incremental.join.sides import Side, plan_side, read_full
from glue_incremental.join.spec import (
    SIDES,
    JoinSpec,
    Partition,
    declared_types,
    join_partitions,
    validate_sides,
)
from glue_incremental.join.upstream import recheck_upstream
from glue_incremental.predicates import (
    filter_partitions,
    normalise_partitions,
    partition_counts,
    validate_partition_values,
)
from glue_incremental.runtime import GlueJob, IncrementalRun
from glue_incremental.state import JoinSideState, JoinSideStateDict
from glue_incremental.targets import Target

_TYPE_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"


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
    spark = run.spark
    if config.transform is not None:
        config.transform.load()  # a transform that does not import stops the run before any read
    before = spark.conf.get(_TYPE_INFERENCE)
    # Partition values stay strings, exactly as named in paths: a directory
    # ``hour=03`` is the partition "03" on both sides and in the output.
    spark.conf.set(_TYPE_INFERENCE, "false")
    try:
        target = targets.build(config.target_options)
        target.recover(run)
        _run_join(run, config, target)
    finally:
        spark.conf.set(_TYPE_INFERENCE, before)


@dataclass(frozen=True)
class _Work:
    """This run's partitions: counted new rows, what to recompute, what stays pending."""

    counts: Mapping[str, Mapping[Partition, int]]
    affected: list[Partition]
    pending: Mapping[str, list[Partition]]
    full_reload: bool

    @property
    def records_read(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())


def _work(run: IncrementalRun, config: JoinJobConfig, sides: Mapping[str, Side]) -> _Work:
    """Touched partitions plus those left pending, minus those an upstream has not settled."""
    columns = config.spec.partition_by
    new = {name: side.new_rows for name, side in sides.items() if side.new_rows is not None}
    counts = partition_counts(*new.values(), columns=columns, names=list(new)) if new else {}
    touched = normalise_partitions((p for c in counts.values() for p in c), columns)
    if config.partition_types:
        validate_partition_values(touched, columns, declared_types(config.partition_types, columns))
    pending_before = [
        values
        for side in sides.values()
        if side.previous
        for values in side.previous.pending_partitions
    ]
    candidates = normalise_partitions([*touched, *pending_before], columns)
    for side in sides.values():
        side.cover(candidates, columns)  # S3 sides: what an ordered listing left out
    affected = [p for p in candidates if not any(p in s.unsettled for s in sides.values())]
    pending = {name: [p for p in candidates if p in side.unsettled] for name, side in sides.items()}
    full_reload = not run.bookmark.reads_state and not any(pending.values())
    return _Work(counts, affected, pending, full_reload)


def _details(sides: Mapping[str, Side], work: _Work) -> dict[str, Any]:
    """What the run summary says of the plan (also the whole summary of a dry run)."""
    return {
        "affected_partitions": len(work.affected),
        "pending_partitions": {name: [list(p) for p in ps] for name, ps in work.pending.items()},
        "files_read": {name: len(side.plan.files) for name, side in sides.items()},
        "records_read_by_side": {name: sum(c.values()) for name, c in work.counts.items()},
        "file_plans": {name: side.plan_summary() for name, side in sides.items()},
        "upstream_runs_consumed": {
            name: side.upstream.runs_consumed for name, side in sides.items() if side.upstream
        },
    }


def _run_join(run: IncrementalRun, config: JoinJobConfig, target: Target) -> None:
    spark = run.spark
    target.mark_start(run)
    sides = {name: plan_side(run, config, name) for name in SIDES}
    work = _work(run, config, sides)
    details = _details(sides, work)
    late = sum(side.plan.late_file_count for side in sides.values())
    if run.dry_run:
        run.record(records_read=0, records_written=0, plan=details)
        return
    waiting = [name for name, side in sides.items() if not side.has_schema]
    if waiting:
        run.record(
            records_read=0,
            records_written=0,
            late_files_skipped=late,
            waiting_for=waiting,
            **details,
        )
        return
    joined = _join_affected(spark, sides, work.affected, config.spec) if work.affected else None
    joined = transforms.apply(config.transform, joined, _contract(config))
    settled: dict[str, JoinSideState] = {}

    def settle() -> dict[str, JoinSideStateDict]:
        """The output is durable (or carries these states): recheck upstreams, fix the states."""
        published_at_ms = int(run.clock() * 1000)
        hooks.point("join.published", run_id=run.run_id)
        _recheck_upstreams(spark, sides, work.affected, config.spec.partition_by)
        settled.update(_side_states(target, sides, work.pending, published_at_ms))
        return {name: state.to_state() for name, state in settled.items()}

    result = writer.WriteResult(0)
    schema_plan = None
    if joined is None:
        settle()
    else:
        affected = None if work.full_reload else work.affected
        joined, schema_plan = schema_conform.evolve_output(
            run, target, joined, config.schema_evolution, config.spec.partition_by
        )
        details = {**details, "schema_changes": schema_plan.describe()}
        result = target.replace_partitions(run, joined, affected, settle).result
    _commit(run, sides, settled, wrote=joined is not None)
    target.after_commit(run, {name: state.to_state() for name, state in settled.items()})
    if config.catalog_table and schema_plan is not None and run.committed:
        catalog_schema.sync_after_commit(run.details, config.catalog_table, schema_plan.resolved)
    _record(run, sides, work, result, late, details)


def _join_affected(
    spark: SparkSession, sides: Mapping[str, Side], affected: Sequence[Partition], spec: JoinSpec
) -> DataFrame:
    """Both sides' full data of the affected partitions, joined (lazily)."""
    columns = spec.partition_by
    full = {name: read_full(spark, side, affected, columns) for name, side in sides.items()}
    validate_sides(full["left"], full["right"], spec)
    filtered = {name: filter_partitions(frame, affected, columns) for name, frame in full.items()}
    joined = join_partitions(filtered["left"], filtered["right"], spec)
    hooks.point("join.joined", **filtered, joined=joined, affected=list(affected))
    return joined


def _contract(config: JoinJobConfig) -> transforms.Contract:
    keep = (*config.spec.partition_by, *config.spec.join_keys)
    return transforms.Contract(keep, config.target_path, config.target_table)


def _recheck_upstreams(
    spark: SparkSession,
    sides: Mapping[str, Side],
    affected: Sequence[Partition],
    columns: Sequence[str],
) -> None:
    if not affected:
        return
    for side in sides.values():
        if side.upstream is not None:
            recheck_upstream(
                spark,
                side.name,
                side.root,
                side.band_start_ms,
                side.upstream,
                affected,
                columns,
                listing=side.listing_of(affected, columns),
            )


def _side_states(
    target: Target,
    sides: Mapping[str, Side],
    pending: Mapping[str, list[Partition]],
    published_at_ms: int,
) -> dict[str, JoinSideState]:
    """The state each side commits: its bookmark, pending partitions, upstream, publish time."""
    table = target.state_table()
    return {
        name: side.leaves(pending[name], published_at_ms, table) for name, side in sides.items()
    }


def _commit(
    run: IncrementalRun,
    sides: Mapping[str, Side],
    states: Mapping[str, JoinSideState],
    *,
    wrote: bool,
) -> None:
    """Commit both sides at once, unless nothing but the publish time would change."""
    unchanged = all(
        states[name].same_apart_from_publish_time(side.previous) for name, side in sides.items()
    )
    if wrote or not unchanged:
        run.commit({name: state.to_state() for name, state in states.items()})


def _record(
    run: IncrementalRun,
    sides: Mapping[str, Side],
    work: _Work,
    result: writer.WriteResult,
    late: int,
    details: Mapping[str, Any],
) -> None:
    high_marks = [s.plan.next_bookmark.high_mark_ms for s in sides.values()]
    known = [mark for mark in high_marks if mark is not None]
    run.record(
        records_read=work.records_read,
        records_written=result.records_written,
        watermark_time=datetime.fromtimestamp(min(known) / 1000, UTC) if known else None,
        late_files_skipped=late,
        partitions_written=result.partitions_written,
        partitions_removed=result.partitions_removed,
        **details,
    )
