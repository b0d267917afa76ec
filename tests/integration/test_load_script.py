"""The Glue script runs locally, unchanged, as a real process; and job-level options work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from glue_incremental.args import BookmarkOption
from glue_incremental.load.job import LoadConfig

from tests.harness.loads import FixedClock, read_parquet, run_load_at, write_json_file

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000.0


def src_to_out(tmp: Path) -> LoadConfig:
    """A load of the JSON files under ``tmp/src`` (watermark ``ts``) into ``tmp/out``."""
    return LoadConfig(
        source=(tmp / "src").as_uri(),
        source_format="json",
        watermark_column="ts",
        primary_key=("id",),
        target_path=(tmp / "out").as_uri(),
    )


def test_the_script_runs_locally_unchanged_and_logs_one_summary_line(aws, store, tmp_path):
    write_json_file(tmp_path / "src", [{"id": 1, "day": "d1", "ts": 5, "v": "x"}], mtime=T0)
    command = [
        sys.executable,
        str(ROOT / "glue_scripts" / "incremental_load.py"),
        "--JOB_NAME",
        "script_job",
        "--job-bookmark-option",
        "job-bookmark-enable",
        "--source",
        (tmp_path / "src").as_uri(),
        "--source_format",
        "json",
        "--watermark_column",
        "ts",
        "--primary_key",
        "id",
        "--target_path",
        (tmp_path / "out").as_uri(),
        "--partition_by",
        "day",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ})

    assert done.returncode == 0, done.stderr[-3000:]
    summaries = [
        json.loads(line) for line in done.stdout.splitlines() if '"event": "run_summary"' in line
    ]
    assert len(summaries) == 1
    assert summaries[0]["records_read"] == 1 and summaries[0]["status"] == "SUCCEEDED"
    assert summaries[0]["run_id"].startswith("local_")
    assert store.get_watermark("script_job")["watermarks"]["cursor"] == 5


def test_the_script_fails_with_one_clear_first_line_on_a_bad_argument(aws, tmp_path):
    command = [
        sys.executable,
        str(ROOT / "glue_scripts" / "incremental_load.py"),
        "--JOB_NAME",
        "script_job",
        "--source",
        "file:///x",
        "--watermark_column",
        "ts",
        "--primary_key",
        "id",
        "--target_path",
        "file:///y",
        "--lookbak",
        "2 hours",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)

    assert done.returncode == 1
    assert (
        done.stderr.splitlines()[0]
        == "error: unknown argument --lookbak (did you mean --lookback?)"
    )


@pytest.mark.spark
def test_the_state_follows_the_logical_pipeline_name_across_job_renames(spark, store, tmp_path):
    from glue_incremental.load.job import run_load
    from glue_incremental.run.context import BookmarkControl, IncrementalRun

    config = src_to_out(tmp_path)
    write_json_file(tmp_path / "src", [{"id": 1, "ts": 5}], mtime=T0)
    for job_name, clock in (("orders_v1", T0 + 10), ("orders_v2_renamed", T0 + 20)):
        run = IncrementalRun(
            spark=spark,
            job_name=job_name,
            run_id=f"jr_{job_name}",
            store=store,
            bookmark=BookmarkControl(),
            state_name="orders-pipeline",
            clock=FixedClock(clock),
        )
        with run:
            run_load(run, config)

    assert run.summary["records_read"] == 0  # the renamed job continued from the pipeline's state
    assert store.get_watermark("orders-pipeline")["job_run_id"] == "jr_orders_v1"


@pytest.mark.spark
def test_a_paused_replay_reads_exactly_the_range_between_two_runs_and_commits_nothing(
    spark, store, tmp_path
):
    config = src_to_out(tmp_path)
    source = tmp_path / "src"
    for number in (1, 2, 3):
        write_json_file(source, [{"id": number, "ts": number}], mtime=T0 + 100 * number)
        run_load_at(
            spark,
            config,
            job_name="replay",
            run_id=f"jr_{number}",
            clock=FixedClock(T0 + 100 * number + 50),
            store=store,
        )

    summary = run_load_at(
        spark,
        config,
        job_name="replay",
        run_id="jr_replay",
        clock=FixedClock(T0 + 1000),
        store=store,
        option=BookmarkOption.PAUSE,
        from_run="jr_1",
        to_run="jr_2",
    )

    assert summary["files_read"] == 1  # only the file run jr_2 read
    assert store.get_watermark("replay")["job_run_id"] == "jr_3"
    assert read_parquet(spark, config.target_path).count() == 3
