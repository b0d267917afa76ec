"""A run writes one file per partition, for its data and for each side file written from
the same rows: on S3 every file is a copy and a delete to publish, and a read per file."""

from __future__ import annotations

import pytest

from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def test_a_run_writes_one_data_file_and_one_deliveries_file_per_partition(spark, tmp_path, store):
    config = json_files_config(tmp_path, partition_by=("part",))
    source = tmp_path / "source"
    # Several source files, each holding every partition: read by several tasks, each
    # task holding rows of every partition.
    for number in range(4):
        rows = [
            {"id": number * 10 + i, "part": part, "updated": 1, "value": f"v{number}"}
            for i, part in enumerate("abc")
        ]
        write_json_file(source, rows, mtime=T0 + number, name=f"part-{number}.json")
    run_load_at(
        spark, config, job_name="files", run_id="r1", clock=FixedClock(T0 + 60), store=store
    )

    target = tmp_path / "target"
    for root in (target, target / "_delivery"):
        files = {
            path.parent.name: sorted(p.name for p in path.parent.glob("*.parquet"))
            for path in root.glob("part=*/*.parquet")
        }
        assert sorted(files) == ["part=a", "part=b", "part=c"], root
        assert all(len(names) == 1 for names in files.values()), files
