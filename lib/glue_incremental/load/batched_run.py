"""A load run as bounded batches: plan one batch from the committed state, load and commit
it, then plan the next (``engine.batch_plan`` bounds each one).

Each batch is read, merged, published and committed with its own state under the run's
lease before the next is read, so a crash after batch k keeps k batches and the next run
continues from there; a run that reaches ``--max_batches_per_run`` ends SUCCEEDED with
the backlog left to the next run. Batching needs a run that commits (bookmarks enabled):
a paused or disabled run, which never moves the state, reads in one batch as before.
The summary's counts are the run's totals; ``batches`` counts the batches committed (a run
failing in a later batch reports those it committed).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from glue_incremental.engine.batch_plan import UNBOUNDED, BatchLimits
from glue_incremental.engine.source_plan import Source, SourcePlan
from glue_incremental.history.groups import BATCH
from glue_incremental.hooks import hooks
from glue_incremental.load.config import LoadConfig
from glue_incremental.load.sources import FILE_MODIFIED
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.summary import RunCounts

SUMMED_DETAILS = ("partitions_written", "partitions_removed", "files_read")


def read_position(stored: dict[str, Any] | None) -> tuple[Any, Any]:
    """Where the next batch starts reading: the cursor (JDBC) and the file bookmark (files).
    A batch that moves neither made no progress; other keys (publish time, reconcile count)
    change with every commit."""
    values = stored or {}
    return values.get("cursor"), values.get("files")


def limits_for(run: IncrementalRun, config: LoadConfig) -> BatchLimits:
    """The configured bounds, or none when the run does not commit (nothing to continue from)."""
    return config.batch_limits if run.bookmark.commits else UNBOUNDED


def every_listed_batch(
    run: IncrementalRun, config: LoadConfig, source: Source, listed: SourcePlan
) -> SourcePlan:
    """A dry run's read of every batch ``listed`` names (its ``batches``), each row numbered
    by its batch (``history.groups.BATCH``, a merge-only column), so a history target
    counts the versions each batch would open and close in turn, as the run commits them.

    ``listed`` itself reads its first batch only; one batch or none: ``listed`` as it is."""
    batches = listed.summary.get("batches")
    if not isinstance(batches, list) or len(batches) < 2:
        return listed
    listed.release()
    whole = source.plan(run)  # every new row; those after the last listed batch dropped
    ends = [_batch_end(batch, config.watermark_column) for batch in batches]

    def read() -> DataFrame | None:
        rows = whole.read()
        if rows is None:
            return None
        number: Column = F.lit(0)
        for value, end in ends[:-1]:
            number = number + F.when(value > end, 1).otherwise(0)
        value, end = ends[-1]
        kept = rows if end is None else rows.where(value <= end)
        return kept.withColumn(BATCH, number.cast("int"))

    return replace(whole, read=read, delivery=(*whole.delivery, BATCH))


def _batch_end(batch: Mapping[str, Any], watermark_column: str) -> tuple[Column, Any]:
    """The value a row is placed by and the batch's inclusive end (None: the rest): a file's
    modification time for a file batch, the watermark for a row batch (JDBC)."""
    if "last_modified_ms" in batch:
        return F.col(FILE_MODIFIED), F.timestamp_millis(F.lit(batch["last_modified_ms"]))
    end = batch.get("ends_at_watermark")
    return F.col(f"`{watermark_column}`"), None if end is None else F.lit(end)


@dataclass
class BatchTotals:
    """The run's counts over its batches (partitions written or removed: each once; schema
    changes: each once). Null-watermark and future rows: a source that ``rereads`` (JDBC)
    reads them again in each batch (after the cursor, which they never move): the largest;
    a file source reads each file once: the sum."""

    counts: RunCounts = field(default_factory=RunCounts)
    summed: dict[str, Any] = field(default_factory=dict)
    batches: int = 0

    def add(self, counts: RunCounts | None, details: dict[str, Any], *, rereads: bool) -> None:
        self.batches += 1
        done = counts or RunCounts()
        total = self.counts
        again: Callable[[int, int], int] = max if rereads else operator.add
        self.counts = RunCounts(
            records_read=total.records_read + done.records_read,
            records_written=total.records_written + done.records_written,
            records_new=total.records_new + done.records_new,
            watermark_time=done.watermark_time or total.watermark_time,
            late_files_skipped=total.late_files_skipped + done.late_files_skipped,
            null_watermark_rows=again(total.null_watermark_rows, done.null_watermark_rows),
            future_watermark_rows=again(total.future_watermark_rows, done.future_watermark_rows),
            state_bytes=done.state_bytes,
            records_deleted=total.records_deleted + done.records_deleted,
            schema_changes=tuple(dict.fromkeys((*total.schema_changes, *done.schema_changes))),
        )
        for name in SUMMED_DETAILS:
            value = details.get(name)
            if isinstance(value, list):  # partitions (values or mappings of them): each once
                merged = [*self.summed.get(name, []), *value]
                unique = {json.dumps(item, sort_keys=True, default=str): item for item in merged}
                self.summed[name] = list(unique.values())
            elif isinstance(value, int) and not isinstance(value, bool):
                self.summed[name] = self.summed.get(name, 0) + value

    def record(self, run: IncrementalRun, *, limit_reached: bool) -> None:
        counts = self.counts
        run.record(
            records_read=counts.records_read,
            records_new=counts.records_new,
            records_written=counts.records_written,
            watermark_time=counts.watermark_time,
            late_files_skipped=counts.late_files_skipped,
            null_watermark_rows=counts.null_watermark_rows,
            future_watermark_rows=counts.future_watermark_rows,
            state_bytes=counts.state_bytes,
            records_deleted=counts.records_deleted,
            schema_changes=counts.schema_changes,
            batch_limit_reached=limit_reached,
            **self.summed,
        )
        run.count_batches(self.batches)


def run_batches(
    run: IncrementalRun,
    config: LoadConfig,
    source: Source,
    load: Callable[[SourcePlan], None],
) -> None:
    """Plan and ``load`` (merge, publish, commit) batches until the source has no more or
    the run's batch limit is reached. Unbounded: one plan, loaded as it always was."""
    limits = limits_for(run, config)
    if not limits.bounds_a_batch:
        load(source.plan(run))
        return
    totals = BatchTotals()
    limit_reached = False
    try:
        while True:
            plan = source.plan(run, limits)
            started_from = read_position(run.previous())
            load(plan)
            totals.add(run.counts, run.details, rereads=plan.rereads)
            if not plan.more:
                break
            if not limits.allows_another(totals.batches):
                limit_reached = True
                break
            hooks.point("batch.next", run_id=run.run_id, batch=totals.batches + 1)
            run.continue_from_commit()
            if read_position(run.previous()) == started_from:
                break  # no progress (rows past --max_future_skew, say): the next run goes on
    finally:
        # A run failing in a later batch reports the batches it committed, not the last one's.
        if totals.batches:
            totals.record(run, limit_reached=limit_reached)
