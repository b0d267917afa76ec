"""The incremental join with an Iceberg target: one snapshot per run replacing affected partitions."""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_incremental.join import JoinJobConfig, JoinSpec
from glue_incremental.load.job import LoadConfig
from glue_incremental.targets.iceberg import writer as iceberg_writer

from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.iceberg_sides import create_left, iceberg_left_join, insert_left
from tests.harness.joins import (
    OUT_COLUMNS,
    T0,
    assert_output,
    land,
    left_row,
    reference,
    right_row,
    run_at,
)
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = [pytest.mark.spark, requires_iceberg]


def order(key: int, date: str, updated: int) -> dict:
    return {"id": key, "date": date, "updated": updated, "amount": key * 10 + updated}


def config_for(tmp: Path, table: str, join_type: str) -> JoinJobConfig:
    return JoinJobConfig(
        left_path=(tmp / "left").as_uri(),
        right_path=(tmp / "right").as_uri(),
        left_format="json",
        right_format="json",
        spec=JoinSpec(("id",), join_type, ("date",)),
        target_format="iceberg",
        target_table=table,
    )


def test_each_join_run_is_one_snapshot_and_the_table_equals_a_full_recompute(
    spark, tmp_path, store
):
    config = config_for(tmp_path, unique_table("join"), "full")
    landed: dict[str, list[tuple]] = {"left": [], "right": []}
    runs = [
        [("left", "2024-01-01", [(1, 1), (2, 2)]), ("right", "2024-01-01", [(1, 5)])],
        [("right", "2024-01-02", [(3, 3)]), ("left", None, [(1, 7)])],
        [("right", "2024-01-01", [(2, 9)]), ("right", None, [(1, 4)])],
    ]
    for number, batches in enumerate(runs):
        base = T0 + number * 100
        for offset, (side, partition, rows) in enumerate(batches):
            if side == "left":
                land(
                    tmp_path / side,
                    partition,
                    [left_row(k, f"l{v}", v) for k, v in rows],
                    base + offset,
                )
                landed["left"] += [(partition, k, f"l{v}", v) for k, v in rows]
            else:
                land(
                    tmp_path / side,
                    partition,
                    [right_row(k, f"r{v}", f"x{v}") for k, v in rows],
                    base + offset,
                )
                landed["right"] += [(partition, k, f"r{v}", f"x{v}") for k, v in rows]
        run_at(spark, config, store, job_name="ijoin", run_id=f"jr_{number}", now=base + 50)

        actual = sorted(
            (
                tuple(r)
                for r in spark.table(config.iceberg_target.name).select(*OUT_COLUMNS).collect()
            ),
            key=repr,
        )
        assert actual == sorted(reference(landed["left"], landed["right"], "full"), key=repr)

    snapshots = iceberg_writer.snapshots(spark, config.iceberg_target)
    assert [s.run_id for s in snapshots] == ["jr_0", "jr_1", "jr_2"]
    assert set(snapshots[-1].watermarks) == {"left", "right"}
    assert snapshots[-1].watermarks["left"] == store.get_watermark("ijoin", "left")["watermarks"]


def test_a_side_that_is_an_upstream_iceberg_table_is_read_incrementally_and_equals_a_full_recompute(
    spark, tmp_path, store
):
    upstream = LoadConfig(
        source=(tmp_path / "orders").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        partition_by=("date",),
        target_format="iceberg",
        target_table=unique_table("orders"),
    )
    join = JoinJobConfig(
        left_path=upstream.target_table,
        right_path=(tmp_path / "labels").as_uri(),
        left_format="iceberg",
        right_format="json",
        spec=JoinSpec(("id",), "inner", ("date",)),
        target_path=(tmp_path / "joined").as_uri(),
    )
    clock = FixedClock(T0)
    untouched = [order(key, "d4", 1) for key in range(10, 20)]
    orders = [order(1, "d1", 1), order(2, "d1", 1), order(3, "d2", 1), *untouched]
    labels = [
        (("d1", 1), "gold"),
        (("d1", 2), "silver"),
        (("d2", 3), "bronze"),
        (("d3", 1), "moved"),
    ]
    write_json_file(tmp_path / "orders", orders, mtime=clock.now)
    for (date, key), label in labels:
        land(tmp_path / "labels", date, [{"id": key, "label": label}], clock.now)
    clock.now += 30
    run_load_at(spark, upstream, job_name="orders", run_id="jr_o1", clock=clock, store=store)
    run_at(spark, join, store, job_name="jl", run_id="jr_j1", now=clock.now)

    # Key 1 moves from d1 to d3, key 3 changes in place: partitions d1, d2, d3 change, and only
    # the changed rows are read (not the whole upstream table).
    later = [order(1, "d3", 2), order(3, "d2", 2)]
    write_json_file(tmp_path / "orders", later, mtime=clock.now)
    clock.now += 30
    run_load_at(spark, upstream, job_name="orders", run_id="jr_o2", clock=clock, store=store)
    summary = run_at(spark, join, store, job_name="jl", run_id="jr_j2", now=clock.now)

    current = {o["id"]: o for o in [*orders, *later]}
    expected = sorted(
        (o["date"], o["id"], o["updated"], label)
        for o in current.values()
        for (date, key), label in labels
        if (date, key) == (o["date"], o["id"])
    )
    actual = sorted(
        tuple(r)
        for r in spark.read.parquet(join.target_path)
        .select("date", "id", "updated", "label")
        .collect()
    )
    assert actual == expected
    # Each changed key is read as its old and its new version; the ten untouched ones are not.
    assert summary["records_read_by_side"]["left"] <= 2 * len(later)
    head = iceberg_writer.current_snapshot(spark, upstream.iceberg_target).snapshot_id
    assert store.get_watermark("jl", "left")["watermarks"]["iceberg_snapshot_id"] == head


def head(spark, target: iceberg_writer.IcebergTarget) -> int:
    snapshot = iceberg_writer.current_snapshot(spark, target)
    assert snapshot is not None
    return snapshot.snapshot_id


@pytest.mark.spark
@requires_iceberg
def test_a_row_deleted_from_an_iceberg_side_leaves_the_join_output(spark, tmp_path, store):
    config = iceberg_left_join(tmp_path)
    target = create_left(spark, config)
    left = [("d1", 1, "a", 10), ("d1", 2, "b", 20)]
    right = [("d1", 1, "r1", "x"), ("d1", 2, "r2", "y")]
    insert_left(spark, target, left)
    land(tmp_path / "right", "d1", [right_row(k, v, lb) for _, k, v, lb in right], T0)
    run_at(spark, config, store, job_name="adel", run_id="r1", now=T0 + 50)
    assert_output(spark, config, left, right, "inner")

    spark.sql(f"DELETE FROM {target.quoted} WHERE id = 2")
    run_at(spark, config, store, job_name="adel", run_id="r2", now=T0 + 100)
    assert_output(spark, config, left[:1], right, "inner")


@pytest.mark.spark
@requires_iceberg
def test_an_iceberg_side_rolled_back_past_the_consumed_snapshot_drops_the_rolled_back_rows(
    spark, tmp_path, store
):
    config = iceberg_left_join(tmp_path)
    target = create_left(spark, config)
    left = [("d1", 1, "a", 10)]
    right = [("d1", 1, "r1", "x"), ("d2", 2, "r2", "y")]
    insert_left(spark, target, left)
    before = head(spark, target)
    land(tmp_path / "right", "d1", [right_row(1, "r1", "x")], T0)
    land(tmp_path / "right", "d2", [right_row(2, "r2", "y")], T0)
    insert_left(spark, target, [("d2", 2, "b", 20)])
    run_at(spark, config, store, job_name="aroll", run_id="r1", now=T0 + 50)
    assert_output(spark, config, [*left, ("d2", 2, "b", 20)], right, "inner")

    # The upstream is rolled back past the snapshot the join consumed: key 2 never happened.
    iceberg_writer.rollback_to(spark, target, before)
    run_at(spark, config, store, job_name="aroll", run_id="r2", now=T0 + 100)
    assert_output(spark, config, left, right, "inner")


@pytest.mark.spark
@requires_iceberg
def test_an_iceberg_side_with_no_snapshot_yet_joins_as_empty_and_later_catches_up(
    spark, tmp_path, store
):
    config = iceberg_left_join(tmp_path, "full")
    target = create_left(spark, config)
    right = [("d1", 1, "r1", "x")]
    land(tmp_path / "right", "d1", [right_row(1, "r1", "x")], T0)
    run_at(spark, config, store, job_name="aempty", run_id="r1", now=T0 + 50)
    assert_output(spark, config, [], right, "full")

    left = [("d1", 1, "a", 10)]
    insert_left(spark, target, left)
    run_at(spark, config, store, job_name="aempty", run_id="r2", now=T0 + 100)
    assert_output(spark, config, left, right, "full")


@pytest.mark.spark
@requires_iceberg
def test_an_iceberg_side_emptied_by_a_delete_empties_the_inner_join(spark, tmp_path, store):
    config = iceberg_left_join(tmp_path)
    target = create_left(spark, config)
    left = [("d1", 1, "a", 10), ("d2", 2, "b", 20)]
    right = [("d1", 1, "r1", "x"), ("d2", 2, "r2", "y")]
    insert_left(spark, target, left)
    land(tmp_path / "right", "d1", [right_row(1, "r1", "x")], T0)
    land(tmp_path / "right", "d2", [right_row(2, "r2", "y")], T0)
    run_at(spark, config, store, job_name="awipe", run_id="r1", now=T0 + 50)
    spark.sql(f"DELETE FROM {target.quoted} WHERE true")
    run_at(spark, config, store, job_name="awipe", run_id="r2", now=T0 + 100)
    assert_output(spark, config, [], right, "inner")
