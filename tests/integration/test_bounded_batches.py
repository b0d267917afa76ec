"""Bounded batches: a backfill committed batch by batch, continued after a crash, a SIGKILL
or a run's batch limit, always converging on the full refresh (``docs/bounded-batches.md``).

Files: one JSON file per modification time, ``--max_batch_files 2``. JDBC: PostgreSQL
rows with ties at a batch's boundary, ``--max_batch_rows``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.watermarks import Watermarks

from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_points
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
COLUMNS = ["id", "part", "updated", "value"]
T0 = 1_700_000_000.0


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


# One file per modification time; key 1 moves partition and key 2 changes in later files.
BACKLOG = [
    [row(1, "a", 10, "v1"), row(2, "a", 10, "v2")],
    [row(3, "b", 20, "v3")],
    [row(1, "b", 30, "v1'"), row(4, "c", 30, "v4")],
    [row(2, "a", 40, "v2'"), row(5, "c", 40, "v5")],
    [row(3, "d", 50, "v3'")],
]
NEXT = [row(4, "c", 60, "v4''"), row(6, "a", 60, "v6")]


class Backfill:
    """A file source with a backlog, loaded in batches of two files into ``part``-partitioned
    Parquet; each instance has its own directory and state name."""

    def __init__(
        self, spark, tmp: Path, store: Watermarks, name: str, *, files: int = 5, **options
    ) -> None:
        self.spark, self.tmp, self.store, self.name = spark, tmp, store, name
        self.source, self.target = tmp / "source", tmp / "target"
        self.config = json_files_config(tmp, partition_by=("part",), max_batch_files=2, **options)
        for i, rows in enumerate(BACKLOG[:files]):
            write_json_file(self.source, rows, mtime=T0 - 500 + 10 * i, name=f"f{i}.json")
        self.runs = 0

    def run(self, hook=None, *, dry_run: bool = False, config=None) -> dict:
        self.runs += 1
        return run_load_at(
            self.spark,
            config or self.config,
            job_name=self.name,
            run_id=f"jr_{self.runs}",
            clock=FixedClock(T0 + 100 * self.runs),
            store=self.store,
            hook=hook,
            dry_run=dry_run,
        )

    def committed_high_mark_ms(self) -> int | None:
        state = self.store.get_watermark(self.name)
        return state["watermarks"]["files"]["high_mark_ms"] if state else None

    def assert_equals_full_refresh(self, context: str) -> None:
        seen = as_tuples(visible_rows(self.target, COLUMNS), COLUMNS)
        expected = as_tuples(full_refresh(self.source, ("id",), "updated"), COLUMNS)
        assert len({r[0] for r in seen}) == len(seen), f"{context}: a key is there twice: {seen}"
        assert seen == expected, context


def _files_after(backfill: Backfill, high_mark_ms: int | None) -> int:
    return sum(
        1
        for path in backfill.source.glob("*.json")
        if high_mark_ms is None or path.stat().st_mtime_ns // 1_000_000 > high_mark_ms
    )


def test_a_backfill_runs_as_batches_each_committed_and_a_run_limit_leaves_the_rest_to_the_next(
    spark, tmp_path, store
):
    backfill = Backfill(spark, tmp_path, store, "limited", files=3, max_batches_per_run=1)

    planned = backfill.run(dry_run=True)
    assert [batch["files"] for batch in planned["plan"]["batches"]] == [2]  # the run's limit
    assert backfill.committed_high_mark_ms() is None

    first = backfill.run()
    assert first["status"] == "SUCCEEDED"
    assert (first["batches"], first["batch_limit_reached"], first["files_read"]) == (1, True, 2)
    assert _files_after(backfill, backfill.committed_high_mark_ms()) == 1

    second = backfill.run()
    assert (second["batches"], second["batch_limit_reached"], second["files_read"]) == (1, False, 1)
    assert store.get_watermark(backfill.name)["version"] == 2  # one commit per batch
    backfill.assert_equals_full_refresh("after the backlog was spread over two runs")


def _crash_handlers(spark, tmp: Path, store: Watermarks) -> list[tuple[str, CrashAtStep]]:
    """Deep: a crash at every step of a counted batched run. `make test`: between batch 1's
    commit and batch 2's read, and just before batch 2's commit."""
    if not DEEP:
        return [
            ("batch.next#1", CrashAtStep(1, prefix="batch.next")),
            ("commit.before#2", CrashAtStep(2, prefix="commit.before")),
        ]
    counter = StepCounter()
    Backfill(spark, tmp / "count", store, "count", files=3).run(hook=counter)
    names = counter.names()
    assert names.count("batch.next") == 1 and names.count("commit.after") == 2
    return [(f"{names[k - 1]} (step {k})", CrashAtStep(k)) for k in crash_points(names)]


def test_a_crash_at_every_step_of_a_batched_run_then_a_rerun_equals_a_full_refresh(
    spark, tmp_path, store
):
    handlers = _crash_handlers(spark, tmp_path, store)
    assert handlers
    for number, (where, crash) in enumerate(handlers):
        backfill = Backfill(spark, tmp_path / f"k{number}", store, f"k{number}", files=3)
        with pytest.raises(Crash):
            backfill.run(hook=crash)
        kept = backfill.committed_high_mark_ms()
        left = _files_after(backfill, kept)
        write_json_file(backfill.source, NEXT, mtime=T0 - 100, name="next.json")
        rerun = backfill.run()
        assert rerun["files_read"] == left + 1, f"{where}: the rerun reads what was not kept"
        backfill.assert_equals_full_refresh(f"crash at {where}")


def _script(backfill: Backfill, run_id: str, kill_at_point: str) -> int:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "tests" / "harness" / "killpoint"), str(ROOT / "lib"), str(ROOT)]
        ),
        "GLUE_INCREMENTAL_TEST_KILL_AT_POINT": kill_at_point,
    }
    command = [
        sys.executable,
        str(ROOT / "glue_scripts" / "incremental_load.py"),
        *("--JOB_NAME", backfill.name, "--JOB_RUN_ID", run_id),
        *("--source", backfill.config.source, "--source_format", "json"),
        *("--watermark_column", "updated", "--primary_key", "id"),
        *("--target_path", backfill.config.target_path, "--partition_by", "part"),
        *("--max_batch_files", "2", "--lease_seconds", "3"),
    ]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        return process.wait(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # the JVM child, if it outlived Python


@pytest.mark.parametrize(
    "kill_at",
    [
        "publish.intent#2",
        pytest.param(
            "batch.next#1",
            marks=pytest.mark.skipif(not DEEP, reason="make test-deep only"),
        ),
    ],
)
def test_sigkill_of_the_script_during_a_bounded_backfill_then_a_rerun_continues_it(
    spark, tmp_path, store, kill_at
):
    backfill = Backfill(spark, tmp_path, store, "sigkilled", files=3)
    assert _script(backfill, "jr_killed", kill_at) == -signal.SIGKILL
    kept = backfill.committed_high_mark_ms()
    assert kept is not None, "the first batch was committed before the kill"
    time.sleep(3.3)  # the killed run's lease expires
    rerun = backfill.run()
    assert rerun["files_read"] == _files_after(backfill, kept) < 3
    backfill.assert_equals_full_refresh(f"SIGKILL at {kill_at}")


def test_jdbc_batches_bounded_by_rows_never_split_a_watermark_value(
    spark, postgres, tmp_path, store
):
    base = datetime(2024, 1, 1, tzinfo=UTC)
    at = [base + timedelta(minutes=m) for m in (1, 2, 2, 2, 3, 4)]  # three rows tie at minute 2
    with orders_table(postgres, prefix="batched") as table:
        upsert(postgres, table, [(i, "p", when, f"v{i}") for i, when in enumerate(at, 1)])
        clock = FixedClock(time.time())

        def run(run_id: str, dry_run: bool = False, **options) -> dict:
            config = jdbc_config(
                postgres, table, tmp_path, max_batch_rows=2, lookback=timedelta(0), **options
            )
            return run_load_at(
                spark,
                config,
                job_name="batched",
                run_id=run_id,
                clock=clock,
                store=store,
                dry_run=dry_run,
            )

        def loaded() -> list[tuple[int, str]]:
            frame = spark.read.parquet((tmp_path / "target").as_uri())
            return sorted((r["id"], r["value"]) for r in frame.select("id", "value").collect())

        planned = run("jr_dry", dry_run=True)
        ends = [batch["ends_at_watermark"] for batch in planned["plan"]["batches"]]
        assert len(ends) == 3 and ends[-1] is None  # minute 2 (its ties), minute 4, the rest

        first = run("jr_1", max_batches_per_run=1)
        assert (first["batches"], first["batch_limit_reached"]) == (1, True)
        assert loaded() == [(i, f"v{i}") for i in range(1, 5)], "the tied rows came together"

        second = run("jr_2")
        assert second["status"] == "SUCCEEDED"
        assert loaded() == [(i, f"v{i}") for i in range(1, 7)]
        upsert(postgres, table, [(7, "q", base + timedelta(minutes=5), "v7")])
        run("jr_3")
        assert loaded() == [(i, f"v{i}") for i in range(1, 8)]


@requires_iceberg
def test_an_iceberg_backfill_commits_one_snapshot_per_batch_and_continues_after_a_crash(
    spark, tmp_path, store
):
    table = unique_table("batched")
    backfill = Backfill(
        spark,
        tmp_path,
        store,
        "ice_batched",
        files=3,
        target_format="iceberg",
        target_table=table,
    )
    with pytest.raises(Crash):
        backfill.run(hook=CrashAtStep(1, prefix="batch.next"))
    assert _files_after(backfill, backfill.committed_high_mark_ms()) == 1
    rerun = backfill.run()
    assert (rerun["batches"], rerun["files_read"]) == (1, 1)
    assert len(iceberg_writer.snapshots(spark, backfill.config.iceberg_target)) == 2
    expected = as_tuples(full_refresh(backfill.source, ("id",), "updated"), COLUMNS)
    assert table_rows(spark, backfill.config.iceberg_target.name, COLUMNS) == expected
