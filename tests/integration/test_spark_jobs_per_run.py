"""How many Spark jobs a default file-to-Parquet run starts: each is fixed cost on every run
(``docs/bounded-batches.md``, "Spark jobs of a default incremental run"). A count above the bound names the line
that started each job."""

from __future__ import annotations

import pytest

from tests.harness.file_jobs import Job, row
from tests.harness.spark_jobs import jobs_started_by

pytestmark = pytest.mark.spark

# JSON schema inference, the emptiness check, the batch's statistics, the incoming keys,
# the key index lookup, the two footer reads of the touched partitions and their
# deliveries, the merge (a broadcast, its shuffle, the write), the deliveries and the index.
INCREMENTAL_RUN_JOBS = 12


def test_a_default_incremental_run_starts_at_most_12_spark_jobs_and_one_without_new_files_none(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 11, "y")])
    job.run()
    job.land([row(1, "b", 20, "x2"), row(3, "a", 21, "z")])  # key 1 moves partition

    summary, incremental = jobs_started_by(spark, job.run)
    _, nothing_new = jobs_started_by(spark, job.run)

    assert summary["records_read"] == 2
    listed = "\n".join(str(found) for found in incremental)
    assert len(incremental) <= INCREMENTAL_RUN_JOBS, listed
    assert nothing_new == [], "\n".join(str(found) for found in nothing_new)
    job.assert_equals_full_refresh()
