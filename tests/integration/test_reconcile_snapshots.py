"""The reconcile of a file source whose every file is a full snapshot (``--file_snapshots``).

Local disk, Parquet target; the reference is the pure-Python full refresh restricted to the
keys of the newest file (``tests.harness.reference``).
"""

from __future__ import annotations

import pytest
from glue_incremental.load.reconcile import ReconcileStopped
from glue_incremental.sources import snapshots

from tests.harness import reference
from tests.harness.file_jobs import COLUMNS, Job, row, target_rows
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.property_targets import IcebergAt

pytestmark = pytest.mark.spark

SNAPSHOTS = {"file_snapshots": True, "reconcile_max_fraction": 0.5}
SCHEMA = "id bigint, part string, updated bigint, value string"


def test_a_reconcile_removes_the_keys_the_newest_snapshot_lacks(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    job.land([row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")])
    job.run()
    job.land([row(1, "a", 20, "y"), row(3, "b", 10, "x")])  # key 2 is gone
    job.run()

    summary = job.run(**SNAPSHOTS, reconcile=True)  # on demand, no new file: keys only

    latest = reference.full_refresh(tmp_path / "source", ("id",), "updated")
    expected = reference.without_gone_keys(latest, [(1,), (3,)], ("id",))
    assert target_rows(job) == reference.as_tuples(expected, COLUMNS)
    assert summary["reconcile"] == {"target_keys": 3, "source_keys": 2, "gone_keys": 1}
    assert summary["records_deleted"] == 1
    assert store.get_watermark("orders")["job_run_id"] == "jr_3"  # the removal is committed


def test_an_empty_newest_snapshot_stops_the_reconcile_and_writes_nothing(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "x")])
    job.run()
    before = target_rows(job)
    job.land([])  # a snapshot of nothing: an emptied export, not a source without rows

    with pytest.raises(ReconcileStopped, match="the source returned no keys") as stopped:
        job.run(**SNAPSHOTS, reconcile=True)

    assert "\n" not in str(stopped.value)
    assert target_rows(job) == before
    assert store.get_watermark("orders")["job_run_id"] == "jr_1"


def test_the_key_read_of_a_parquet_snapshot_reads_only_the_key_columns(spark, tmp_path):
    source = tmp_path / "parquet-source"
    rows = [(1, "a", 10, "x" * 100), (2, "b", 10, "y" * 100)]
    frame = spark.createDataFrame(rows, "id long, part string, updated long, value string")
    frame.coalesce(1).write.parquet(str(source / "snapshot-1"))

    keys = snapshots.keys_of_latest(spark, source.as_uri(), ["id"], source_format="parquet")

    plan = keys._jdf.queryExecution().executedPlan().toString()
    assert "ReadSchema: struct<id:bigint>" in plan
    assert sorted(row.id for row in keys.collect()) == [1, 2]


def snapshot_row(key: int, part: str, updated: int) -> dict:
    return row(key, part, updated, f"v{key}.{updated}")


def test_each_batch_of_a_reconciling_run_reconciles_against_the_target_it_finds(
    spark, tmp_path, store
):
    # Batch 1 reads snapshot 2 and reconciles against snapshot 3: keys 2 and 3 are gone (key
    # 2's newer version comes from a file older than snapshot 3: it does not bring it back,
    # docs/deletes.md), key 4 arrives. Batch 2 reads snapshot 3: key 4 is gone now; its
    # reconcile must not be served batch 1's gone keys (the same Spark plan).
    options = {**SNAPSHOTS, "reconcile_max_fraction": 1.0}
    job = Job(spark, tmp_path, store, **options)
    job.land([snapshot_row(1, "a", 1), snapshot_row(2, "a", 1), snapshot_row(3, "b", 1)])
    job.run()
    job.land([snapshot_row(1, "a", 1), snapshot_row(2, "a", 2), snapshot_row(4, "b", 2)])
    job.land([snapshot_row(1, "a", 1)])

    summary = job.run(**options, reconcile=True, max_batch_files=1)

    assert target_rows(job) == [(1, "a", 1, "v1.1")]
    assert summary["reconcile"] == {"target_keys": 2, "source_keys": 1, "gone_keys": 1}


def test_a_key_gone_from_the_newest_snapshot_leaves_with_reconciles_every_second_batch(
    spark, tmp_path, store
):
    options = {**SNAPSHOTS, "reconcile_max_fraction": 1.0, "reconcile_every": 2}
    job = Job(spark, tmp_path, store, **options)
    job.land([snapshot_row(1, "a", 1), snapshot_row(3, "a", 1), snapshot_row(4, "a", 1)])
    job.land(
        [
            snapshot_row(2, "b", 2),
            snapshot_row(3, "a", 1),
            snapshot_row(4, "a", 1),
            snapshot_row(5, "b", 2),
        ]
    )
    job.land([snapshot_row(2, "b", 3), snapshot_row(3, "b", 2)])
    job.run(**options, max_batch_files=1)

    job.run(**options, max_batch_files=1, reconcile=True)

    assert target_rows(job) == [(2, "b", 3, "v2.3"), (3, "b", 2, "v3.2")]


@requires_iceberg
def test_a_reconcile_on_iceberg_in_the_run_that_widens_a_column_removes_the_gone_keys(
    spark, tmp_path, store
):
    # The reconcile reads the stored rows before the run widens `qty` (an Iceberg schema
    # change): the gone key's delete must still be read after it, as the wider type.
    table = IcebergAt(spark, unique_table("reconcile"))
    options = {**SNAPSHOTS, "reconcile_max_fraction": 1.0, **table.options}
    job = Job(spark, tmp_path, store, **options)
    job.land([{**snapshot_row(1, "a", 1), "qty": 1}, {**snapshot_row(2, "a", 1), "qty": 2}])
    job.run(**options, source_schema=f"{SCHEMA}, qty int")
    job.land([{**snapshot_row(1, "a", 2), "qty": 2**31 + 7}])  # key 2 is gone

    job.run(**options, source_schema=f"{SCHEMA}, qty bigint", reconcile=True)

    assert table.rows(["id", "qty"]) == [{"id": 1, "qty": 2**31 + 7}]
    assert table.dtypes()["qty"] == "bigint"
