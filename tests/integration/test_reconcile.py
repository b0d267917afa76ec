"""Hard deletes: a reconcile reads only the source's keys and removes the target keys it lost.

PostgreSQL ``DELETE``s between runs; the statement log shows the key-only read; the safety
stop leaves the target untouched and the run FAILED with one line.
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.keys import index as key_index
from glue_incremental.load.reconcile import ReconcileStopped

from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, partition_file_snapshot, read_parquet, run_load_at
from tests.harness.postgres import statements_since

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
FOUR = [(1, "a", T0, "w"), (2, "a", T0, "x"), (3, "b", T0, "y"), (4, "b", T0, "z")]


@pytest.fixture
def table(postgres):
    with orders_table(postgres, prefix="reconciled") as name:
        yield name


def run_pg(spark, config, store, number: int) -> dict:
    return run_load_at(
        spark,
        config,
        job_name="rec",
        run_id=f"jr_{number}",
        clock=FixedClock((T0 + timedelta(minutes=number)).timestamp()),
        store=store,
    )


def target_ids(spark, config) -> list[int]:
    return sorted(r["id"] for r in read_parquet(spark, config.target_path, ["id"]).collect())


def test_rows_deleted_in_postgres_leave_the_target_on_the_nth_run_reading_only_keys(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path, reconcile_every=2, reconcile_max_fraction=0.5)
    upsert(postgres, table, FOUR)
    run_pg(spark, config, store, 1)
    postgres.execute(f"delete from {table} where id in (2, 3)")
    _, offset = statements_since(postgres, 0)

    summary = run_pg(spark, config, store, 2)

    assert target_ids(spark, config) == [1, 4]
    assert summary["records_deleted"] == 2
    assert summary["reconcile"] == {"target_keys": 4, "source_keys": 2, "gone_keys": 2}
    received, _ = statements_since(postgres, offset)
    key_reads = [sql for sql in received if f'SELECT "id" FROM "{table}"' in sql]
    assert key_reads, received
    assert all("value" not in sql and "part" not in sql for sql in key_reads)

    postgres.execute(f"delete from {table} where id = 4")
    summary = run_pg(spark, config, store, 3)  # not the 2nd run since the reconcile
    assert target_ids(spark, config) == [1, 4]
    assert "reconcile" not in summary


def keys_asked_of_the_key_index(monkeypatch) -> list[tuple]:
    """Each run's keys the key index is asked about (``keys.index.partitions_of``'s listed)."""
    asked: list[tuple] = []
    real = key_index.partitions_of

    def recording(*args, **kwargs):
        listed = inspect.signature(real).bind(*args, **kwargs).arguments.get("listed")
        asked.append(None if listed is None else tuple(listed))
        return real(*args, **kwargs)

    monkeypatch.setattr(key_index, "partitions_of", recording)
    return asked


def test_a_reconcile_moves_the_keys_it_read_asking_the_key_index_about_those_only(
    spark, postgres, table, tmp_path, store, monkeypatch
):
    config = jdbc_config(postgres, table, tmp_path, reconcile=True, reconcile_max_fraction=0.5)
    earlier = T0 - timedelta(hours=2)  # before the lookback band of the next run
    upsert(postgres, table, [(k, part, earlier, v) for k, part, _, v in FOUR])
    upsert(postgres, table, [(5, "d", T0, "v")])
    run_pg(spark, config, store, 1)
    postgres.execute(f"delete from {table} where id = 2")
    upsert(postgres, table, [(3, "c", T0 + timedelta(minutes=1), "moved")])
    asked = keys_asked_of_the_key_index(monkeypatch)

    summary = run_pg(spark, config, store, 2)

    stored = read_parquet(spark, config.target_path, ["id", "part", "value"]).collect()
    assert sorted(tuple(r) for r in stored) == [
        (1, "a", "w"),  # "a" rewritten for gone key 2 alone
        (3, "c", "moved"),  # its older version in "b" found by the key index
        (4, "b", "z"),
        (5, "d", "v"),
    ]
    assert summary["records_deleted"] == 1
    # Keys 3 and 5 were read (the lookback band); gone key 2's delete is its stored row,
    # naming the partition it is in: nothing to look up.
    assert asked == [(3, 5)]


def test_a_reconcile_after_a_partition_column_changed_type_finds_the_gone_keys_stored_text(
    spark, postgres, table, tmp_path, store, monkeypatch
):
    config = jdbc_config(postgres, table, tmp_path, reconcile=True, reconcile_max_fraction=0.5)
    upsert(postgres, table, [(1, "007", T0, "w"), (2, "008", T0, "x"), (3, "008", T0, "y")])
    run_pg(spark, config, store, 1)
    postgres.execute(f"alter table {table} alter column part type int using part::int")
    postgres.execute(f"delete from {table} where id = 1")
    asked = keys_asked_of_the_key_index(monkeypatch)

    summary = run_pg(spark, config, store, 2)

    assert target_ids(spark, config) == [2, 3]
    assert summary["records_deleted"] == 1
    assert 1 in asked[0]  # "007" as a number is "7": the gone key is looked up where it is


@pytest.mark.parametrize(
    ("deleted", "message"),
    [
        ("true", "reconcile stopped: the source returned no keys and the target has 4"),
        ("id in (1, 2)", "2 of the target's 4 keys are gone from the source, more than"),
    ],
    ids=["empty_source", "more_than_the_fraction"],
)
def test_the_safety_stop_writes_nothing_and_fails_the_run_with_one_line(
    spark, postgres, table, tmp_path, store, deleted, message
):
    config = jdbc_config(postgres, table, tmp_path, reconcile=True)
    upsert(postgres, table, FOUR)
    run_pg(spark, config, store, 1)
    before = partition_file_snapshot(tmp_path / "target")
    postgres.execute(f"delete from {table} where {deleted}")

    with pytest.raises(ReconcileStopped, match=message) as stopped:
        run_pg(spark, config, store, 2)

    assert "\n" not in str(stopped.value)
    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("rec")["job_run_id"] == "jr_1"
