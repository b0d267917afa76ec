"""The custom job API (``glue_incremental.custom``) with scripts that misbehave after
writing, write an empty frame, or read a dataset twice."""

from __future__ import annotations

import pytest
from glue_incremental.custom import Dataset, incremental_job, parquet
from glue_incremental.run.context import run_script
from pyspark.sql import functions as F

from tests.harness.aggregates import World

pytestmark = pytest.mark.spark


def script(world: World, spark, body):
    def main(argv):
        with incremental_job(
            argv,
            sources={"orders": Dataset(world.orders.as_uri(), ("day",), "json")},
            targets={"daily": parquet(world.target.as_uri(), "day")},
            spark=spark,
        ) as job:
            body(job)

    return main


def daily_sums(job):
    days = job.affected_partitions("orders")
    rows = job.read_partitions("orders", days)
    return days, rows.groupBy("day", "customer_id").agg(F.sum("amount").alias("revenue"))


def raises_after_writing(job) -> None:
    days, revenue = daily_sums(job)
    job.replace_partitions("daily", revenue, days)
    raise ValueError("quality check failed: revenue below zero")


def test_an_exception_after_a_write_leaves_the_output_as_it_was(spark, store, tmp_path, capsys):
    world = World(tmp_path, "raises_late")
    world.land("2024-01-01", [(1, 10)])
    capsys.readouterr()

    with pytest.raises(SystemExit):
        run_script(script(world, spark, raises_after_writing), ["x.py", "--JOB_NAME", world.job])

    first, *trace = capsys.readouterr().err.splitlines()
    assert first == (
        "error: ValueError: quality check failed: revenue below zero (in raises_after_writing "
        f"at test_custom_job_misuse.py:{raises_after_writing.__code__.co_firstlineno + 3})"
    )
    assert trace[0] == "Traceback (most recent call last):"  # what docs/custom-jobs.md says
    assert store.get_watermark(world.job, "orders") is None
    # The write was staged, never published: readers see no revenue of the failed run.
    assert world.output(spark, ["day", "customer_id", "revenue"]) == []


def test_a_dataset_read_twice_and_an_empty_write_of_its_days_then_a_real_run(
    spark, store, tmp_path
):
    world = World(tmp_path, "twice")
    world.land("2024-01-01", [(1, 10), (2, 5)])

    def writes_nothing(job) -> None:
        days, _ = daily_sums(job)
        days_again, revenue = daily_sums(job)
        assert days == days_again
        job.replace_partitions("daily", revenue.limit(0), days)

    run_script(script(world, spark, writes_nothing), ["x.py", "--JOB_NAME", world.job])
    assert world.output(spark, ["day", "customer_id", "revenue"]) == []

    world.land("2024-01-02", [(1, 7)])

    def sums(job) -> None:
        days, revenue = daily_sums(job)
        job.replace_partitions("daily", revenue, days)

    run_script(script(world, spark, sums), ["x.py", "--JOB_NAME", world.job])
    # The empty write was committed: day 1 is a day the job has done (and left empty).
    assert world.output(spark, ["day", "customer_id", "revenue"]) == [("2024-01-02", 1, 7)]
