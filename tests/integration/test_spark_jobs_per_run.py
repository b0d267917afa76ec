"""What a default file-to-Parquet run costs on every run, whatever its size: its Spark jobs
(``docs/bounded-batches.md``, "Spark jobs of a default incremental run") and the driver's
py4j round trips to its JVM. A count above the bound names the line that started each job."""

from __future__ import annotations

import pytest
from glue_incremental.io.hadoop_fs import HadoopFileSystem

from tests.harness.file_jobs import Job, row
from tests.harness.py4j_calls import Py4jCalls
from tests.harness.spark_jobs import jobs_started_by

pytestmark = pytest.mark.spark

# JSON schema inference, the batch's statistics (with its incoming keys), the key index lookup,
# the merge (a broadcast, then one write that also runs its shuffles), the deliveries and the index. The
# footers of the touched partitions and their deliveries are read by the driver.
INCREMENTAL_RUN_JOBS = 7
FIRST_RUN_JOBS = 5
# About 760-930 measured for this run (PySpark 3.5.6; releases vary with the garbage
# collector), 1,470 when every expression was built as Column objects (a lookup, a call and
# a release each; io/jvm_calls.py sends them as SQL text). The bound catches a per-file or
# per-row loop through py4j, and expressions built one Column at a time again.
INCREMENTAL_RUN_ROUND_TRIPS = 1_200
NOTHING_NEW_ROUND_TRIPS = 40


def test_an_incremental_run_starts_at_most_7_spark_jobs_a_first_run_5_and_one_with_nothing_new_none(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 11, "y")])
    _, first = jobs_started_by(spark, job.run)
    job.land([row(1, "b", 20, "x2"), row(3, "a", 21, "z")])  # key 1 moves partition

    incremental_calls, nothing_new_calls = Py4jCalls(), Py4jCalls()
    summary, incremental = jobs_started_by(spark, lambda: counted(incremental_calls, job.run))
    _, nothing_new = jobs_started_by(spark, lambda: counted(nothing_new_calls, job.run))

    assert summary["records_read"] == 2
    assert len(first) <= FIRST_RUN_JOBS, "\n".join(str(found) for found in first)
    listed = "\n".join(str(found) for found in incremental)
    assert len(incremental) <= INCREMENTAL_RUN_JOBS, listed
    assert nothing_new == [], "\n".join(str(found) for found in nothing_new)
    assert incremental_calls.round_trips <= INCREMENTAL_RUN_ROUND_TRIPS, incremental_calls.figures()
    assert nothing_new_calls.round_trips <= NOTHING_NEW_ROUND_TRIPS, nothing_new_calls.figures()
    # The target's file system was opened by the first run: later runs look it up no more.
    assert incremental_calls.filesystems_opened == nothing_new_calls.filesystems_opened == 0
    job.assert_equals_full_refresh()


def counted(calls: Py4jCalls, run):
    with calls:
        return run()


def test_a_file_system_root_once_opened_costs_no_round_trip_to_open_again(spark, s3_bucket):
    HadoopFileSystem(spark, f"s3a://{s3_bucket}/target/")

    with Py4jCalls() as calls:
        again = HadoopFileSystem(spark, f"s3a://{s3_bucket}/other/")

    assert calls.figures()["py4j_round_trips"] == calls.filesystems_opened == 0
    again.write_bytes(f"s3a://{s3_bucket}/other/file", b"x")
    assert again.read_bytes(f"s3a://{s3_bucket}/other/file") == b"x"
