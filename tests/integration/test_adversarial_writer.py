"""Adversarial checks of the publish protocol: runs that race, stale runs, odd paths.

Each test drives the real writer on real Spark against a local target and
compares the target with what must be there, read with pyarrow (no library code).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_incremental import publish, writer

from tests.harness.reference import as_tuples, visible_rows

pytestmark = pytest.mark.spark

COLUMNS = ["id", "p", "ts", "v"]


def _frame(spark, rows):
    return spark.createDataFrame(rows, "id long, p string, ts long, v string").coalesce(1)


def _upsert(spark, rows, target: str, run_id: str, *, before_publish=None):
    return writer.upsert(
        spark,
        _frame(spark, rows),
        target,
        primary_key=["id"],
        partition_by=["p"],
        order_by="ts",
        run_id=run_id,
        before_publish=before_publish,
    )


def _target_rows(target: Path):
    return as_tuples(visible_rows(target, COLUMNS), COLUMNS)


def test_a_stale_run_whose_staging_was_recovered_by_the_next_run_deletes_no_live_file(
    spark, tmp_path
):
    """Run A passes its lease check, stalls; its lease expires; run B takes over, recovers
    (A's staging has no intent yet, so it is discarded), publishes and commits. When A
    resumes, its publish must not delete B's live files: A's staged rows are gone."""
    target = tmp_path / "t"
    _upsert(spark, [(1, "a", 1, "base"), (2, "a", 1, "base")], target.as_uri(), "r0")
    late = [(3, "a", 5, "from B")]

    def stall_while_the_next_run_takes_over():
        _upsert(spark, late, target.as_uri(), "runB")

    refused = None
    try:
        _upsert(
            spark,
            [(1, "a", 2, "from A")],
            target.as_uri(),
            "runA",
            before_publish=stall_while_the_next_run_takes_over,
        )
    except publish.PublishError as error:
        refused = error
    assert _target_rows(target) == [(1, "a", 1, "base"), (2, "a", 1, "base"), (3, "a", 5, "from B")]
    assert refused is not None and "runA" in str(refused)
    assert "nothing live was touched" in str(refused)
