"""Custom job scripts on ``glue_incremental.custom``: the aggregation script recomputes only
the days that changed and always equals the plain-Python aggregation of every order;
bad scripts fail in one line with nothing written or committed; the CLI works on their
state. Orders are JSON-lines files in ``day=<d>/`` (``tests/harness/aggregates.py``)."""

from __future__ import annotations

import contextlib
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from glue_incremental.custom import (
    Dataset,
    DeclarationError,
    JobArguments,
    Reference,
    incremental_job,
    jdbc_options,
    parquet,
)
from glue_incremental.run.context import run_script
from glue_incremental_tools import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.aggregates import ROOT, World, documented_script
from tests.harness.faults import DEEP, Crash, CrashAtStep, StepCounter, crash_at, crash_points
from tests.harness.iceberg import requires_iceberg
from tests.harness.iceberg_sides import create_left, iceberg_left_join, insert_left

pytestmark = pytest.mark.spark
_deep_only = pytest.mark.skipif(not DEEP, reason="make test-deep only")


def test_each_run_replaces_only_the_days_its_orders_touched(spark, store, tmp_path):
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10), (2, 5)])
    world.land("2024-01-02", [(1, 7)])
    first = world.run(spark, "jr_1")
    assert world.output(spark) == world.expected()
    assert first["committed"] and len(first["partitions_written"]) == 2
    untouched = {p: p.stat().st_mtime_ns for p in (world.target / "day=2024-01-01").iterdir()}

    world.land("2024-01-02", [(1, 3), (3, 4)], age=120)  # late: older than the first files
    second = world.run(spark, "jr_2")

    assert world.output(spark) == world.expected()
    assert second["partitions_written"] == [{"day": "2024-01-02"}]
    assert {
        p: p.stat().st_mtime_ns for p in (world.target / "day=2024-01-01").iterdir()
    } == untouched
    assert set(store.slots("daily_revenue")) == {"orders"}


def test_the_platforms_orders_by_order_date_with_decimal_amounts_aggregate_by_day(
    spark, store, tmp_path
):
    world = World(tmp_path, day_column="order_date")
    world.land("2024-01-01", [(1, 10), (2, 5)])
    world.land("2024-01-02", [(1, 7)])
    platform = ("--day_column", "order_date", "--amount_type", "decimal(12,2)")

    world.run(spark, "jr_1", *platform)

    # Decimal revenues equal the plain-Python integer sums; the output is still by `day`.
    assert world.output(spark) == world.expected()
    assert {p.name for p in world.target.iterdir() if p.name.startswith("day=")} == {
        "day=2024-01-01",
        "day=2024-01-02",
    }


# --------------------------------------------------------------------------- the property

_DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
_change = st.tuples(
    st.sampled_from(["arrive", "late", "update"]),
    st.sampled_from(_DAYS),
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 9)), min_size=1, max_size=3),
)
_CRASH_POINTS = ["custom.published", "publish.move", "commit.before"]


@settings(max_examples=200 if DEEP else 3)
@given(
    history=st.lists(st.lists(_change, max_size=3), min_size=1, max_size=3),
    crash=st.none() | st.tuples(st.integers(0, 2), st.sampled_from(_CRASH_POINTS)),
)
def test_property_the_aggregation_equals_a_plain_python_recompute(spark, store, history, crash):
    """After any sequence of arrivals, late files (older than those already read), updates
    (a file rewritten) and a crash anywhere between the write and the commit."""
    world = World(
        Path(tempfile.mkdtemp(prefix="aggregate-property-")), f"agg-{uuid.uuid4().hex[:8]}"
    )
    files: dict[str, list[Path]] = {}
    for number, changes in enumerate(history):
        for kind, day, rows in changes:
            if kind == "update" and files.get(day):
                world.rewrite(files[day][0], rows)
            else:
                age = 400.0 if kind == "late" else 60.0 - number
                files.setdefault(day, []).append(world.land(day, rows, age=age))
        if crash is not None and crash[0] == number:
            with contextlib.suppress(Crash):
                world.run(spark, f"jr_{number}_crashed", hook=crash_at(crash[1]))
        world.run(spark, f"jr_{number}")
        assert world.output(spark) == world.expected()


# --------------------------------------------------------------------------- crashes


@pytest.fixture
def crash_bench(spark, store, tmp_path):
    """One committed run, a second batch landed; ``restore()`` undoes whatever came after."""
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10), (2, 5)], age=300)
    world.land("2024-01-02", [(1, 7)], age=300)
    world.run(spark, "jr_1")
    shutil.copytree(world.target, tmp_path / "baseline")
    world.land("2024-01-02", [(1, 3), (3, 4)], age=200)
    world.land("2024-01-03", [(2, 1)], age=200)

    def restore() -> None:
        shutil.rmtree(world.target)
        shutil.copytree(tmp_path / "baseline", world.target)
        store.rewind(world.job, "jr_1", slot="orders", why="next crash point")

    world.restore = restore  # type: ignore[attr-defined]
    return world


def test_a_crash_at_every_step_then_a_rerun_equals_the_plain_python_aggregation(
    spark, store, crash_bench
):
    world = crash_bench
    counter = StepCounter()
    world.run(spark, "jr_count", hook=counter)
    names = counter.names()
    assert {"custom.published", "publish.move", "commit.before"} <= set(names)
    for k in crash_points(names, quick=3):
        world.restore()
        with pytest.raises(Crash):
            world.run(spark, f"jr_crash_{k}", hook=CrashAtStep(k))
        world.run(spark, f"jr_rerun_{k}")
        assert world.output(spark) == world.expected(), f"crash at step {k}: {names[k - 1]}"


@pytest.mark.parametrize(
    "point",
    [
        "publish.move#1",
        pytest.param("custom.published#1", marks=_deep_only),
        pytest.param("commit.before#1", marks=_deep_only),
    ],
)
def test_sigkill_of_the_real_script_then_a_rerun_equals_the_plain_python_aggregation(
    spark, store, crash_bench, point
):
    world = crash_bench
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "tests/harness/killpoint"), str(ROOT / "lib"), str(ROOT)]
        ),
        "GLUE_INCREMENTAL_TEST_KILL_AT_POINT": point,
    }
    process = subprocess.Popen(
        [sys.executable, *world.argv("jr_killed", "--lease_seconds", "3")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        code = process.wait(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # the JVM child, if it outlived Python
    assert code == -signal.SIGKILL, f"not killed at {point}: exit {code}"
    assert store.get_watermark(world.job, "orders")["job_run_id"] == "jr_1"
    time.sleep(3.3)  # the killed run's lease expires

    world.run(spark, "jr_rerun")

    assert world.output(spark) == world.expected()


# --------------------------------------------------------------------------- bad scripts


def _bad_script(world: World, spark, body):
    def main(argv):
        with incremental_job(
            argv,
            sources={"orders": Dataset(world.orders.as_uri(), ("day",), "json")},
            targets={"daily": parquet(world.target.as_uri(), "day")},
            spark=spark,
        ) as job:
            body(job)

    return main


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            lambda job: job.replace_partitions(
                "dialy", job.read_partitions("orders", ["2024-01-01"]), ["2024-01-01"]
            ),
            "target 'dialy' is not declared by this job (declared targets: daily)",
        ),
        (
            lambda job: job.read_partitions("orders", job.affected_partitions("orders")),
            "the job read new data from orders but wrote nothing to daily",
        ),
    ],
    ids=["writes_to_an_undeclared_target", "exits_before_writing"],
)
def test_a_bad_script_fails_in_one_line_writing_and_committing_nothing(
    spark, store, tmp_path, capsys, body, message
):
    world = World(tmp_path, "bad_script")
    world.land("2024-01-01", [(1, 10)])
    capsys.readouterr()

    with pytest.raises(SystemExit) as exit_:
        run_script(_bad_script(world, spark, body), ["bad.py", "--JOB_NAME", "bad_script"])

    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err
    assert not world.target.exists()
    assert store.get_watermark("bad_script", "orders") is None


def test_a_scripts_own_exception_is_stderrs_first_line_naming_type_message_and_function(
    tmp_path,
):
    script = tmp_path / "tier_report.py"
    script.write_text(
        "from glue_incremental.run.context import run_script\n"
        "\n"
        "def check_tiers(argv):\n"
        "    raise ValueError(\"unknown customer tier 'gold'\\nthe second line stays out\")\n"
        "\n"
        "run_script(check_tiers)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), str(ROOT)])}

    done = subprocess.run(
        [sys.executable, str(script), "--JOB_NAME", "tiers"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 1
    first, *rest = done.stderr.splitlines()
    assert first == (
        "error: ValueError: unknown customer tier 'gold' (in check_tiers at tier_report.py:4)"
    )
    assert rest[0] == "Traceback (most recent call last):"  # for whoever debugs it


def test_a_dry_run_plans_and_writes_and_commits_nothing(spark, store, tmp_path):
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10)])

    summary = world.run(spark, "jr_dry", "--dry_run", "true")

    assert summary["plan"]["sources"]["orders"]["affected_partitions"] == 1
    assert not summary["committed"] and world.output(spark) == []
    assert store.get_watermark(world.job, "orders") is None


# --------------------------------------------------------------------------- the CLI


def test_the_scripts_state_survives_a_cli_rewind_and_reset(spark, store, tmp_path, capsys):
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10)], age=300)
    world.run(spark, "jr_1")
    world.land("2024-01-01", [(1, 2)], age=200)
    world.land("2024-01-02", [(2, 3)], age=200)
    world.run(spark, "jr_2")

    assert cli.main(["watermarks", "rewind", world.job, "jr_1", "--why", "recompute"]) == 0
    rerun = world.run(spark, "jr_3")

    assert rerun["records_read"] == 2 and world.output(spark) == world.expected()
    assert cli.main(["watermarks", "reset", world.job, "--why", "rebuild"]) == 0
    rebuilt = world.run(spark, "jr_4")
    assert rebuilt["records_read"] == 3 and world.output(spark) == world.expected()
    capsys.readouterr()
    assert cli.main(["watermarks", "history", world.job]) == 0
    history = capsys.readouterr().out
    assert "jr_4" in history and "reset" in history and "rewind" in history


# --------------------------------------------------------------------------- the documented script


def test_the_documented_script_runs_as_printed_and_aggregates_incrementally(
    spark, store, tmp_path, monkeypatch
):
    # Any other page printing the example prints this same script, so this runs each as printed.
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if "<!-- custom-job-example:begin -->" in page.read_text():
            assert documented_script(page) == documented_script(), page
    script = tmp_path / "daily_revenue.py"
    script.write_text(documented_script())
    world = World(tmp_path, "documented")
    argv = [str(script), "--JOB_NAME", world.job, "--orders_path", world.orders.as_uri()]
    argv += ["--target_path", world.target.as_uri()]
    world.land("2024-01-01", [(1, 10), (2, 5)], age=300)
    world.land("2024-01-02", [(1, 7)], age=300)

    for number, late in enumerate([("2024-01-02", [(1, 3)]), ("2024-01-01", [(2, 1)])]):
        monkeypatch.setattr(sys, "argv", [*argv, "--JOB_RUN_ID", f"jr_{number}"])
        runpy.run_path(str(script), run_name="__main__")
        expected = [(day, c, revenue) for day, c, revenue, _ in world.expected()]
        assert world.output(spark, ["day", "customer_id", "revenue"]) == expected
        world.land(*late, age=200)


# --------------------------------------------------------------------------- by key, with a reference


def test_a_script_merges_its_increment_by_key_with_a_reference_table_read_whole(
    spark, store, tmp_path
):
    """The greatest order of each customer, with the customer's name from a reference table:
    each run reads only the new orders and merges them by key."""
    world = World(tmp_path, "largest_order")
    customers = tmp_path / "customers.json"
    customers.write_text('{"customer_id": 1, "name": "ann"}\n{"customer_id": 2, "name": "bob"}\n')
    target = tmp_path / "largest"

    def main(argv):
        with incremental_job(
            argv,
            sources={
                "orders": Dataset(world.orders.as_uri(), ("day",), "json"),
                "customers": Reference(customers.as_uri(), "json"),
            },
            targets={"largest": parquet(target.as_uri())},
            spark=spark,
        ) as job:
            new = job.increment("orders").select("customer_id", "amount")
            named = new.join(job.read_whole("customers"), "customer_id")
            job.write("largest", named, keys=["customer_id"], order_by="amount")
        return job.summary

    world.land("2024-01-01", [(1, 10), (2, 5)], age=300)
    main(["s.py", "--JOB_NAME", world.job, "--JOB_RUN_ID", "jr_1"])
    world.land("2024-01-02", [(1, 7), (2, 9)], age=200)
    second = main(["s.py", "--JOB_NAME", world.job, "--JOB_RUN_ID", "jr_2"])

    rows = spark.read.parquet(target.as_uri()).select("customer_id", "amount", "name").collect()
    assert sorted(map(tuple, rows)) == [(1, 10, "ann"), (2, 9, "bob")]
    assert second["records_read"] == 2
    assert set(store.slots(world.job)) == {"orders"}  # a reference table keeps no state


def test_a_datasets_partition_values_are_the_text_in_its_paths(spark, store, tmp_path):
    """``hour=03`` is planned as ``"03"`` and replaced as ``hour=03`` (Spark's inference would
    read 3 and write ``hour=3``), with no declared schema; the session's setting is kept."""
    events, target = tmp_path / "events", tmp_path / "hourly"
    spark.createDataFrame([(1, "03"), (2, "03")], "id INT, hour STRING").write.partitionBy(
        "hour"
    ).parquet(events.as_uri())
    seen: list = []

    def main(argv):
        with incremental_job(
            argv,
            sources={"events": Dataset(events.as_uri(), ("hour",))},
            targets={"hourly": parquet(target.as_uri(), "hour")},
            spark=spark,
        ) as job:
            hours = job.affected_partitions("events")
            seen.extend(hours)
            rows = job.read_partitions("events", hours).groupBy("hour").count()
            job.replace_partitions("hourly", rows, hours)
        return job.summary

    inference = spark.conf.get("spark.sql.sources.partitionColumnTypeInference.enabled")
    summary = main(["s.py", "--JOB_NAME", "hourly_counts", "--JOB_RUN_ID", "jr_1"])

    assert seen == [("03",)] and summary["partitions_written"] == [{"hour": "03"}]
    assert [p.name for p in target.iterdir() if p.name.startswith("hour=")] == ["hour=03"]
    assert spark.conf.get("spark.sql.sources.partitionColumnTypeInference.enabled") == inference


def test_with_an_upstream_job_only_what_it_committed_is_aggregated(spark, store, tmp_path):
    """Files newer than the upstream's commit wait for a run after it commits."""
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10)], age=300)
    world.land("2024-01-02", [(2, 5)], age=10)  # published after the upstream's commit

    def upstream_commits(run_id: str, age: float) -> None:
        published_at_ms = int((time.time() - age) * 1000)
        store.get_watermark("orders_load")
        store.add_watermark(
            store.create_watermark_item(
                "orders_load", run_id, cursor=1, published_at_ms=published_at_ms
            )
        )

    upstream_commits("up_1", age=100)
    first = world.run(spark, "jr_1", "--upstream_job", "orders_load")
    assert world.output(spark) == [("2024-01-01", 1, 10, 1)]
    assert first["records_read"] == 1  # the newer file waits, unread, for the next run

    upstream_commits("up_2", age=0)
    world.run(spark, "jr_2", "--upstream_job", "orders_load")
    assert world.output(spark) == world.expected()


def custom_increment(spark, table: str, target: Path, run_id: str) -> list[tuple]:
    """One run of a custom job merging its Iceberg dataset's increment by key; the
    increment's (id, value) rows."""
    argv = ["s.py", "--JOB_NAME", "attack_custom_iceberg", "--JOB_RUN_ID", run_id]
    orders = Dataset(table, ("date",), format="iceberg")
    with incremental_job(
        argv,
        JobArguments(()),
        sources={"orders": orders},
        targets={"out": parquet(target.as_uri())},
        spark=spark,
    ) as job:
        rows = job.increment("orders")
        if rows is None:
            return []
        job.write("out", rows, keys=["id"], order_by="amount")
        return sorted((row.id, row.value) for row in rows.collect())


@pytest.mark.spark
@requires_iceberg
def test_a_row_deleted_from_an_iceberg_dataset_is_not_in_a_custom_jobs_increment(
    spark, tmp_path, store
):
    config = iceberg_left_join(tmp_path)
    table = create_left(spark, config)
    insert_left(spark, table, [("d1", 1, "a", 10), ("d1", 2, "b", 20)])
    assert custom_increment(spark, config.left_path, tmp_path / "out", "jr_1") == [
        (1, "a"),
        (2, "b"),
    ]
    spark.sql(f"DELETE FROM {table.quoted} WHERE id = 2")

    assert custom_increment(spark, config.left_path, tmp_path / "out", "jr_2") == []


def test_a_jdbc_source_whose_argument_is_a_common_one_is_refused_when_declared():
    # Terraform passes a source `watermarks` as --watermarks_table: the state table's argument.
    with pytest.raises(DeclarationError, match="--watermarks_table is a common argument"):
        JobArguments((*jdbc_options("payments", "watermarks"),))
