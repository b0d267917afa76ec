"""A custom job reading a PostgreSQL table by its watermark column (credentials from Secrets
Manager) and a reference table whole, merging into an Iceberg table: one snapshot per clean
run, nothing written or committed when the script raises, and a CLI rewind rolls the table
back with the state, as for the generic jobs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.custom import DeclarationError, JdbcReference, JdbcTable, incremental_job
from glue_incremental.custom import iceberg as iceberg_output
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental_tools import cli

from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import orders_table, upsert

pytestmark = [pytest.mark.spark, pytest.mark.postgres, requires_iceberg]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


class Boom(RuntimeError):
    pass


@pytest.fixture
def world(spark, store, postgres):
    """An orders table, a parts reference table, their secret, and the script run on them."""
    with orders_table(postgres) as orders:
        parts = f"parts_{uuid.uuid4().hex[:8]}"
        postgres.execute(f"create table {parts} (part text primary key, label text)")
        postgres.execute(f"insert into {parts} values ('a', 'alpha'), ('b', 'beta')")
        secret = postgres.credentials_secret(f"pg/{orders}")
        try:
            yield World(spark, postgres, orders, parts, secret)
        finally:
            postgres.execute(f"drop table {parts}")


class World:
    def __init__(self, spark, postgres, orders: str, parts: str, secret: str) -> None:
        self.spark, self.postgres, self.orders = spark, postgres, orders
        self.job, self.table = f"custom_{orders}", unique_table("custom_jdbc")
        connection = {"url": postgres.jdbc_url, "secret_id": secret}
        self.sources = {
            "orders": JdbcTable(
                table=orders, watermark_column="updated_at", primary_key="id", **connection
            ),
            "parts": JdbcReference(table=parts, **connection),
        }

    def run(self, run_id: str, *, fail: bool = False, body=None) -> dict:
        argv = ["s.py", "--JOB_NAME", self.job, "--JOB_RUN_ID", run_id]
        with incremental_job(
            argv,
            sources=self.sources,
            targets={"labelled": iceberg_output(self.table, partition_by="part")},
            spark=self.spark,
        ) as job:
            if body:
                body(job)
            new = job.increment("orders").join(job.read_whole("parts"), "part", "left")
            job.write("labelled", new, keys=["id"], order_by="updated_at")
            if fail:
                raise Boom("after the write")
        return job.summary

    def output(self) -> list[tuple]:
        return table_rows(self.spark, f"glue_catalog.{self.table}", ["id", "value", "label"])

    def snapshot_runs(self) -> list[str | None]:
        target = iceberg_writer.IcebergTarget(self.table)
        return [snapshot.run_id for snapshot in iceberg_writer.snapshots(self.spark, target)]


def test_a_jdbc_table_is_read_whole_then_from_its_cursor_one_snapshot_per_clean_run(world, store):
    upsert(world.postgres, world.orders, [(1, "a", at(0), "x1"), (2, "b", at(1), "y1")])
    first = world.run("jr_1")
    upsert(world.postgres, world.orders, [(1, "a", at(2), "x2"), (3, "a", at(3), "z1")])
    second = world.run("jr_2")

    assert first["records_read"] == 2
    # rows since the cursor: the two changed ones and the cursor's own row (read inclusively)
    assert second["records_read"] == 3
    assert world.output() == [(1, "x2", "alpha"), (2, "y1", "beta"), (3, "z1", "alpha")]
    assert world.snapshot_runs() == ["jr_1", "jr_2"]
    assert set(store.slots(world.job)) == {"orders"}  # a reference table keeps no state
    assert store.get_watermark(world.job, "orders")["watermarks"]["cursor"] == at(3)

    upsert(world.postgres, world.orders, [(2, "b", at(4), "y2")])
    with pytest.raises(Boom):
        world.run("jr_3", fail=True)
    assert world.snapshot_runs() == ["jr_1", "jr_2"]
    assert store.get_watermark(world.job, "orders")["watermarks"]["cursor"] == at(3)
    with pytest.raises(DeclarationError, match="'orders' is a JdbcTable: this needs a partitioned"):
        world.run("jr_4", body=lambda job: job.affected_partitions("orders"))
    world.run("jr_5")
    assert world.output() == [(1, "x2", "alpha"), (2, "y2", "beta"), (3, "z1", "alpha")]


def test_a_cli_rewind_rolls_the_iceberg_table_back_with_the_jdbc_cursor(world, store, capsys):
    upsert(world.postgres, world.orders, [(1, "a", at(0), "x1")])
    world.run("jr_1")
    upsert(world.postgres, world.orders, [(1, "a", at(5), "x2"), (2, "b", at(6), "y1")])
    world.run("jr_2")

    assert cli.main(["watermarks", "rewind", world.job, "jr_1", "--why", "recompute"]) == 0
    assert world.output() == [(1, "x1", "alpha")]
    assert store.get_watermark(world.job, "orders")["watermarks"]["cursor"] == at(0)

    rerun = world.run("jr_3")
    assert rerun["records_read"] == 2  # every row at or after the rewound cursor
    assert world.output() == [(1, "x2", "alpha"), (2, "y1", "beta")]
