"""SIGKILL the real ``glue_scripts/incremental_load.py`` during a history run (``--history
scd2``, keys moving partition, a late version), on Parquet and on Iceberg; new input lands, a
rerun loads it, and the target is the independent reference's history of every delivery
(``tests/harness/history_reference.py``).

``make test`` kills the script once per format at the step that matters most for it:
Parquet at the first move of the publish (data, side store and index half moved), Iceberg
between the snapshot's commit and the DynamoDB state's (the rerun must roll the snapshot
forward); ``make test-deep`` at every step of the run. The in-process crash tests are
``test_history_parquet.py``'s and ``test_history_iceberg.py``'s.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.load.job import LoadConfig
from glue_incremental.watermarks import Watermarks, create_table
from glue_incremental_tools import cli

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import StepCounter, crash_points
from tests.harness.history_reference import Made, history
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.loads import FixedClock, run_load_at, write_json_file
from tests.harness.reference import source_rows

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
JOB = "killed_history"
LEASE_SECONDS = 3


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


BASE = [row(1, "a", 10, "v1"), row(2, "a", 10, "v2"), row(3, "b", 10, "v3")]
# Key 1 moves partition, key 3 changes, key 2 gets a late version before its first.
UPDATE = [
    row(1, "b", 20, "v1'"),
    row(3, "b", 20, "v3'"),
    row(2, "a", 5, "v2-"),
    row(4, "c", 20, "v4"),
]
NEXT = [row(2, "c", 30, "v2''"), row(5, "d", 30, "v5"), row(3, "b", 15, "v3~")]


class HistoryKillBench:
    """A history load (``fmt``: ``parquet`` or ``iceberg``) with a first run made and the
    next input landed; ``spawn`` runs the real script on it, ``rerun_and_check`` lands more,
    reruns in-process, compares with the reference and puts the target back for the next kill."""

    def __init__(self, spark: Any, tmp: Path, store: Watermarks, fmt: str = "parquet") -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.source, self.target = tmp / "source", tmp / "target"
        self.table = unique_table("killed_history") if fmt == "iceberg" else ""
        self.config = LoadConfig(
            source=self.source.as_uri(),
            source_format="json",
            watermark_column="updated",
            primary_key=("id",),
            target_path="" if self.table else self.target.as_uri(),
            partition_by=("part",),
            history="scd2",
            **({"target_format": "iceberg", "target_table": self.table} if self.table else {}),
        )
        now = time.time()
        write_json_file(self.source, BASE, mtime=now - 300, name="base.json")
        self.run_in_process("jr_1")
        write_json_file(self.source, UPDATE, mtime=now - 200, name="update.json")
        if not self.table:
            shutil.copytree(self.target, tmp / "baseline")

    def run_in_process(self, run_id: str, hook: Any = None) -> None:
        run_load_at(
            self.spark,
            self.config,
            job_name=JOB,
            run_id=run_id,
            clock=FixedClock(time.time()),
            store=self.store,
            hook=hook,
        )

    def spawn(self, run_id: str, *, kill_at_step: int = 0, kill_at_point: str = "") -> int:
        """The real script, SIGKILLed by itself at step ``kill_at_step`` or at the point
        ``kill_at_point`` (``name#n``: its n-th time); its exit code."""
        target = (
            ("--target_format", "iceberg", "--target_table", self.table)
            if self.table
            else ("--target_path", self.config.target_path)
        )
        command = [
            sys.executable,
            str(ROOT / "glue_scripts" / "incremental_load.py"),
            *("--JOB_NAME", JOB, "--JOB_RUN_ID", run_id),
            *("--source", self.config.source, "--source_format", "json"),
            *("--watermark_column", "updated", "--primary_key", "id"),
            *(*target, "--partition_by", "part"),
            *("--history", "scd2", "--lease_seconds", str(LEASE_SECONDS)),
        ]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "tests" / "harness" / "killpoint"), str(ROOT / "lib"), str(ROOT)]
            ),
            "GLUE_INCREMENTAL_TEST_KILL_AT_STEP": str(kill_at_step),
            "GLUE_INCREMENTAL_TEST_KILL_AT_POINT": kill_at_point,
        }
        if self.table:  # as test_iceberg_load.py's killed script (its warehouse: the env's)
            env["GLUE_INCREMENTAL_SPARK_MASTER"] = "local[1]"
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

    def versions(self) -> list[dict]:
        """The version rows as a reader sees them, by key and ``valid_from`` (an Iceberg
        table's absorbed deliveries, valid for no time, and hidden columns left out)."""
        if self.table:
            name = self.config.iceberg_target.name
            found = self.spark.table(name).where("valid_to IS NULL OR valid_from < valid_to")
            rows = [
                {k: v for k, v in one.asDict().items() if not k.startswith("__")}
                for one in found.collect()
            ]
        else:
            rows = [r.asDict() for r in self.spark.read.parquet(self.target.as_uri()).collect()]
        return sorted(rows, key=lambda one: (one["id"], one["valid_from"]))

    def rerun_and_check(self, context: str, number: int) -> None:
        time.sleep(LEASE_SECONDS + 0.3)  # the killed run's lease expires
        write_json_file(self.source, NEXT, mtime=time.time() - 100, name="next.json")
        self.run_in_process(f"jr_rerun_{number}")
        seen = self.versions()
        made = [Made(one, delivery) for delivery, one in source_rows(self.source)]
        expected = [{**one, "part": str(one["part"])} for one in history(made, ["id"], "updated")]
        assert seen == [{name: one.get(name) for name in sorted(seen[0])} for one in expected], (
            context
        )
        if self.table:  # the table back at the first run's snapshot, with the state
            assert cli.main(["watermarks", "rewind", JOB, "jr_1", "--why", "next kill"]) == 0
        else:
            shutil.rmtree(self.target)
            shutil.copytree(self.tmp / "baseline", self.target)
            self.store.rewind(JOB, "jr_1", why="next kill point")
        (self.source / "next.json").unlink()


def kill_at_every_step(bench: HistoryKillBench) -> None:
    """``make test-deep``: the steps an in-process run reaches, counted; the real script
    killed at each in turn, each kill followed by new input and a checked rerun."""
    counter = StepCounter()
    bench.run_in_process("jr_count", hook=counter)
    bench.rerun_and_check("the counting run", 0)
    names = counter.names()
    for k in crash_points(names):  # every step
        code = bench.spawn(f"jr_step_{k}", kill_at_step=k)
        assert code == -signal.SIGKILL, f"step {k} ({names[k - 1]}): exit {code}"
        bench.rerun_and_check(f"SIGKILL at step {k} ({names[k - 1]})", k)


@pytest.fixture
def bench(spark, tmp_path, aws):
    create_table()
    return HistoryKillBench(spark, tmp_path, Watermarks())


@pytest.fixture
def iceberg_bench(spark, tmp_path, aws):
    create_table()
    return HistoryKillBench(spark, tmp_path, Watermarks(), "iceberg")


def test_sigkill_of_the_real_script_during_a_history_run_then_a_rerun_equals_the_reference(
    bench,
):
    if not IN_DEEP_RUN:  # the first move of the publish: data, side store and index half moved
        code = bench.spawn("jr_killed", kill_at_point="publish.move#1")
        assert code == -signal.SIGKILL, f"exit {code}"
        bench.rerun_and_check("SIGKILL at the publish's first move", 1)
        return
    kill_at_every_step(bench)


@requires_iceberg
def test_sigkill_of_the_real_script_during_an_iceberg_history_run_then_a_rerun_equals_the_reference(
    iceberg_bench,
):
    bench = iceberg_bench
    if not IN_DEEP_RUN:  # between the snapshot and the state's commit: rolled forward
        code = bench.spawn("jr_killed", kill_at_point="commit.before")
        assert code == -signal.SIGKILL, f"exit {code}"
        bench.rerun_and_check("SIGKILL between the snapshot and the state's commit", 1)
        entries = list(bench.store.iter_history(JOB))
        assert any("rolled_forward_from_snapshot" in entry for entry in entries)
        return
    kill_at_every_step(bench)
