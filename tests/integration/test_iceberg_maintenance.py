"""Iceberg maintenance: expiry never removes a snapshot a watermark points at; compaction keeps rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from glue_incremental.load.job import LoadConfig
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.iceberg.maintenance import Retention, compact, expire
from glue_incremental.watermarks import Watermarks

from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = [pytest.mark.spark, requires_iceberg]

T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated"]


def three_runs(spark, tmp: Path, store: Watermarks, job: str) -> LoadConfig:
    config = LoadConfig(
        source=(tmp / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        partition_by=("part",),
        target_format="iceberg",
        target_table=unique_table("maint"),
    )
    clock = FixedClock(T0)
    for run in range(1, 4):
        write_json_file(tmp / "source", [{"id": run, "part": "a", "updated": run}], mtime=clock.now)
        clock.now += 30
        run_load_at(spark, config, job_name=job, run_id=f"jr_{run}", clock=clock, store=store)
    return config


def test_expiry_keeps_the_snapshot_a_rewound_watermark_points_at(spark, tmp_path, store):
    config = three_runs(spark, tmp_path, store, "maint")
    store.rewind("maint", "jr_1", why="test")  # the watermark now points at jr_1's snapshot

    result = expire(
        spark,
        config.iceberg_target,
        store,
        "maint",
        Retention(older_than=timedelta(seconds=1)),
        now=datetime.now(UTC) + timedelta(days=1),
    )

    kept = {s.run_id for s in iceberg_writer.snapshots(spark, config.iceberg_target)}
    assert kept == {"jr_1", "jr_3"}  # jr_3: current; jr_1: the watermark's; jr_2 expired
    assert result.snapshots_before == 3 and result.snapshots_after == 2


def test_compaction_is_one_snapshot_with_the_same_rows_never_rolled_forward(spark, tmp_path, store):
    config = three_runs(spark, tmp_path, store, "compact")
    before = table_rows(spark, config.iceberg_target.name, COLUMNS)
    state = store.get_watermark("compact")

    snapshot_id = compact(
        spark,
        config.iceberg_target,
        run_id="jr_3",
        state_name="compact",
        watermarks={"default": state["watermarks"]},
    )

    assert snapshot_id is not None
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == before
    current = iceberg_writer.current_snapshot(spark, config.iceberg_target)
    assert current.run_id == "compaction-jr_3" and not current.commits
    assert iceberg_writer.roll_forward(spark, config.iceberg_target, store, "compact", None) is None
