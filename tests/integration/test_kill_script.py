"""SIGKILL the real ``glue_scripts/incremental_load.py`` anywhere in a run; the rerun converges.

Kill points are of two kinds: at every hook step of the run (the process
SIGKILLs itself at step k, ``tests/harness/killpoint/sitecustomize.py``), and
after t seconds for t spread across the measured duration of a run. After
each kill, new input lands, the job reruns, and the target must equal the
pure-Python full refresh: no key twice, no row lost. ``deep`` sweeps more times.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from glue_incremental.load.job import LoadConfig
from glue_incremental.watermarks import Watermarks, create_table

from tests.harness.faults import StepCounter, crash_points
from tests.harness.loads import FixedClock, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["id", "part", "updated", "value"]
JOB = "killed"
LEASE_SECONDS = 3
DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
# `make test` kills the real script at the first step of up to 4 kinds (stage, intent, move,
# commit, ...) and at 1 moment; `make test-deep` at every step and at 40 moments.
# In-process crashes cover every kind of step in both (test_writer_crash_safety).
TIMED_KILLS = 40 if DEEP else 1
QUICK_STEP_KILLS = 4


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


BASE = [row(1, "a", 10, "v1"), row(2, "a", 10, "v2"), row(3, "b", 10, "v3")]
UPDATE = [row(1, "b", 20, "v1'"), row(3, "b", 20, "v3'"), row(4, "c", 20, "v4")]
NEXT = [row(2, "c", 30, "v2''"), row(5, "d", 30, "v5")]


class KillBench:
    def __init__(self, spark, tmp: Path, store: Watermarks) -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.source, self.target = tmp / "source", tmp / "target"
        self.config = LoadConfig(
            source=self.source.as_uri(),
            source_format="json",
            watermark_column="updated",
            primary_key=("id",),
            target_path=self.target.as_uri(),
            partition_by=("part",),
        )
        now = time.time()
        write_json_file(self.source, BASE, mtime=now - 300, name="base.json")
        self.run_in_process("jr_1", hook=None)
        write_json_file(self.source, UPDATE, mtime=now - 200, name="update.json")
        shutil.copytree(self.target, tmp / "baseline")

    def run_in_process(self, run_id: str, hook) -> None:
        run_load_at(
            self.spark,
            self.config,
            job_name=JOB,
            run_id=run_id,
            clock=FixedClock(time.time()),
            store=self.store,
            hook=hook,
        )

    def command(self, run_id: str) -> list[str]:
        return [
            sys.executable,
            str(ROOT / "glue_scripts" / "incremental_load.py"),
            *("--JOB_NAME", JOB, "--JOB_RUN_ID", run_id),
            *("--source", self.config.source, "--source_format", "json"),
            *("--watermark_column", "updated", "--primary_key", "id"),
            *("--target_path", self.config.target_path, "--partition_by", "part"),
            *("--lease_seconds", str(LEASE_SECONDS)),
        ]

    def spawn(
        self,
        run_id: str,
        *,
        kill_at_step: int = 0,
        kill_after: float | None = None,
        kill_at_point: str = "",
    ):
        """Run the script; returns (return code, seconds). Killed: -9."""
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "tests" / "harness" / "killpoint"), str(ROOT / "lib"), str(ROOT)]
            ),
            "GLUE_INCREMENTAL_TEST_KILL_AT_STEP": str(kill_at_step),
            "GLUE_INCREMENTAL_TEST_KILL_AT_POINT": kill_at_point,
        }
        started = time.monotonic()
        process = subprocess.Popen(
            self.command(run_id),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=kill_after if kill_after is not None else 600)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            code = process.wait()
        finally:
            with _quiet():
                os.killpg(process.pid, signal.SIGKILL)  # the JVM child, if it outlived Python
        return code, time.monotonic() - started

    def rerun_and_check(self, context: str, number: int) -> None:
        time.sleep(LEASE_SECONDS + 0.3)  # the killed run's lease expires
        write_json_file(self.source, NEXT, mtime=time.time() - 100, name="next.json")
        self.run_in_process(f"jr_rerun_{number}", hook=None)
        seen = as_tuples(visible_rows(self.target, COLUMNS), COLUMNS)
        expected = as_tuples(full_refresh(self.source, ("id",), "updated"), COLUMNS)
        assert len({r[0] for r in seen}) == len(seen), f"{context}: a key twice: {seen}"
        assert seen == expected, context
        shutil.rmtree(self.target)
        shutil.copytree(self.tmp / "baseline", self.target)
        self.store.rewind(JOB, "jr_1", why="next kill point")
        (self.source / "next.json").unlink()


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return exc_info[0] is ProcessLookupError or exc_info[0] is PermissionError


@pytest.fixture
def bench(spark, tmp_path, aws):
    create_table()
    return KillBench(spark, tmp_path, Watermarks())


def _steps_of_one_run(bench: KillBench) -> list[str]:
    counter = StepCounter()
    bench.run_in_process("jr_count", hook=counter)
    bench.rerun_and_check("the counting run", 0)
    return counter.names()


def test_sigkill_at_every_step_and_across_the_run_then_a_rerun_equals_a_full_refresh(bench):
    names = _steps_of_one_run(bench)
    assert len(set(names)) >= 6  # stage, intent, moves, deletes, forget, commits
    steps = crash_points(names, quick=QUICK_STEP_KILLS)

    killed = 0
    for k in steps:
        code, _ = bench.spawn(f"jr_step_{k}", kill_at_step=k)
        assert code == -signal.SIGKILL, f"step {k}: exit {code}"
        killed += 1
        bench.rerun_and_check(f"SIGKILL at step {k}", killed)

    code, duration = bench.spawn("jr_timing")
    assert code == 0
    bench.rerun_and_check("an uninterrupted run", killed + 1)
    for i in range(TIMED_KILLS):
        after = duration * (i + 0.5) / TIMED_KILLS
        code, _ = bench.spawn(f"jr_timed_{i}", kill_after=after)
        killed += code == -signal.SIGKILL
        bench.rerun_and_check(f"SIGKILL after {after:.1f}s of {duration:.1f}s", 100 + i)
    assert killed >= len(steps) + TIMED_KILLS // 2


@pytest.mark.parametrize(
    ("first_kill", "recovery_kill"),
    [
        ("publish.move#2", "recover.move#1"),
        pytest.param(
            "publish.delete#1",
            "recover.delete#1",
            marks=pytest.mark.skipif(
                os.environ.get("HYPOTHESIS_PROFILE") != "deep", reason="make test-deep only"
            ),
        ),
    ],
)
def test_sigkill_during_the_recovery_of_a_sigkilled_publish_then_a_third_run_converges(
    bench, first_kill, recovery_kill
):
    code, _ = bench.spawn("jr_killed_publishing", kill_at_point=first_kill)
    assert code == -signal.SIGKILL, f"the publish was not killed at {first_kill}: exit {code}"
    assert list((bench.target / "_staging").glob("*/_intent.json")), "no intent left to recover"
    time.sleep(LEASE_SECONDS + 0.3)

    code, _ = bench.spawn("jr_killed_recovering", kill_at_point=recovery_kill)

    assert code == -signal.SIGKILL, f"the recovery was not killed at {recovery_kill}: exit {code}"
    bench.rerun_and_check(f"SIGKILL at {first_kill}, then in recovery at {recovery_kill}", 1)
