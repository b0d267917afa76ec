"""Round-4 attacks on the join's SideSource, custom JDBC pipelines and tombstones: each
test is a behaviour that should hold, compared with a full recompute in plain Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_incremental import iceberg
from glue_incremental.custom import (
    Dataset,
    DeclarationError,
    JobArguments,
    incremental_job,
    jdbc_options,
    parquet,
)
from glue_incremental.deletes import DeleteMarker
from glue_incremental.join import JoinJobConfig, JoinSpec
from glue_incremental.load import LoadConfig
from glue_incremental_tools import cli

from tests.harness import reference
from tests.harness.file_jobs import Job
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.joins import T0, assert_output, land, right_row, run_at
from tests.harness.label_payments import shop_world
from tests.harness.loads import FixedClock, run_load_at, write_json_file
from tests.integration import test_incremental_join_upstream as world

LABEL_PAYMENTS = Path(__file__).resolve().parents[2] / "glue_scripts" / "label_payments.py"

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
    iceberg.rollback_to(spark, target, before)
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


def custom_increment(spark, table: str, target: Path, run_id: str) -> list[tuple]:
    """One run of a custom job merging its Iceberg dataset's increment by key; the
    increment's (id, value) rows."""
    argv = ["s.py", "--JOB_NAME", "attack_custom_iceberg", "--JOB_RUN_ID", run_id]
    orders = Dataset(table, ("date",), format="iceberg")
    with incremental_job(
        argv,
        JobArguments(()),
        sources={"orders": orders},
        targets={"out": parquet(target.as_uri())},
        spark=spark,
    ) as job:
        rows = job.increment("orders")
        if rows is None:
            return []
        job.write("out", rows, keys=["id"], order_by="amount")
        return sorted((row.id, row.value) for row in rows.collect())


@pytest.mark.spark
@requires_iceberg
def test_a_row_deleted_from_an_iceberg_dataset_is_not_in_a_custom_jobs_increment(
    spark, tmp_path, store
):
    config = iceberg_left_join(tmp_path)
    table = create_left(spark, config)
    insert_left(spark, table, [("d1", 1, "a", 10), ("d1", 2, "b", 20)])
    assert custom_increment(spark, config.left_path, tmp_path / "out", "jr_1") == [
        (1, "a"),
        (2, "b"),
    ]
    spark.sql(f"DELETE FROM {table.quoted} WHERE id = 2")

    assert custom_increment(spark, config.left_path, tmp_path / "out", "jr_2") == []


# -- custom pipelines with JDBC sources ------------------------------------------------------


def test_a_jdbc_source_whose_argument_is_a_common_one_is_refused_when_declared():
    # Terraform passes a source `watermarks` as --watermarks_table: the state table's argument.
    with pytest.raises(DeclarationError, match="--watermarks_table is a common argument"):
        JobArguments((*jdbc_options("payments", "watermarks"),))


@pytest.fixture
def shop(spark, store, postgres, tmp_path):  # after store: its reset clears the secrets
    """payments and payment_methods in PostgreSQL, and ``run(run_id)`` of label_payments on
    them as Terraform's custom kind calls it; ``output()`` the labelled target's rows."""
    yield from shop_world(spark, postgres, tmp_path)


@pytest.mark.spark
@pytest.mark.postgres
def test_label_payments_labels_a_payment_committed_later_with_the_cursors_own_timestamp(shop):
    shop.pay((10, 1, 5))
    shop.run("jr_1")
    shop.pay((11, 2, 5))  # the same updated_at as the cursor, committed after the first run

    shop.run("jr_2")

    assert shop.output() == shop.full_recompute() == [(10, "card"), (11, "transfer")]


@pytest.mark.spark
@pytest.mark.postgres
def test_label_payments_labels_a_payment_as_of_its_change_and_a_reset_relabels_every_one(
    shop, store
):
    # The lookup joins the payments that changed (the script's docstring): a relabelled
    # method reaches a payment when the payment changes, and every payment after a reset.
    shop.pay((10, 1, 0), (11, 2, 1))
    shop.run("jr_1")
    shop.relabel(1, "credit card")
    shop.pay((12, 1, 2))

    shop.run("jr_2")
    assert shop.output() == [(10, "card"), (11, "transfer"), (12, "credit card")]

    store.reset(shop.job, who="test")
    shop.run("jr_3")
    assert shop.output() == shop.full_recompute()


# -- tombstones -----------------------------------------------------------------------------

OP_D = DeleteMarker("op", ("D",))
DELETE_COLUMNS = ["id", "op", "part", "updated", "value"]


def change(key: int, updated: int, op: str, value: str = "v") -> dict:
    return {"id": key, "part": "a", "updated": updated, "value": value, "op": op}


@pytest.mark.spark
def test_a_delete_and_a_reinsert_in_one_file_at_one_watermark_end_the_same_whatever_their_line_order(
    spark, tmp_path, store
):
    # A JSON or CSV file has no line number Spark can read back: a tie inside one file goes
    # to a hash of the row's values (docs/deletes.md, "Ties"), never to the order of a read.
    outcomes = {}
    for name, lines in {
        "delete_first": [change(1, 10, "D"), change(1, 10, "U")],
        "delete_last": [change(1, 10, "U"), change(1, 10, "D")],
    }.items():
        job = Job(spark, tmp_path / name, store, job_name=f"tie_{name}", delete_marker=OP_D)
        job.land(lines)
        job.run()
        outcomes[name] = reference.as_tuples(
            reference.visible_rows(job.target, DELETE_COLUMNS), DELETE_COLUMNS
        )

    assert outcomes["delete_first"] == outcomes["delete_last"]
    assert outcomes["delete_first"] in ([], [(1, "U", "a", 10, "v")])


@pytest.mark.spark
@requires_iceberg
def test_a_rewind_across_a_run_that_deleted_keys_then_a_rerun_equals_the_full_refresh(
    spark, tmp_path, store
):
    config = LoadConfig(
        source=(tmp_path / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_format="iceberg",
        target_table=unique_table("tombstones"),
        delete_marker=OP_D,
    )
    clock = FixedClock(T0)
    batches = [
        [change(1, 10, "U"), change(2, 10, "U")],
        [change(1, 20, "D")],  # key 1 leaves, its tombstone stays
        [change(1, 30, "U", "back"), change(2, 40, "D")],  # key 1 back, key 2 leaves
    ]
    for number, batch in enumerate(batches, start=1):
        clock.now += 60
        write_json_file(tmp_path / "source", batch, mtime=clock.now - 30)
        run_load_at(spark, config, job_name="tomb", run_id=f"jr_{number}", clock=clock, store=store)
    assert cli.main(["watermarks", "rewind", "tomb", "jr_1", "--why", "recompute"]) == 0
    late = [change(1, 15, "U", "late"), change(2, 35, "U", "late")]  # older than each delete
    clock.now += 60
    write_json_file(tmp_path / "source", late, mtime=clock.now - 30)

    run_load_at(spark, config, job_name="tomb", run_id="jr_4", clock=clock, store=store)

    latest = reference.full_refresh(tmp_path / "source", ("id",), "updated")
    expected = reference.without_deletes(latest, lambda row: OP_D.is_delete(row["op"]))
    assert table_rows(spark, config.iceberg_target.name, DELETE_COLUMNS) == reference.as_tuples(
        expected, DELETE_COLUMNS
    )


# -- a file side whose upstream job rewinds ---------------------------------------------------


@pytest.mark.spark
def test_a_join_side_whose_upstream_rewinds_and_reruns_equals_a_full_recompute(
    spark, tmp_path, store
):
    upstream, config = world.Upstream(spark, tmp_path / "right"), world.config_for(tmp_path)
    left = world.land_left(tmp_path / "left", {"d1": [(1, "l1", 10)], "d2": [(2, "l2", 20)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "first")]})
    upstream.commit("up_1")
    upstream.publish("up_2", {"d2": [(2, "u2", "second")]})
    upstream.commit("up_2")
    world.run(spark, config, store, "jr_1")

    # The upstream is rewound to up_1 (its Parquet output is kept): its commit time goes back.
    store.rewind(world.UPSTREAM, "up_1", why="recompute")
    world.run(spark, config, store, "jr_2")
    world.assert_output(spark, config, left, upstream.committed)

    upstream.publish("up_3", {"d2": [(2, "u3", "third")]})
    upstream.commit("up_3")
    world.run(spark, config, store, "jr_3")
    world.assert_output(spark, config, left, upstream.committed)
