"""Soft deletes (``--delete_marker``), alone and with bounded file batches.

The reference is the pure-Python full refresh without the deleted keys; each test compares
a batched run with it (and, where it breaks, with the same history loaded unbounded).
"""

from __future__ import annotations

import pytest
from glue_incremental.deletes.markers import DeleteMarker

from tests.harness import reference
from tests.harness.file_jobs import OP_D, Job, target_rows
from tests.harness.loads import write_json_file

pytestmark = pytest.mark.spark

COLUMNS = ["id", "op", "part", "updated", "value"]


def row(key: int, updated: int, op: str = "U", part: str = "a") -> dict:
    return {
        "id": key,
        "part": part,
        "updated": updated,
        "value": f"v{key}.{updated}.{op}",
        "op": op,
    }


def full_refresh(job: Job) -> list[tuple]:
    latest = reference.full_refresh(job.tmp / "source", ("id",), "updated")
    kept = reference.without_deletes(latest, lambda r: OP_D.is_delete(r["op"]))
    return reference.as_tuples(kept, COLUMNS)


def land_all(job: Job, files: list[list[dict]]) -> None:
    for rows in files:
        job.land(rows)


def test_a_late_older_version_in_a_later_batch_of_one_run_does_not_undo_a_delete(
    spark, tmp_path, store
):
    # One backlog, one run: the unbounded run keeps key 1 deleted (its delete has the greatest
    # watermark); cut into one-file batches, the third batch sees a target without key 1.
    history = [[row(1, 10), row(2, 10)], [row(1, 30, "D")], [row(1, 20)]]
    unbounded = Job(spark, tmp_path / "unbounded", store, delete_marker=OP_D)
    land_all(unbounded, history)
    unbounded.run()
    assert target_rows(unbounded, COLUMNS) == full_refresh(unbounded)
    store.reset("orders", why="the same history again, batched")

    batched = Job(spark, tmp_path / "batched", store, delete_marker=OP_D, max_batch_files=1)
    land_all(batched, history)
    batched.run()

    assert target_rows(batched, COLUMNS) == full_refresh(batched)  # key 1 stays deleted (tombstone)


def test_ties_between_deletes_and_inserts_follow_delivery_across_batches(spark, tmp_path, store):
    # Same watermark everywhere: each later file wins. Batch 1 inserts, batch 2 deletes the key
    # the target got in batch 1 (a tie with the stored row), batch 3 re-inserts it at the same
    # watermark, batch 4 holds a delete and an insert sharing one modification time (file name
    # decides: the insert 'b.json' is after the delete 'a.json').
    job = Job(spark, tmp_path, store, delete_marker=OP_D, max_batch_files=1)
    job.land([row(1, 10), row(2, 10), row(3, 10)])
    job.land([row(1, 10, "D"), row(3, 10, "D")])
    job.land([row(1, 10, "U", part="b")])
    job.clock.now += 10
    mtime = job.clock.now
    write_json_file(job.tmp / "source", [row(2, 10, "D")], mtime=mtime, name="a.json")
    write_json_file(job.tmp / "source", [row(2, 10, "U", part="c")], mtime=mtime, name="b.json")

    summary = job.run()

    assert summary["batches"] == 4
    assert target_rows(job, COLUMNS) == full_refresh(job)
    assert sorted(r[0] for r in target_rows(job, COLUMNS)) == [1, 2]


def test_a_boolean_marker_that_is_null_in_every_row_read_so_far_is_no_delete(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, delete_marker=DeleteMarker("is_deleted"))
    job.land([{"id": 1, "part": "a", "updated": 10, "value": "x", "is_deleted": None}])

    job.run()

    assert reference.visible_rows(job.target, ["id"]) == [{"id": 1}]
