"""Round-4 attacks on the join's SideSource, custom JDBC pipelines and tombstones: each
test is a behaviour that should hold, compared with a full recompute in plain Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_incremental import iceberg
from glue_incremental.join import JoinJobConfig, JoinSpec

from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.joins import T0, assert_output, land, right_row, run_at

pytestmark = [pytest.mark.spark]

ICEBERG_LEFT = "id bigint, value string, amount bigint, date string"


def iceberg_left_join(tmp: Path, join_type: str = "inner") -> JoinJobConfig:
    """A join whose left side is an Iceberg table (created empty), right side JSON files."""
    return JoinJobConfig(
        left_path=unique_table("side"),
        right_path=(tmp / "right").as_uri(),
        left_format="iceberg",
        right_format="json",
        spec=JoinSpec(("id",), join_type, ("date",)),
        target_path=(tmp / "target").as_uri(),
    )


def create_left(spark, config: JoinJobConfig) -> iceberg.IcebergTarget:
    target = config.side_target("left")
    spark.sql(f"CREATE TABLE {target.quoted} ({ICEBERG_LEFT}) USING iceberg")
    return target


def insert_left(spark, target: iceberg.IcebergTarget, rows: list[tuple]) -> None:
    values = ", ".join(f"({k}, '{v}', {a}, '{d}')" for d, k, v, a in rows)
    spark.sql(f"INSERT INTO {target.quoted} VALUES {values}")


def head(spark, target: iceberg.IcebergTarget) -> int:
    snapshot = iceberg.current_snapshot(spark, target)
    assert snapshot is not None
    return snapshot.snapshot_id


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
    iceberg.rollback_to(spark, target, before)
    run_at(spark, config, store, job_name="aroll", run_id="r2", now=T0 + 100)
    assert_output(spark, config, left, right, "inner")


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
