"""The Iceberg load with its warehouse on ``s3://`` (LocalStack's S3 through S3A), as on Glue.

The other Iceberg tests keep the warehouse on a local disk; this one puts every
data, manifest and metadata object in S3, where a rename is a copy then a delete.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from glue_incremental.load.job import LoadConfig
from glue_incremental.targets.iceberg import writer as iceberg_writer

from tests.harness.iceberg import requires_iceberg, s3_warehouse_catalog, table_rows
from tests.harness.loads import FixedClock, run_load_at, write_json_file
from tests.harness.reference import full_refresh

pytestmark = [pytest.mark.spark, pytest.mark.s3, requires_iceberg]

CATALOG = "s3_warehouse"
COLUMNS = ["id", "part", "updated", "value"]
T0 = 1_700_000_000.0


def row(key: int, updated: int) -> dict:
    return {"id": key, "part": "ab"[key % 2], "updated": updated, "value": f"v{key}.{updated}"}


@pytest.fixture
def s3_catalog(spark, s3_root) -> str:
    """A Hadoop catalog named ``s3_warehouse`` whose warehouse is ``s3://`` (read through S3A)."""
    return s3_warehouse_catalog(spark, s3_root, CATALOG)


def test_iceberg_warehouse_on_s3_equals_a_full_refresh_and_readers_see_whole_runs(
    spark, s3_catalog, s3_root, tmp_path, store
):
    source = tmp_path / "source"
    config = LoadConfig(
        source=source.as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        partition_by=("part",),
        target_format="iceberg",
        target_table=f"tests.on_s3_{uuid.uuid4().hex[:8]}",
        iceberg_catalog=s3_catalog,
        lookback=timedelta(seconds=600),
    )
    target = config.iceberg_target
    seen: set[int] = set()
    stop = threading.Event()

    def read_in_a_loop() -> None:
        while not stop.is_set():
            if iceberg_writer.table_exists(spark, target):
                seen.add(spark.table(target.name).count())
            stop.wait(0.2)  # every read lists and fetches objects: leave the runs room

    clock = FixedClock(T0)
    batches = [
        [row(1, 1), row(2, 1), row(3, 1)],
        # Run 2 updates a key and adds two, one per partition: a partial run would show 4 rows.
        [row(2, 5), row(4, 2), row(5, 2)],
    ]
    reader = threading.Thread(target=read_in_a_loop, daemon=True)
    reader.start()
    try:
        for number, batch in enumerate(batches, start=1):
            write_json_file(source, batch, mtime=clock.now)
            clock.now += 30
            run_load_at(
                spark, config, job_name="on_s3", run_id=f"jr_{number}", clock=clock, store=store
            )
    finally:
        stop.set()
        reader.join(timeout=60)

    expected = full_refresh(source, ["id"], "updated")
    assert table_rows(spark, target.name, COLUMNS) == sorted(
        tuple(r[c] for c in COLUMNS) for r in expected
    )
    snapshots = iceberg_writer.snapshots(spark, target)
    assert [snapshot.run_id for snapshot in snapshots] == ["jr_1", "jr_2"]
    assert snapshots[-1].watermark == store.get_watermark("on_s3")["watermarks"]
    metadata = spark.sql(f"SELECT file_path FROM {target.name}.files").collect()
    assert metadata and all(r.file_path.startswith(f"{s3_root}/warehouse/") for r in metadata)
    # 0: the table exists, created by run 1, before run 1's one snapshot is committed.
    assert seen <= {0, 3, 5}
