"""A key a reconcile removed that comes back in a newer snapshot: ranked against the removed
row, with columns added or gone, across releases' tombstones, crashes, Iceberg and batches.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental.deletes import tombstones
from glue_incremental.targets.iceberg import tombstones as iceberg_tombstones
from glue_incremental.targets.iceberg.tables import IcebergTarget

from tests.harness import reference
from tests.harness.change_rows import deleted_row, live_row, snapshots_reference
from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_points, on_point
from tests.harness.file_jobs import COLUMNS, OP_D, SNAPSHOTS, T0, Job, row, target_rows
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.loads import (
    write_json_file,
)
from tests.harness.property_targets import IcebergAt

pytestmark = pytest.mark.spark


def as_previous_release(job: Job) -> None:
    """Rewrite the target's tombstones as the previous release wrote them: no removed row,
    no gone mark on the file name (a reconcile's delete at the removed row's version)."""
    for path in (job.target / "_tombstones").glob("*.parquet"):
        table = pq.read_table(path)
        names = table.column("__glue_incremental_file_name").to_pylist()
        table = table.drop(["__glue_incremental_removed_row"]).set_column(
            table.schema.get_field_index("__glue_incremental_file_name"),
            "__glue_incremental_file_name",
            pa.array([name.removesuffix("\x00gone") for name in names]),
        )
        path.with_name(f".{path.name}.crc").unlink(missing_ok=True)
        pq.write_table(table, path)


def land_parquet(job: Job, rows: list[dict], schema: pa.Schema, name: str) -> None:
    """One Parquet snapshot file of ``rows``, landed like ``Job.land``."""
    job.clock.now += 10
    path = job.tmp / "source" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    os.utime(path, (job.clock.now, job.clock.now))


def test_a_key_back_in_the_newest_snapshot_with_an_older_watermark_is_in_the_target(
    spark, tmp_path, store
):
    # A reconcile removed key 1: its first batch read the second snapshot (key 1 at watermark
    # 10, "y", a tie won by the later delivery) and reconciled against the third, which
    # lacks the key. The source then restored it from an older copy (watermark 9, another
    # partition). The newest snapshot has it, and a full refresh keeps the greatest version
    # ever delivered: watermark 10's "y", in partition a.
    snapshots = [
        [row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")],
        [row(1, "a", 10, "y"), row(2, "a", 10, "x"), row(3, "b", 10, "x")],
        [row(2, "a", 10, "x"), row(3, "b", 10, "x")],
        [row(1, "b", 9, "restored"), row(2, "a", 10, "x"), row(3, "b", 10, "x")],
    ]
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    job.land(snapshots[0])
    job.run()
    job.land(snapshots[1])
    job.land(snapshots[2])
    job.run(reconcile=True, max_batch_files=1, **SNAPSHOTS)
    assert 1 not in [r[0] for r in target_rows(job)]
    job.land(snapshots[3])

    job.run(reconcile=True, **SNAPSHOTS)

    assert target_rows(job) == snapshots_reference(snapshots)
    assert (1, "a", 10, "y") in target_rows(job)


def test_a_key_removed_back_removed_and_back_again_ends_as_the_full_refresh_each_time(
    spark, tmp_path, store
):
    options = {**SNAPSHOTS, "reconcile_every": 1}
    snapshots = [
        [row(1, "a", 10, "x"), row(2, "a", 10, "x")],
        [row(2, "a", 10, "x")],  # 1 gone
        [row(1, "b", 5, "old"), row(2, "a", 10, "x")],  # back, older copy elsewhere
        [row(2, "a", 11, "y")],  # gone again
        [row(1, "b", 12, "new"), row(2, "a", 11, "y")],  # back, newer, moved
        [row(2, "a", 11, "y")],  # gone a third time
        [row(1, "a", 3, "older"), row(2, "a", 11, "y")],  # back from an even older copy
    ]
    job = Job(spark, tmp_path, store, **options)
    for index, snapshot in enumerate(snapshots):
        job.land(snapshot)
        job.run(**options)
        assert target_rows(job) == snapshots_reference(snapshots[: index + 1]), index


def test_soft_deletes_of_a_key_a_reconcile_removed_rank_against_the_removed_row(
    spark, tmp_path, store
):
    options = {**SNAPSHOTS, "reconcile_every": 1, "delete_marker": OP_D}
    snapshots = [
        [live_row(1, "a", 10, "x"), live_row(2, "a", 10, "x")],
        [live_row(2, "a", 10, "x")],  # 1 gone
        [deleted_row(1, "b", 5), live_row(2, "a", 10, "x")],  # an older delete: 1 is back
        [deleted_row(1, "b", 20), live_row(2, "a", 10, "x")],  # a newer delete: 1 leaves
        [live_row(1, "a", 15, "z"), live_row(2, "a", 10, "x")],  # older than the delete
        [live_row(2, "a", 10, "x")],  # gone while deleted
        [live_row(1, "b", 25, "w"), live_row(2, "a", 10, "x")],  # newer than the delete
    ]
    job = Job(spark, tmp_path, store, **options)
    columns = [*COLUMNS, "op"]
    for index, snapshot in enumerate(snapshots):
        job.land(snapshot)
        job.run(**options)
        expected = snapshots_reference(snapshots[: index + 1], columns)
        assert target_rows(job, columns) == expected, index


def test_a_key_removed_before_a_date_widened_to_a_timestamp_comes_back_with_its_date(
    spark, tmp_path, store
):
    narrow = "id bigint, part string, updated bigint, value string, since date"
    wide = "id bigint, part string, updated bigint, value string, since timestamp"
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    first = [
        {**row(1, "a", 10, "x"), "since": "2024-03-01"},
        {**row(2, "a", 10, "x"), "since": "2024-03-02"},
    ]
    job.land(first)
    job.run(**SNAPSHOTS, source_schema=narrow)
    job.land([first[1]])
    job.run(**SNAPSHOTS, source_schema=narrow, reconcile=True)  # 1 gone, since a date
    # Back from an older copy (watermark 5): the removed row (watermark 10) is the greatest.
    job.land(
        [
            {**row(1, "a", 5, "old"), "since": "2020-01-01 00:00:00"},
            {**first[1], "since": "2024-03-02 00:00:00"},
        ]
    )

    job.run(**SNAPSHOTS, source_schema=wide)

    seen = spark.read.parquet(job.config.target_path).where("id = 1").select("value", "since")
    assert [(r.value, str(r.since)) for r in seen.collect()] == [("x", "2024-03-01 00:00:00")]


def test_a_key_removed_while_a_column_existed_comes_back_with_it_after_the_column_went(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    first = [{**row(1, "a", 10, "x"), "qty": 7}, {**row(2, "a", 10, "x"), "qty": 8}]
    job.land(first)
    job.run()
    job.land([first[1]])
    job.run(**SNAPSHOTS, reconcile=True)  # 1 gone with qty 7
    snapshots = [first, [first[1]], [row(1, "b", 5, "old"), row(2, "a", 10, "x")]]  # qty gone
    job.land(snapshots[-1])

    job.run()

    columns = [*COLUMNS, "qty"]
    assert target_rows(job, columns) == snapshots_reference(snapshots, columns)


def test_tombstones_of_the_previous_release_next_to_new_ones_bring_keys_back_as_documented(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    snapshots = [[row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]]
    job.land(snapshots[-1])
    job.run()
    snapshots.append([row(2, "a", 10, "x"), row(3, "b", 10, "x")])
    job.land(snapshots[-1])
    job.run(**SNAPSHOTS, reconcile=True)  # 1 gone, under the previous release
    as_previous_release(job)
    snapshots.append([row(3, "b", 10, "x")])
    job.land(snapshots[-1])
    job.run(**SNAPSHOTS, reconcile=True)  # 2 gone, under this one
    # 1 back newer (the previous release brought it back too), 2 back from an older copy.
    snapshots.append([row(1, "b", 11, "new"), row(2, "b", 5, "old"), row(3, "b", 10, "x")])
    job.land(snapshots[-1])

    job.run(**SNAPSHOTS)

    assert target_rows(job) == snapshots_reference(snapshots)


def test_a_crash_at_every_step_of_the_run_that_brings_a_removed_key_back_then_a_rerun(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    snapshots = [[row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]]
    snapshots.append([row(2, "a", 10, "x"), row(3, "b", 10, "x")])
    for snapshot in snapshots:
        job.land(snapshot)
        job.run(**SNAPSHOTS, reconcile=job.runs > 0)
    baseline = tmp_path / "baseline"
    shutil.copytree(job.target, baseline)
    # 1 back from an older copy in the other partition, 3 gone, in the same run.
    snapshots.append([row(1, "b", 5, "old"), row(2, "a", 10, "x")])
    job.land(snapshots[-1])
    counter = StepCounter()
    job.run(hook=counter, **SNAPSHOTS, reconcile=True)
    assert target_rows(job) == snapshots_reference(snapshots)
    names = counter.names()

    for step in crash_points(names):
        shutil.rmtree(job.target)
        shutil.copytree(baseline, job.target)
        store.rewind("orders", "jr_2", why="next crash point")
        with pytest.raises(Crash):
            job.run(hook=CrashAtStep(step), **SNAPSHOTS, reconcile=True)
        job.run(**SNAPSHOTS, reconcile=True)
        assert target_rows(job) == snapshots_reference(snapshots), names[step - 1]


@requires_iceberg
def test_on_iceberg_a_key_removed_back_soft_deleted_and_back_again_ends_as_the_full_refresh(
    spark, tmp_path, store
):
    table = IcebergAt(spark, unique_table("back_again"))
    options = {**SNAPSHOTS, "reconcile_every": 1, "delete_marker": OP_D, **table.options}
    snapshots = [
        [live_row(1, "a", 10, "x"), live_row(2, "a", 10, "x")],
        [live_row(2, "a", 10, "x")],  # 1 gone
        [deleted_row(1, "b", 5), live_row(2, "a", 10, "x")],  # an older delete: 1 is back
        [live_row(2, "a", 11, "y")],  # gone again
        [live_row(1, "b", 3, "older"), live_row(2, "a", 11, "y")],  # back, older copy
        [deleted_row(1, "b", 20), live_row(2, "a", 11, "y")],  # a newer delete: 1 leaves
        [live_row(1, "a", 15, "z"), live_row(2, "a", 11, "y")],  # older than the delete
    ]
    job = Job(spark, tmp_path, store, **options)
    columns = [*COLUMNS, "op"]
    for index, snapshot in enumerate(snapshots):
        job.land(snapshot)
        job.run(**options)
        seen = reference.as_tuples(table.rows(columns), columns)
        assert seen == snapshots_reference(snapshots[: index + 1], columns), index


@requires_iceberg
def test_on_iceberg_a_tombstone_table_of_the_previous_release_gains_the_removed_row_and_serves(
    spark, tmp_path, store
):
    table = IcebergAt(spark, unique_table("old_side"))
    side = iceberg_tombstones.side_table(IcebergTarget(table.options["target_table"]))
    options = {**SNAPSHOTS, **table.options}
    job = Job(spark, tmp_path, store, **options)
    snapshots = [[row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]]
    snapshots.append([row(2, "a", 10, "x"), row(3, "b", 10, "x")])
    for snapshot in snapshots:
        job.land(snapshot)
        job.run(**options, reconcile=job.runs > 0)  # 1 gone
    # The previous release's side table: no removed row, no gone mark.
    spark.sql(f"ALTER TABLE {side.quoted} DROP COLUMN `{tombstones.REMOVED_ROW}`")
    spark.sql(
        f"UPDATE {side.quoted} SET `__glue_incremental_file_name` = "
        "replace(`__glue_incremental_file_name`, '\\0gone', '')"
    )
    snapshots.append([row(3, "b", 10, "x")])
    job.land(snapshots[-1])
    job.run(**options, reconcile=True)  # 2 gone, under this release
    # 1 back newer (as the previous release brought it back), 2 back from an older copy.
    snapshots.append([row(1, "b", 11, "new"), row(2, "b", 5, "old"), row(3, "b", 10, "x")])
    job.land(snapshots[-1])

    job.run(**options)

    assert reference.as_tuples(table.rows(COLUMNS), COLUMNS) == snapshots_reference(snapshots)


@pytest.mark.xfail(
    strict=True,
    reason="a removed row brought back is stored with no delivery (the earliest): a late "
    "older snapshot with the same watermark then wins the tie it loses in a full refresh",
)
def test_a_restored_row_keeps_winning_a_tie_against_a_late_older_snapshot(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    snapshots = [
        [row(1, "a", 10, "x"), row(2, "a", 10, "x")],
        [row(2, "a", 10, "x")],  # 1 gone
        [row(1, "a", 5, "old"), row(2, "a", 10, "x")],  # back: the removed row is the greatest
    ]
    for snapshot in snapshots:
        job.land(snapshot)
        job.run(**SNAPSHOTS, reconcile=job.runs > 0)
    assert target_rows(job) == snapshots_reference(snapshots)
    # A copy of a snapshot older than the first (modified before it) lands late: "w" ties
    # "x" at watermark 10 and loses, as an earlier delivery.
    late = [row(1, "a", 10, "w"), row(2, "a", 10, "x")]
    write_json_file(tmp_path / "source", late, mtime=T0 + 5)

    job.run(**SNAPSHOTS)

    assert target_rows(job) == snapshots_reference([late, *snapshots])


def test_a_removed_row_of_every_parquet_type_comes_back_value_for_value(spark, tmp_path, store):
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("part", pa.string()),
            ("updated", pa.int64()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("amount", pa.decimal128(10, 2)),
            ("score", pa.float64()),
            ("ratio", pa.float32()),
            ("blob", pa.binary()),
            ("tags", pa.list_(pa.string())),
            ("nested", pa.struct([("a b", pa.int32()), ("c.d", pa.string())])),
            ("weird col.name", pa.string()),
        ]
    )
    moment = datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=UTC)
    kept = {
        "id": 1,
        "part": "a",
        "updated": 10,
        "at": moment,
        "amount": Decimal("12345678.91"),
        "score": float("nan"),
        "ratio": 0.1,
        "blob": b"\x00\xffbytes",
        "tags": ["x", None],
        "nested": {"a b": 7, "c.d": 'quote"s'},
        "weird col.name": "ü",
    }
    other = {**kept, "id": 2, "score": 1.5}
    options = {**SNAPSHOTS, "source_format": "parquet"}
    job = Job(spark, tmp_path, store, **options)
    land_parquet(job, [kept, other], schema, "s1.parquet")
    job.run()
    before = spark.read.parquet(job.config.target_path).where("id = 1").collect()
    land_parquet(job, [other], schema, "s2.parquet")
    job.run(**options, reconcile=True)  # 1 gone
    older = {**kept, "updated": 5, "score": 0.0, "blob": b"old", "tags": [], "nested": None}
    land_parquet(job, [older, other], schema, "s3.parquet")

    job.run(**options)

    after = spark.read.parquet(job.config.target_path).where("id = 1").collect()
    assert len(before) == 1 and before[0]["updated"] == 10
    assert str(after) == str(before)  # str: NaN equals itself only as text


def test_a_key_removed_by_a_runs_first_batch_and_back_in_a_snapshot_landing_before_its_next(
    spark, tmp_path, store
):
    # Batch 1 reconciles against the newest snapshot then (key 1 gone); before batch 2 a
    # snapshot restoring key 1 from an older copy is listed (dated before the run started,
    # as a slow upload is). Batches 2 and on reconcile against it: the key is back.
    options = {**SNAPSHOTS, "max_batch_files": 1}
    job = Job(spark, tmp_path, store, **options)
    snapshots = [[row(1, "a", 10, "x"), row(2, "a", 10, "x")]]
    job.land(snapshots[0])
    job.run()
    snapshots += [[row(2, "a", 10, "x")], [row(2, "b", 11, "y")]]
    job.land(snapshots[1])
    job.land(snapshots[2])
    restored = [row(1, "b", 5, "old"), row(2, "b", 11, "y")]

    def land_restored(**_details) -> None:
        if not (tmp_path / "source" / "restored.json").exists():
            write_json_file(
                tmp_path / "source", restored, mtime=job.clock.now - 1, name="restored.json"
            )

    summary = job.run(hook=on_point("batch.next", land_restored), **options, reconcile=True)

    assert summary["batches"] == 3
    assert target_rows(job) == snapshots_reference([*snapshots, restored])
