"""A side file of a publish (deliveries, key index segment) that fails while the other is
being written at the same time leaves the target and its state as they were; the rerun
equals a full refresh."""

from __future__ import annotations

import pytest
from glue_incremental.keys import index as key_index
from glue_incremental.targets.parquet import staged_writes

from tests.harness.loads import (
    FixedClock,
    json_files_config,
    partition_file_snapshot,
    run_load_at,
    write_json_file,
)
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated", "value"]


class SideFileFailed(OSError):
    pass


@pytest.mark.parametrize("failing", ["key_index_segment", "deliveries"])
def test_a_side_file_failing_mid_publish_writes_nothing_and_the_rerun_equals_a_full_refresh(
    spark, tmp_path, store, monkeypatch, failing
):
    config = json_files_config(tmp_path, partition_by=("part",))
    source = tmp_path / "source"
    write_json_file(source, [{"id": 1, "part": "a", "updated": 1, "value": "v1"}], mtime=T0)
    clock = FixedClock(T0 + 10)
    run_load_at(spark, config, job_name="side", run_id="r1", clock=clock, store=store)
    write_json_file(
        source,
        [
            {"id": 1, "part": "a", "updated": 2, "value": "v2"},
            {"id": 2, "part": "b", "updated": 2, "value": "v1"},
        ],
        mtime=T0 + 20,
    )
    before = partition_file_snapshot(tmp_path / "target")
    committed = store.get_watermark("side")

    def fails(*args, **kwargs):
        raise SideFileFailed(f"the {failing} write failed")

    module, name = (
        (key_index, "stage")
        if failing == "key_index_segment"
        else (
            staged_writes,
            "stage_deliveries",
        )
    )
    monkeypatch.setattr(module, name, fails)
    clock.now = T0 + 30
    with pytest.raises(SideFileFailed):
        run_load_at(spark, config, job_name="side", run_id="r2", clock=clock, store=store)
    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("side") == committed

    monkeypatch.undo()
    clock.now = T0 + 40
    run_load_at(spark, config, job_name="side", run_id="r3", clock=clock, store=store)

    expected = full_refresh(source, ["id"], "updated")
    assert as_tuples(visible_rows(tmp_path / "target", COLUMNS), COLUMNS) == as_tuples(
        expected, COLUMNS
    )
