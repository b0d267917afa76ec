"""A custom script's contract (issue 26): what it may ask, write and describe, and the one
line it fails with, publishing and committing nothing, when it breaks the contract.
"""

from __future__ import annotations

import contextlib
import sys

import pytest
from glue_incremental.custom import Dataset, Reference, incremental_job, parquet
from glue_incremental.run.context import run_script
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


def _writes_by_a_key_it_lacks(job) -> None:
    days = job.affected_partitions("orders")
    job.write("daily", daily_sums(job, days), keys=["order_id"], order_by="revenue")


def _replaces_rows_without_the_partition_column(job) -> None:
    days = job.affected_partitions("orders")
    job.replace_partitions("daily", daily_sums(job, days).drop("day"), days)


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


def test_wait_for_schemas_before_planning_two_datasets_together_is_one_line_writing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "waits_first")
    world.land("2024-01-01", [(1, 10)])
    (tmp_path / "refunds" / "day=2024-01-01").mkdir(parents=True)
    (tmp_path / "refunds" / "day=2024-01-01" / "r.json").write_text('{"customer_id": 1}\n')

    def body(job) -> None:
        if job.wait_for_schemas("orders", "refunds"):
            job.affected_partitions("orders", "refunds")

    err = one_line_error(capsys, two_datasets(world, spark, body), world.job)

    assert "plan them together" in err
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []


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


@pytest.mark.parametrize(
    ("body", "column"),
    [(_writes_by_a_key_it_lacks, "order_id"), (_replaces_rows_without_the_partition_column, "day")],
    ids=["key_not_in_rows", "partition_column_not_in_rows"],
)
def test_a_write_naming_a_column_its_rows_lack_fails_first_line_naming_it_writing_nothing(
    spark, store, tmp_path, capsys, body, column
):
    world = World(tmp_path, "lacks_column")
    world.land("2024-01-01", [(1, 10)])
    capsys.readouterr()

    with pytest.raises(SystemExit):
        run_script(script(world, spark, body), ["x.py", "--JOB_NAME", world.job])

    err = capsys.readouterr().err
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []
    # Spark's own error (its traceback follows): the first line names the column.
    assert err.startswith("error: ") and f"`{column}`" in err.splitlines()[0], err


def test_a_script_describing_a_key_the_summary_sets_is_one_line_publishing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "describes")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        days = job.affected_partitions("orders")
        job.describe(records_read=job.planned("orders").records_read, days=len(days))
        job.replace_partitions("daily", daily_sums(job, days), days)

    capsys.readouterr()
    with contextlib.suppress(SystemExit):
        run_script(script(world, spark, body), ["x.py", "--JOB_NAME", world.job])

    committed = store.get_watermark(world.job, "orders") is not None
    published = world.output(spark, DAILY) != []
    assert committed == published, "the output was published but its state never committed"
    err = capsys.readouterr().err
    assert err.startswith("error: describe(records_read=...)") and err.count("\n") == 1, err


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


def test_rows_outside_the_partitions_named_to_replace_are_refused_and_lose_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "outside")
    world.land("2024-01-01", [(1, 10), (2, 5)], age=300)

    def sums(job) -> None:
        days = job.affected_partitions("orders")
        job.replace_partitions("daily", daily_sums(job, days), days)

    run_script(script(world, spark, sums), ["x.py", "--JOB_NAME", world.job])
    world.land("2024-01-02", [(1, 7)], age=200)

    def with_yesterday(job) -> None:
        days = job.affected_partitions("orders")  # 2024-01-02
        today = daily_sums(job, days)
        yesterday = today.withColumn("day", F.date_format(F.date_sub("day", 1), "yyyy-MM-dd"))
        job.replace_partitions("daily", today.unionByName(yesterday), days)

    capsys.readouterr()
    with contextlib.suppress(SystemExit):
        run_script(script(world, spark, with_yesterday), ["x.py", "--JOB_NAME", world.job])

    assert ("2024-01-01", 2, 5) in world.output(spark, DAILY), "a customer's day was lost"
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err


def test_a_script_reading_only_a_reference_table_publishes_and_succeeds_every_run(
    spark, store, tmp_path
):
    world = World(tmp_path, "reference_only")
    (tmp_path / "totals").mkdir()
    (tmp_path / "totals" / "t.json").write_text(
        '{"day": "2024-01-01", "customer_id": 1, "revenue": 10}\n'
    )

    def main(argv):
        with incremental_job(
            argv,
            sources={"totals": Reference((tmp_path / "totals").as_uri(), "json")},
            targets={"daily": parquet(world.target.as_uri(), "day")},
            spark=spark,
        ) as job:
            totals = job.read_whole("totals")
            job.write("daily", totals, keys=["day", "customer_id"], order_by="revenue")

    for number in (1, 2):
        run_script(main, ["x.py", "--JOB_NAME", world.job, "--JOB_RUN_ID", f"jr_{number}"])

    assert world.output(spark, DAILY) == [("2024-01-01", 1, 10)]


def test_a_script_calling_sys_exit_inside_its_block_exits_non_zero_committing_nothing(
    spark, store, tmp_path, capsys
):
    world = World(tmp_path, "sys_exit")
    world.land("2024-01-01", [(1, 10)])

    def body(job) -> None:
        job.affected_partitions("orders")
        sys.exit(0)  # "nothing to do today", before writing what it read

    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        run_script(script(world, spark, body), ["x.py", "--JOB_NAME", world.job])

    assert exit_.value.code not in (0, None), "Glue would mark the run SUCCEEDED"
    err = capsys.readouterr().err
    assert err.startswith("error: the script called sys.exit(0)") and err.count("\n") == 1, err
    assert store.get_watermark(world.job, "orders") is None and world.output(spark, DAILY) == []
