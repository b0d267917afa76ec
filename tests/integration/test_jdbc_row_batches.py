"""JDBC row batches (``--max_batch_rows``): a run's whole backlog, and a watermark
type other than a timestamp or an integer."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.harness.jdbc_tables import jdbc_config
from tests.harness.loads import FixedClock, read_parquet, run_load_at

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(postgres):
    name = f"attacked_{uuid.uuid4().hex[:8]}"
    postgres.execute(
        f"create table {name} (id bigint primary key, part text not null, "
        "updated_at timestamptz, value text, op text, seq numeric(20, 0))"
    )
    try:
        yield name
    finally:
        postgres.execute(f"drop table {name}")


def put(postgres, table: str, rows: list[tuple]) -> None:
    """``(id, updated_at, op)`` rows, inserted or updated by id; ``seq`` follows the time."""
    postgres.execute(
        f"insert into {table} (id, part, updated_at, value, op, seq) "
        "values (%s, 'a', %s, 'v', %s, %s) on conflict (id) do update set "
        "updated_at = excluded.updated_at, op = excluded.op, seq = excluded.seq",
        [(key, at, op, int((at - T0).total_seconds())) for key, at, op in rows],
        many=True,
    )


def run_pg(spark, config, store, number: int) -> dict:
    return run_load_at(
        spark,
        config,
        job_name="attacked_jdbc",
        run_id=f"jr_{number}",
        clock=FixedClock((T0 + timedelta(days=1, minutes=number)).timestamp()),
        store=store,
    )


def target_ids(spark, config) -> list[int]:
    return sorted(r["id"] for r in read_parquet(spark, config.target_path, ["id"]).collect())


def test_one_batched_jdbc_run_reads_its_whole_backlog(spark, postgres, table, tmp_path, store):
    at = [T0 + timedelta(minutes=m) for m in range(6)]
    config = jdbc_config(postgres, table, tmp_path, max_batch_rows=1, lookback=timedelta(0))
    put(postgres, table, [(key, at[key], "U") for key in (1, 2, 3)])
    run_pg(spark, config, store, 1)
    put(postgres, table, [(key, at[key], "U") for key in (4, 5)])

    summary = run_pg(spark, config, store, 2)

    # Seen: [1, 2, 3] (run 1 stops after 2 batches, run 2 after 1).
    assert target_ids(spark, config) == [1, 2, 3, 4, 5]
    assert summary["batches"] == 2 and summary["batch_limit_reached"] is False


def test_row_batches_on_a_numeric_watermark_load_everything_or_refuse_naming_the_option(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(
        postgres, table, tmp_path, watermark_column="seq", max_batch_rows=1, lookback=timedelta(0)
    )
    put(postgres, table, [(1, T0, "U"), (2, T0 + timedelta(minutes=1), "U")])

    summary = run_pg(spark, config, store, 1)

    assert target_ids(spark, config) == [1, 2] and summary["batches"] == 2
