"""A batch's fixed Spark work (``docs/bounded-batches.md``, where a later batch's time goes):
its counts are one job, and its local files are looked up without a listing job."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.engine import cursors
from glue_incremental.io import spark_listing
from glue_incremental.sources import bulk
from glue_incremental.sources.listing import SourceFile

pytestmark = pytest.mark.spark

_groups = itertools.count()


def jobs_of(spark: Any, action: Callable[[], Any]) -> tuple[int, Any]:
    """How many Spark jobs ``action`` started, and what it returned."""
    group = f"batch-jobs-{next(_groups)}"
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        result = action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    return len(context.statusTracker().getJobIdsForGroup(group)), result


def test_a_persisted_batchs_counts_key_range_and_partitions_are_one_spark_job(spark):
    rows = spark.createDataFrame(
        [(1, "a", 10), (5, "b", None), (3, "a", 30)], "id long, part string, updated long"
    ).persist()
    try:
        limit = datetime(2030, 1, 1, tzinfo=UTC)
        jobs, stats = jobs_of(
            spark, lambda: cursors.batch_stats(rows, "updated", limit, ("id",), ("part",))
        )
    finally:
        rows.unpersist()

    assert jobs == 1
    assert (stats.rows, stats.nulls, stats.max_cursor) == (3, 1, 30)
    assert stats.keys is not None
    assert (stats.keys.low, stats.keys.high, stats.keys.nulls) == (1, 5, 0)
    assert sorted(stats.keys.partitions or ()) == [("a",), ("b",)]
    assert spark.conf.get(cursors.ADAPTIVE_EXECUTION) == "true"  # restored after the count


def test_more_local_files_than_sparks_listing_threshold_are_read_once_each_without_a_job(
    spark, tmp_path: Path
):
    listed = []
    for key in range(40):  # Spark lists more than 32 paths in a job of its own
        path = tmp_path / "p=x" / f"part-{key:02d}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"id": key}) + "\n")
        listed.append(SourceFile("file://" + str(path), 1, path.stat().st_size))

    jobs, frame = jobs_of(
        spark,
        lambda: bulk.read_listed_files(
            spark, listed, root_uri=tmp_path.as_uri(), source_format="json", schema="id long"
        ),
    )

    assert jobs == 0
    assert sorted(row.id for row in frame.collect()) == list(range(40))
    assert spark.conf.get(spark_listing.LISTING_THRESHOLD, None) in (None, "32")
