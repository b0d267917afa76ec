"""How many Spark jobs a default file-to-Parquet run starts: each is fixed cost on every run
(``docs/bounded-batches.md``, "Spark jobs of a default incremental run"). A count above the bound names the line
that started each job."""

from __future__ import annotations

import pytest

from tests.harness.file_jobs import Job, row
from tests.harness.spark_jobs import jobs_started_by

pytestmark = pytest.mark.spark

# JSON schema inference, the batch's statistics (with its incoming keys), the key index lookup,
# the merge (a broadcast, its shuffle, the write), the deliveries and the index. The
# footers of the touched partitions and their deliveries are read by the driver.
INCREMENTAL_RUN_JOBS = 8
FIRST_RUN_JOBS = 6


def test_an_incremental_run_starts_at_most_8_spark_jobs_a_first_run_6_and_one_with_nothing_new_none(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 11, "y")])
    _, first = jobs_started_by(spark, job.run)
    job.land([row(1, "b", 20, "x2"), row(3, "a", 21, "z")])  # key 1 moves partition

    summary, incremental = jobs_started_by(spark, job.run)
    _, nothing_new = jobs_started_by(spark, job.run)

    assert summary["records_read"] == 2
    assert len(first) <= FIRST_RUN_JOBS, "\n".join(str(found) for found in first)
    listed = "\n".join(str(found) for found in incremental)
    assert len(incremental) <= INCREMENTAL_RUN_JOBS, listed
    assert nothing_new == [], "\n".join(str(found) for found in nothing_new)
    job.assert_equals_full_refresh()
