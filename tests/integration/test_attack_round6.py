"""Round-6 attacks on the custom-job API and the join as a script on it, the one file
dataset planner of the load and the join, and the key-range skip of the key lookup: each
test is a behaviour that should hold, compared with a full recompute in plain Python."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys

import pytest
from glue_incremental.args import BookmarkOption
from glue_incremental.custom import Dataset, Reference, incremental_job, parquet
from glue_incremental.join import run_join
from glue_incremental.runtime import BookmarkControl, IncrementalRun, run_script
from glue_incremental.sources.listing import SourceNotFound
from glue_incremental.watermarks import WatermarkItemTooLarge
from pyspark.sql import functions as F

from tests.harness import joins, reference
from tests.harness.aggregates import World
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.file_jobs import COLUMNS, T0, Job, row
from tests.harness.loads import FixedClock, write_json_file

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


def _writes_by_a_key_it_lacks(job) -> None:
    days = job.affected_partitions("orders")
    job.write("daily", daily_sums(job, days), keys=["order_id"], order_by="revenue")


def _replaces_rows_without_the_partition_column(job) -> None:
    days = job.affected_partitions("orders")
    job.replace_partitions("daily", daily_sums(job, days).drop("day"), days)


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


# -- the join as a script on the custom-job API -----------------------------------------------


def join_output(target, columns) -> list[tuple]:
    rows = reference.visible_rows(target, columns)
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


def test_a_side_adding_a_column_then_an_older_partition_recomputed_keeps_every_row(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "left")
    left, right = tmp_path / "left", tmp_path / "right"
    joins.land(left, "d1", [joins.left_row(1, "a", 1)], joins.T0 - 300)
    joins.land(right, "d1", [joins.right_row(1, "r", "x")], joins.T0 - 300)
    joins.run_at(spark, config, store, job_name="evolves", run_id="jr_1", now=joins.T0)
    joins.land(left, "d2", [joins.left_row(2, "b", 2)], joins.T0 + 10)
    joins.land(right, "d2", [{**joins.right_row(2, "r", "y"), "note": "n"}], joins.T0 + 10)
    joins.run_at(spark, config, store, job_name="evolves", run_id="jr_2", now=joins.T0 + 60)
    joins.land(left, "d1", [joins.left_row(3, "c", 3)], joins.T0 + 70)

    summary = joins.run_at(
        spark, config, store, job_name="evolves", run_id="jr_3", now=joins.T0 + 120
    )

    assert summary["affected_partitions"] == 1
    columns = ["date", "id", "amount", "label", "note"]
    assert join_output(tmp_path / "target", columns) == [
        ("d1", 1, 1, "x", None),
        ("d1", 3, 3, None, None),
        ("d2", 2, 2, "y", "n"),
    ]


# -- the one file dataset planner (load and join) ---------------------------------------------


def load_target_rows(job: Job) -> list[tuple]:
    return reference.as_tuples(reference.visible_rows(job.target, COLUMNS), COLUMNS)


def load_full_refresh(job: Job) -> list[tuple]:
    return reference.as_tuples(
        reference.full_refresh(job.tmp / "source", ("id",), "updated"), COLUMNS
    )


def test_a_load_whose_source_root_disappeared_fails_in_one_line_committing_nothing(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="vanished")
    job.land([row(1, "a", 10, "x")])
    job.run()
    before = store.get_watermark("vanished")
    shutil.rmtree(tmp_path / "source")

    with pytest.raises(SourceNotFound) as error:
        job.run()

    assert "\n" not in str(error.value) and "source" in str(error.value)
    assert store.get_watermark("vanished") == before
    assert load_target_rows(job) == [(1, "a", 10, "x")]


def test_a_file_dated_in_the_future_neither_blocks_nor_hides_the_files_landing_before_its_time(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="future")
    job.land([row(1, "a", 10, "x")])
    job.run()
    write_json_file(tmp_path / "source", [row(2, "a", 20, "future")], mtime=T0 + 1000)
    job.run()
    job.land([row(3, "b", 30, "on time")])
    job.run()
    assert {r[0] for r in load_target_rows(job)} >= {1, 3}

    job.clock.now = T0 + 1100
    job.run()

    assert load_target_rows(job) == load_full_refresh(job)


def test_a_bounded_batch_ending_among_files_of_one_modification_time_reads_each_file_once(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="ties", max_batch_files=2, max_batches_per_run=1)
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 10, "x")], mtime=T0 - 50, name="f0.json")
    for number in range(1, 4):
        write_json_file(
            source, [row(number + 1, "b", 10, "t")], mtime=T0 - 40, name=f"f{number}.json"
        )
    write_json_file(source, [row(1, "a", 11, "y")], mtime=T0 - 30, name="f4.json")

    read = [job.run(max_batch_files=2, max_batches_per_run=1)["records_read"] for _ in range(3)]

    assert sum(read) == 5 and read[0] == 4, read
    assert load_target_rows(job) == load_full_refresh(job)


# -- the key-range skip of the key lookup -----------------------------------------------------


@pytest.mark.parametrize(
    "keys",
    [[9, 10, -1, -12], ["pre", "prefix", "pré", "pre\U0001f600", "Z", "\uffff"]],
    ids=["numbers_that_order_differently_as_text", "strings_with_a_prefix_and_unicode"],
)
def test_the_least_and_greatest_stored_key_moving_partition_stay_in_one_place(
    spark, store, tmp_path, keys
):
    job = Job(spark, tmp_path, store, job_name="moves")
    job.land([row(key, "a", 10, "first") for key in keys])
    job.run()

    for updated, key in enumerate((max(keys), min(keys)), start=20):
        job.land([row(key, "b", updated, "moved")])
        job.run()

    seen = load_target_rows(job)
    assert len({r[0] for r in seen}) == len(seen), f"a key is there twice: {seen}"
    assert seen == load_full_refresh(job)


def join_dry_run(spark, config, store, job_name: str, now: float) -> dict:
    run = IncrementalRun(
        spark=spark,
        job_name=job_name,
        run_id=f"dry_{now}",
        store=store,
        bookmark=BookmarkControl(BookmarkOption.ENABLE),
        clock=FixedClock(now),
        publish_metrics=False,
        dry_run=True,
    )
    with run:
        run_join(run, config)
    return run.summary


def test_a_side_appearing_after_two_runs_with_dry_runs_and_a_crash_at_published_between(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "full")
    name, t0 = "appears", joins.T0
    left_root, right_root = tmp_path / "left", tmp_path / "right"
    left = [("d1", 1, "a", 1)]
    joins.land(left_root, "d1", [joins.left_row(1, "a", 1)], t0 - 100)
    assert not joins.run_at(spark, config, store, job_name=name, run_id="jr_1", now=t0)["committed"]
    join_dry_run(spark, config, store, name, t0 + 30)
    left.append(("d2", 2, "b", 2))
    joins.land(left_root, "d2", [joins.left_row(2, "b", 2)], t0 + 40)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_2", now=t0 + 60)
    assert store.get_watermark(name, "left") is None
    right = [("d2", 2, "r", "x"), ("d3", 3, "r", "y")]
    joins.land(right_root, "d2", [joins.right_row(2, "r", "x")], t0 + 70)
    joins.land(right_root, "d3", [joins.right_row(3, "r", "y")], t0 + 70)

    with pytest.raises(Crash):
        joins.run_at(
            spark,
            config,
            store,
            job_name=name,
            run_id="jr_3",
            now=t0 + 120,
            hook=CrashAtStep(1, prefix="join.published"),
        )
    assert join_dry_run(spark, config, store, name, t0 + 130)["plan"]["affected_partitions"] == 3
    joins.run_at(spark, config, store, job_name=name, run_id="jr_4", now=t0 + 140)
    joins.assert_output(spark, config, left, right, "full")

    left.append(("d3", 3, "c", 3))
    joins.land(left_root, "d3", [joins.left_row(3, "c", 3)], t0 + 150)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_5", now=t0 + 200)
    joins.assert_output(spark, config, left, right, "full")


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


def test_a_join_side_whose_root_vanishes_waits_and_once_restored_equals_the_full_recompute(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "inner")
    name, t0 = "vanishes", joins.T0
    left_root, right_root = tmp_path / "left", tmp_path / "right"
    left = [("d1", 1, "a", 1)]
    right = [("d1", 1, "r", "x"), ("d1", 2, "r", "y")]
    joins.land(left_root, "d1", [joins.left_row(1, "a", 1)], t0 - 100)
    joins.land(right_root, "d1", [joins.right_row(1, "r", "x")], t0 - 100)
    joins.land(right_root, "d1", [joins.right_row(2, "r", "y")], t0 - 100)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_1", now=t0)
    shutil.move(right_root, tmp_path / "right.moved")
    left.append(("d1", 2, "b", 2))
    joins.land(left_root, "d1", [joins.left_row(2, "b", 2)], t0 + 10)

    joins.run_at(spark, config, store, job_name=name, run_id="jr_2", now=t0 + 60)
    shutil.move(tmp_path / "right.moved", right_root)  # restored as it was: nothing new
    joins.run_at(spark, config, store, job_name=name, run_id="jr_3", now=t0 + 120)

    joins.assert_output(spark, config, left, right, "inner")


def test_a_join_whose_side_state_cannot_be_committed_fails_first_publishing_nothing(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "left")
    joins.land(tmp_path / "left", "d1", [joins.left_row(1, "a", 1)], joins.T0 - 100)
    # Deep directories of long names: a file bookmark entry of ~2.9 kB per directory, 150 of
    # them over DynamoDB's 400 kB item.
    levels = "/".join(f"{chr(97 + level)}={'n' * 240}" for level in range(12))
    for number in range(150):
        directory = tmp_path / "right" / "date=d1" / levels / f"z={number}"
        directory.mkdir(parents=True)
        path = directory / "f.json"
        path.write_text('{"id": 1, "value": "r", "label": "x"}\n')
        os.utime(path, (joins.T0 - 5000, joins.T0 - 5000))

    with pytest.raises(WatermarkItemTooLarge, match="409600-byte item limit"):
        joins.run_at(spark, config, store, job_name="too_big", run_id="jr_1", now=joins.T0)

    assert store.get_watermark("too_big", "left") is None
    assert joins.read_output(spark, config.target_path) is None, "published, never committed"


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
