"""Round-7 attacks on a reconciled-away key coming back from a newer snapshot, the driver's
lookups of a later batch's local files, and bounded backfills from a user's standpoint:
each test is a behaviour that should hold, compared with a full refresh in plain Python
(``tests.harness.reference``)."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental.deletes import DeleteMarker

from tests.harness import reference
from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_points
from tests.harness.file_jobs import COLUMNS, Job, row
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.property_targets import IcebergAt

pytestmark = pytest.mark.spark

OP_D = DeleteMarker("op", ("D",))
SNAPSHOTS = {"file_snapshots": True, "reconcile_max_fraction": 1.0}


def target_rows(job: Job, columns=COLUMNS) -> list[tuple]:
    seen = reference.visible_rows(job.target, columns)
    keys = [r["id"] for r in seen]
    assert len(keys) == len(set(keys)), f"a key is there twice: {sorted(keys)}"
    return reference.as_tuples(seen, columns)


def snapshots_reference(snapshots: list[list[dict]], columns=COLUMNS) -> list[tuple]:
    """The newest snapshot's keys, each with its greatest version, soft deletes removed."""
    merged = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    kept = reference.without_deletes(merged, lambda r: r.get("op") == "D")
    return reference.as_tuples(kept, columns)


# -- a reconciled-away key back from a newer snapshot ------------------------------------------


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


def deleted_row(key: int, part: str, updated: int) -> dict:
    return {**row(key, part, updated, f"d{key}"), "op": "D"}


def live_row(key: int, part: str, updated: int, value: str) -> dict:
    return {**row(key, part, updated, value), "op": "U"}


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
    first = [{**row(1, "a", 10, "x"), "since": "2024-03-01"}, {**row(2, "a", 10, "x"), "since": "2024-03-02"}]
    job.land(first)
    job.run(**SNAPSHOTS, source_schema=narrow)
    job.land([first[1]])
    job.run(**SNAPSHOTS, source_schema=narrow, reconcile=True)  # 1 gone, since a date
    # Back from an older copy (watermark 5): the removed row (watermark 10) is the greatest.
    job.land([{**row(1, "a", 5, "old"), "since": "2020-01-01 00:00:00"}, {**first[1], "since": "2024-03-02 00:00:00"}])

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
