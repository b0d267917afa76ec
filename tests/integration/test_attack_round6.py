"""Round-6 attacks on the custom-job API and the join as a script on it, the one file
dataset planner of the load and the join, and the key-range skip of the key lookup: each
test is a behaviour that should hold, compared with a full recompute in plain Python."""

from __future__ import annotations

import shutil

import pytest
from glue_incremental.custom import Dataset, incremental_job, parquet
from glue_incremental.runtime import run_script
from pyspark.sql import functions as F

from tests.harness.aggregates import World

pytestmark = pytest.mark.spark

DAILY = ["day", "customer_id", "revenue"]


def script(world: World, spark, body, **more_targets):
    def main(argv):
        with incremental_job(
            argv,
            sources={"orders": Dataset(world.orders.as_uri(), ("day",), "json")},
            targets={"daily": parquet(world.target.as_uri(), "day"), **more_targets},
            spark=spark,
        ) as job:
            body(job)

    return main


def two_datasets(world: World, spark, body):
    def main(argv):
        with incremental_job(
            argv,
            sources={
                "orders": Dataset(world.orders.as_uri(), ("day",), "json"),
                "refunds": Dataset((world.tmp / "refunds").as_uri(), ("day",), "json"),
            },
            targets={"daily": parquet(world.target.as_uri(), "day")},
            spark=spark,
        ) as job:
            body(job)

    return main


def daily_sums(job, days):
    rows = job.read_partitions("orders", days)
    return rows.groupBy("day", "customer_id").agg(F.sum("amount").alias("revenue"))


def one_line_error(capsys, main, job_name: str) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        run_script(main, ["x.py", "--JOB_NAME", job_name])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# -- custom scripts' contract (issue 26) ------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="a script's first target is published before its second target's write fails",
)
def test_a_second_target_whose_rows_fail_leaves_the_first_target_unpublished(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "two_targets")
    world.land("2024-01-01", [(1, 10)])
    audit = tmp_path / "audit"

    def body(job) -> None:
        days = job.affected_partitions("orders")
        revenue = daily_sums(job, days)
        job.replace_partitions("daily", revenue, days)
        broken = revenue.withColumn("check", F.raise_error(F.lit("audit rule broken")))
        job.replace_partitions("audit", broken, days)

    capsys.readouterr()
    with pytest.raises(SystemExit):
        run_script(
            script(world, spark, body, audit=parquet(audit.as_uri(), "day")),
            ["x.py", "--JOB_NAME", world.job],
        )

    assert store.get_watermark(world.job, "orders") is None
    # Nothing committed, so nothing published: readers of ``daily`` see no row of the run.
    assert world.output(spark, DAILY) == []


def test_affected_partitions_of_one_dataset_then_of_two_is_one_line_writing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "one_then_two")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        job.affected_partitions("orders")
        job.affected_partitions("orders", "refunds")

    err = one_line_error(capsys, two_datasets(world, spark, body), world.job)

    assert "plan them together" in err
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []


@pytest.mark.xfail(
    strict=True,
    reason="affected_partitions(b, a) after affected_partitions(a, b) says to plan them together",
)
def test_affected_partitions_of_two_datasets_asked_again_in_the_other_order_is_the_same(
    spark, store, tmp_path
):
    world = World(tmp_path, "both_orders")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        days = job.affected_partitions("orders", "refunds")
        assert job.affected_partitions("refunds", "orders") == days
        job.replace_partitions("daily", daily_sums(job, days), days)

    run_script(two_datasets(world, spark, body), ["x.py", "--JOB_NAME", world.job])

    assert world.output(spark, DAILY) == [("2024-01-01", 1, 10)]


def test_wait_for_schemas_in_a_script_commits_nothing_until_the_dataset_has_a_file(
    spark, store, tmp_path
):
    world = World(tmp_path, "waits")
    world.land("2024-01-01", [(1, 10)])
    refunds = tmp_path / "refunds"

    def body(job) -> None:
        days = job.affected_partitions("orders", "refunds")
        if not job.wait_for_schemas("orders", "refunds"):
            return
        job.replace_partitions("daily", daily_sums(job, days), days)

    main = two_datasets(world, spark, body)
    run_script(main, ["x.py", "--JOB_NAME", world.job, "--JOB_RUN_ID", "jr_1"])
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []

    (refunds / "day=2024-01-02").mkdir(parents=True)
    (refunds / "day=2024-01-02" / "r.json").write_text('{"customer_id": 1, "amount": 1}\n')
    world.land("2024-01-03", [(2, 5)])
    run_script(main, ["x.py", "--JOB_NAME", world.job, "--JOB_RUN_ID", "jr_2"])

    assert world.output(spark, DAILY) == [("2024-01-01", 1, 10), ("2024-01-03", 2, 5)]


def test_a_script_that_reads_an_increment_and_writes_nothing_is_one_line_committing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "reads_only")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        job.increment("orders").count()

    err = one_line_error(capsys, script(world, spark, body), world.job)

    assert "wrote nothing to daily" in err
    assert store.get_watermark(world.job, "orders") is None


def test_a_script_writing_a_target_twice_is_one_line_publishing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "twice")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        days = job.affected_partitions("orders")
        job.replace_partitions("daily", daily_sums(job, days), days)
        job.replace_partitions("daily", daily_sums(job, days), days)

    err = one_line_error(capsys, script(world, spark, body), world.job)

    assert "already written" in err
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []
