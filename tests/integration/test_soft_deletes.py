"""Soft deletes (``--delete_marker``): a key whose latest version is a delete leaves the target.

Parquet on local disk (its partition rewritten without it, the key index in the same
intent) and Iceberg (``MERGE ... THEN DELETE``); the reference is a pure-Python full
refresh without the deleted keys (``tests.harness.reference``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from glue_incremental.deletes.markers import DeleteMarker, DeleteMarkerError
from glue_incremental.targets.latest import split_by_keys
from glue_incremental.watermarks import Watermarks, create_table
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import reference
from tests.harness.file_jobs import T0, Job
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = pytest.mark.spark

QUICK = os.environ.get("HYPOTHESIS_PROFILE", "quick") != "deep"
COLUMNS = ["id", "op", "part", "updated", "value"]
OP_D = DeleteMarker("op", ("D",))


def row(key: int, part: str, updated: int, op: str = "U") -> dict:
    return {"id": key, "part": part, "updated": updated, "value": f"v{key}.{updated}", "op": op}


def target_rows(job: Job, columns=COLUMNS) -> list[tuple]:
    return reference.as_tuples(reference.visible_rows(job.target, columns), columns)


def expected(delivered: list[dict], columns=COLUMNS) -> list[tuple]:
    """The reference: each key's latest version (watermark, then delivery), deletes absent."""
    latest = reference.latest_per_key(
        [((i,), r) for i, r in enumerate(delivered)], ["id"], "updated"
    )
    kept = reference.without_deletes(latest, lambda r: OP_D.is_delete(r["op"]))
    return reference.as_tuples(kept, columns)


def test_a_later_delete_removes_the_key_and_an_older_one_loses(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    first = [row(1, "a", 10), row(2, "b", 10), row(3, "a", 10)]
    job.land(first)
    job.run()
    then = [row(1, "a", 20, "D"), row(2, "b", 5, "D"), row(4, "b", 20, "D")]
    job.land(then)

    summary = job.run()

    assert target_rows(job) == expected(first + then)
    assert {r[0] for r in target_rows(job)} == {2, 3}
    assert summary["records_deleted"] == 1  # key 4 was never stored: nothing to remove


def test_a_few_deletes_in_full_partitions_leave_every_other_row_as_it_was(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    first = [row(key, "a" if key % 2 else "b", 10) for key in range(40)]
    job.land(first)
    job.run()
    then = [row(3, "a", 20, "D"), row(4, "b", 20, "D"), row(5, "a", 20), row(6, "a", 30, "D")]
    job.land(then)

    summary = job.run()

    assert target_rows(job) == expected(first + then)
    assert summary["records_deleted"] == 3


def test_a_delete_run_keeps_the_other_rows_of_a_column_named_with_a_dot(spark, tmp_path, store):
    weird = "weird col.name"
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    first = [{**row(key, "a", 10), weird: f"w{key}"} for key in range(4)]
    job.land(first)
    job.run()
    then = [{**row(1, "a", 20, "D"), weird: "gone"}]
    job.land(then)

    job.run()

    assert target_rows(job, [*COLUMNS, weird]) == expected(first + then, [*COLUMNS, weird])


def test_a_key_left_twice_by_ignore_is_one_row_again_after_a_delete_run_rewrites_both_places(
    spark, tmp_path, store
):
    # --partition_moves ignore leaves a moved key's old version behind; a later run that
    # rewrites both partitions merges them (each key once), deletes or not.
    job = Job(spark, tmp_path, store, delete_marker=OP_D, partition_moves="ignore")
    job.land([row(1, "a", 10), row(2, "a", 10), row(3, "b", 10)])
    job.run()
    job.land([row(1, "b", 20)])
    job.run()
    job.land([row(2, "a", 30, "D"), row(3, "b", 30)])

    job.run()

    assert [(r[0], r[2], r[3]) for r in target_rows(job)] == [(1, "b", 20), (3, "b", 30)]


def test_only_the_stored_rows_of_incoming_keys_are_merge_candidates_a_null_key_equal_to_null(
    spark,
):
    """A delete run's merge shuffles the stored rows of the keys it decides; the rest of the
    partitions pass through as they are (a null key equals a null key, as in the merge)."""
    schema = "k1 int, k2 string, value string"
    stored = spark.createDataFrame(
        [(1, "a", "x"), (1, "b", "y"), (2, "a", "z"), (None, "a", "n"), (3, None, "m")], schema
    )
    incoming = spark.createDataFrame(
        [(1, "a", "new"), (None, "a", "new"), (3, None, "new"), (9, "z", "new")], schema
    )

    competing, passing = split_by_keys(stored, incoming, ["k1", "k2"])

    assert sorted(map(tuple, competing.collect()), key=str) == sorted(
        [(1, "a", "x"), (None, "a", "n"), (3, None, "m")], key=str
    )
    assert sorted(map(tuple, passing.collect()), key=str) == [(1, "b", "y"), (2, "a", "z")]
    assert competing.columns == passing.columns == stored.columns


def test_a_late_older_version_in_a_later_run_stays_deleted_and_a_newer_one_brings_it_back(
    spark, tmp_path, store
):
    # Run 3 delivers key 1 at watermark 15, older than its applied delete (20): the tombstone
    # it left wins, as the stored row would have. Run 4's newer version brings the key back.
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    history = [[row(1, "a", 10), row(2, "a", 10)], [row(1, "a", 20, "D")], [row(1, "b", 15)]]
    delivered: list[dict] = []
    for batch in history:
        job.land(batch)
        delivered += batch
        job.run()
    assert target_rows(job) == expected(delivered)
    assert [r[0] for r in target_rows(job)] == [2]

    job.land([row(1, "b", 30)])
    job.run()

    assert target_rows(job) == expected([*delivered, row(1, "b", 30)])
    assert ("1", "b") in {(str(r[0]), r[2]) for r in target_rows(job)}


def test_a_delete_in_another_partition_than_the_stored_row_still_removes_it(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, "a", 10), row(2, "a", 10)])
    job.run()
    job.land([row(1, "c", 20, "D")])  # CDC deletes often carry no partition value of the row

    summary = job.run()

    assert [r[0] for r in target_rows(job)] == [2]
    assert summary["records_deleted"] == 1


def test_a_column_only_deleted_rows_carried_stays_in_the_target(spark, tmp_path, store):
    # Run 1 reads only a delete: no data file, but its columns are the target's (recorded
    # beside the tombstone). Run 2's source no longer declares `discount`: it stays, null.
    declared = "id bigint, part string, updated bigint, op string"
    job = Job(
        spark, tmp_path, store, delete_marker=OP_D, source_schema=f"{declared}, discount bigint"
    )
    job.land([{"id": 2, "part": "a", "updated": 9, "op": "D", "discount": 209}])
    job.run()
    job.land([{"id": 4, "part": "a", "updated": 3, "op": "U"}])

    job.run(delete_marker=OP_D, source_schema=declared)

    stored = spark.read.option("mergeSchema", "true").parquet(job.target.as_uri())
    assert sorted(stored.columns) == ["discount", "id", "op", "part", "updated"]
    assert [tuple(r) for r in stored.select("id", "discount").collect()] == [(4, None)]


def test_the_marker_column_can_be_dropped_from_the_target(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, delete_marker=OP_D, keep_delete_marker=False)
    job.land([row(1, "a", 10), row(2, "a", 10)])
    job.run()
    job.land([row(1, "a", 20, "D")])
    job.run()

    columns = ["id", "part", "updated", "value"]
    assert target_rows(job, columns) == [(2, "a", 10, "v2.10")]
    assert "op" not in spark.read.parquet(str(job.target)).columns


def test_a_boolean_marker_of_another_type_is_one_line(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, delete_marker=DeleteMarker("op"))
    job.land([row(1, "a", 10)])

    with pytest.raises(DeleteMarkerError, match="--delete_marker 'op' is string, not boolean"):
        job.run()
    assert not job.target.exists()


# -- the central property, with deletes --------------------------------------------------------

RUNS = st.lists(
    st.lists(
        st.tuples(
            st.integers(1, 5), st.sampled_from("ab"), st.integers(0, 9), st.sampled_from("UUD")
        ),
        min_size=1,
        max_size=5,
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=2 if QUICK else 200, deadline=None)
@given(RUNS)
def test_property_soft_deletes_equal_a_full_refresh_without_deleted_keys(
    spark, tmp_path_factory, aws, runs
):
    """Inserts, updates, deletes and re-inserts over runs; keys move between partitions.

    Watermarks are drawn in any order across runs: a version older than an applied delete,
    delivered in a later run, loses to the delete's tombstone (docs/deletes.md).
    """
    create_table()
    tmp = tmp_path_factory.mktemp("deletes")
    # A state per example: the state records its target, and each example has its own.
    job = Job(spark, tmp, Watermarks(), job_name=f"prop-{tmp.name}", delete_marker=OP_D)
    delivered: list[dict] = []
    for drawn in runs:
        batch = [row(key, part, watermark, op) for key, part, watermark, op in drawn]
        job.land(batch)
        delivered += batch
        job.run()

    actual = target_rows(job)
    assert actual == expected(delivered)
    assert len({r[0] for r in actual}) == len(actual)  # no key twice


# -- Iceberg ----------------------------------------------------------------------------------


@requires_iceberg
def test_a_soft_delete_on_iceberg_is_a_merge_delete(spark, tmp_path, aws):
    create_table()
    store, clock = Watermarks(), FixedClock(T0)
    table = unique_table("deletes")
    from glue_incremental.load.job import LoadConfig

    config = LoadConfig(
        source=(tmp_path / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_format="iceberg",
        target_table=table,
        delete_marker=OP_D,
    )
    delivered: list[dict] = []
    summaries = []
    for number, batch in enumerate(
        [
            [row(1, "a", 10), row(2, "a", 10)],
            [row(1, "a", 20, "D"), row(2, "a", 5, "D")],
            [row(1, "a", 15)],  # late and older than key 1's delete: its tombstone wins
        ]
    ):
        clock.now += 60
        write_json_file(Path(tmp_path / "source"), batch, mtime=clock.now - 30)
        delivered += batch
        summaries.append(
            run_load_at(
                spark, config, job_name="ice", run_id=f"jr_{number}", clock=clock, store=store
            )
        )

    name = config.iceberg_target.name
    assert table_rows(spark, name, COLUMNS) == expected(delivered)
    assert [r[0] for r in table_rows(spark, name, COLUMNS)] == [2]
    assert summaries[1]["records_deleted"] == 1
    assert "__glue_incremental_deleted" not in spark.table(name).columns
