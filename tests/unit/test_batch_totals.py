"""A batched run's summary counts (``load.batched_run.BatchTotals``): what on-call reads adds up.

A file source reads each file in one batch, so its null-watermark and future rows are the
sum over the batches; JDBC reads them again in every batch (they never move the cursor): the
largest. A schema change made by several batches (a column rescued in each) is one change.
"""

from __future__ import annotations

from glue_incremental.load.batched_run import BatchTotals
from glue_incremental.run.summary import RunCounts

RESCUED = "rescued qty (string, not bigint)"


def totals_of(*batches: RunCounts, rereads: bool) -> RunCounts:
    totals = BatchTotals()
    for counts in batches:
        totals.add(counts, {}, rereads=rereads)
    return totals.counts


def test_a_file_sources_null_and_future_rows_are_the_sum_of_its_batches():
    counts = totals_of(
        RunCounts(records_read=2, null_watermark_rows=0, future_watermark_rows=1),
        RunCounts(records_read=2, null_watermark_rows=2, future_watermark_rows=0),
        RunCounts(records_read=2, null_watermark_rows=1, future_watermark_rows=1),
        RunCounts(records_read=1),
        rereads=False,
    )

    assert (counts.records_read, counts.null_watermark_rows, counts.future_watermark_rows) == (
        7,
        3,
        2,
    )


def test_a_jdbc_sources_null_and_future_rows_reread_by_each_batch_count_once():
    counts = totals_of(
        RunCounts(records_read=3, null_watermark_rows=1, future_watermark_rows=0),
        RunCounts(records_read=3, null_watermark_rows=1, future_watermark_rows=2),
        RunCounts(records_read=2, null_watermark_rows=1, future_watermark_rows=2),
        rereads=True,
    )

    assert (counts.null_watermark_rows, counts.future_watermark_rows) == (1, 2)


def test_a_column_rescued_in_every_batch_is_one_schema_change():
    counts = totals_of(
        RunCounts(schema_changes=(RESCUED, "added _rescued_data string")),
        RunCounts(schema_changes=(RESCUED,)),
        RunCounts(schema_changes=(RESCUED, "added discount bigint")),
        rereads=False,
    )

    assert counts.schema_changes == (RESCUED, "added _rescued_data string", "added discount bigint")
