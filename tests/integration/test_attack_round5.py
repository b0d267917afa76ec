"""Round-5 attacks on the reconcile, the key index's in-memory segment and bounded batches:
each test is a behaviour that should hold, compared with a full refresh in plain Python
(``tests.harness.reference``)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental.reconcile import KeyCounts, ReconcileStopped
from glue_incremental.schema_evolution import SchemaChangeError

from tests.harness import reference
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.file_jobs import COLUMNS, OP_D, SNAPSHOTS, Job, row, target_rows
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, partition_file_snapshot, read_parquet, run_load_at

pytestmark = pytest.mark.spark


def deleted_row(key: int, part: str, updated: int) -> dict:
    return {**row(key, part, updated, f"d{key}"), "op": "D"}


def live_row(key: int, part: str, updated: int, value: str) -> dict:
    return {**row(key, part, updated, value), "op": "U"}


def snapshots_reference(snapshots: list[list[dict]]) -> list[tuple]:
    """The latest snapshot's keys, each with its latest version, soft deletes removed."""
    merged = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    kept = reference.without_deletes(merged, lambda r: r.get("op") == "D")
    return reference.as_tuples(kept, COLUMNS)


def snapshots_reference_rows(snapshots: list[list[dict]]) -> list[tuple]:
    merged = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    return [tuple(r[c] for c in COLUMNS) for r in merged]


def spark_rows(spark, job: Job) -> list[tuple]:
    """The target's rows as Spark reads them (a null or empty partition value too)."""
    return [tuple(r) for r in read_parquet(spark, job.config.target_path, COLUMNS).collect()]


# -- the reconcile ----------------------------------------------------------------------------


def test_a_reconcile_with_a_delete_marker_removes_both_the_gone_and_the_marked_keys(
    spark, tmp_path, store
):
    first = [live_row(k, "ab"[k // 3], 10, "x") for k in range(1, 5)]
    second = [deleted_row(1, "a", 20), live_row(2, "a", 10, "x"), live_row(4, "b", 11, "y")]
    job = Job(spark, tmp_path, store, delete_marker=OP_D, **SNAPSHOTS)
    job.land(first)
    job.run()
    job.land(second)

    summary = job.run(delete_marker=OP_D, reconcile=True, **SNAPSHOTS)

    assert target_rows(job) == snapshots_reference([first, second])
    assert summary["reconcile"] == {"target_keys": 4, "source_keys": 3, "gone_keys": 1}


def test_a_reconcile_of_a_target_emptied_by_deletes_loads_the_new_snapshot(spark, tmp_path, store):
    first = [deleted_row(1, "a", 10)]
    second = [live_row(2, "b", 20, "x")]
    job = Job(spark, tmp_path, store, delete_marker=OP_D, **SNAPSHOTS)
    job.land(first)
    job.run()
    job.land(second)

    summary = job.run(delete_marker=OP_D, reconcile=True, **SNAPSHOTS)

    assert target_rows(job) == snapshots_reference([first, second])
    assert summary["reconcile"]["gone_keys"] == 0


@pytest.mark.parametrize(("gone", "keys", "fraction"), [(1, 4, 0.25), (3, 10, 0.3), (1, 3, 1 / 3)])
def test_a_reconcile_removing_exactly_the_fraction_is_allowed(gone, keys, fraction):
    counts = KeyCounts.of([(k,) for k in range(keys)], [(k,) for k in range(gone, keys)])
    counts.check(fraction)  # "more than" the fraction stops, exactly the fraction does not
    with pytest.raises(ReconcileStopped):
        KeyCounts.of([(k,) for k in range(keys)], [(k,) for k in range(gone + 1, keys)]).check(
            fraction
        )


def test_a_reconcile_at_exactly_the_fraction_removes_the_keys(spark, tmp_path, store):
    first = [row(k, "a", 10, "x") for k in range(1, 5)]
    second = first[1:]
    job = Job(spark, tmp_path, store, file_snapshots=True, reconcile_max_fraction=0.25)
    job.land(first)
    job.run()
    job.land(second)

    job.run(file_snapshots=True, reconcile_max_fraction=0.25, reconcile=True)

    assert target_rows(job) == snapshots_reference([first, second])


def test_a_due_reconcile_that_crashed_before_its_commit_is_done_by_the_rerun(
    spark, tmp_path, store
):
    options = {**SNAPSHOTS, "reconcile_every": 2}
    first = [row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]
    second = [row(1, "a", 10, "x"), row(3, "b", 12, "y")]
    job = Job(spark, tmp_path, store, **options)
    job.land(first)
    job.run()  # the first run: nothing to reconcile, the count starts
    job.land(second)
    with pytest.raises(Crash):
        job.run(hook=CrashAtStep(1, prefix="commit.before"), **options)

    rerun = job.run(**options)

    assert target_rows(job) == snapshots_reference([first, second])
    assert rerun["reconcile"]["gone_keys"] in (0, 1)  # the crashed publish may have removed it
    assert store.get_watermark("orders")["watermarks"]["runs_since_reconcile"] == 0


@requires_iceberg
def test_a_reconcile_on_an_iceberg_target_removes_the_gone_keys(spark, tmp_path, store):
    table = unique_table("reconciled")
    options = {**SNAPSHOTS, "target_format": "iceberg", "target_table": table}
    first = [row(1, "a", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]
    second = [row(1, "a", 20, "y"), row(3, "b", 10, "x")]
    job = Job(spark, tmp_path, store, **options)
    job.land(first)
    job.run()
    job.land(second)

    summary = job.run(reconcile=True, **options)

    name = job.config.iceberg_target.name
    assert table_rows(spark, name, COLUMNS) == snapshots_reference([first, second])
    assert summary["reconcile"] == {"target_keys": 3, "source_keys": 2, "gone_keys": 1}


@pytest.mark.postgres
def test_a_reconcile_after_the_key_column_became_text_stops_with_one_line_writing_nothing(
    spark, postgres, tmp_path, store
):
    t0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

    def run(number: int) -> dict:
        clock = FixedClock(t0.timestamp() + 60 * number)
        return run_load_at(
            spark, config, job_name="retyped", run_id=f"jr_{number}", clock=clock, store=store
        )

    with orders_table(postgres, prefix="retyped") as table:
        config = jdbc_config(postgres, table, tmp_path, reconcile=True, reconcile_max_fraction=0.5)
        upsert(postgres, table, [(1, "a", t0, "w"), (2, "a", t0, "x"), (3, "b", t0, "y")])
        run(1)
        before = partition_file_snapshot(tmp_path / "target")
        postgres.execute(f"alter table {table} alter column id type text")
        postgres.execute(
            f"update {table} set updated_at = %s, value = 'v' where id = '1'",
            [(t0 + timedelta(minutes=2),)],
        )

        with pytest.raises(SchemaChangeError, match="column 'id' is string in the source") as bad:
            run(5)

    assert "\n" not in str(bad.value)
    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("retyped")["job_run_id"] == "jr_1"


# -- the key index's in-memory segment ------------------------------------------------------


def test_a_key_moving_partition_twice_in_one_batch_and_again_in_the_next_stays_in_one_place(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "ü ñ", 1, "v1"), row(2, "a/b", 1, "w1")])
    job.run()
    job.land([row(1, "a/b", 2, "v2"), row(1, "c=d", 3, "v3"), row(2, "e f", 2, "w2")])
    job.land([row(1, None, 4, "v4"), row(2, "g%2Fh", 3, "w3"), row(2, "c=d", 4, "w4")])
    job.run(max_batch_files=1)
    job.land([row(1, "e f", 5, "v5"), row(1, "ü ñ", 6, "v6"), row(2, None, 5, "w5")])
    job.run()

    job.assert_equals_full_refresh()


def test_a_key_written_as_text_in_a_later_file_is_refused_with_one_line_writing_nothing(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "v1"), row(2, "b", 1, "w1")])
    job.run()
    before = partition_file_snapshot(job.target)
    job.land([{**row(1, "b", 2, "v2"), "id": "1"}])

    with pytest.raises(SchemaChangeError, match="column 'id' is string in the source") as bad:
        job.run()

    assert "\n" not in str(bad.value)
    assert partition_file_snapshot(job.target) == before


# -- bounded batches crossing schema changes and deletes ----------------------------------


def test_a_backfill_whose_later_batches_add_a_column_and_soft_delete_an_earlier_key(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, delete_marker=OP_D)
    job.land([live_row(1, "a", 1, "v1"), live_row(2, "b", 1, "w1")])
    job.land([{**live_row(3, "a", 2, "x2"), "extra": 7}, deleted_row(1, "a", 2)])
    job.land([{**live_row(2, "a", 3, "w3"), "extra": 8}])

    summary = job.run(delete_marker=OP_D, max_batch_files=1)

    assert summary["batches"] == 3
    columns = [*COLUMNS, "extra"]
    latest = reference.latest_per_key(
        reference.source_rows(tmp_path / "source"), ("id",), "updated"
    )
    expected = reference.without_deletes(latest, lambda r: r.get("op") == "D")
    assert target_rows(job, columns) == reference.as_tuples(expected, columns)


def test_a_backfill_whose_later_batch_turns_a_number_into_a_fraction_keeps_the_batches_before(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([{**row(1, "a", 1, "v1"), "amount": 5}])
    job.land([{**row(2, "a", 2, "w2"), "amount": 2.5}, {**row(1, "b", 2, "v2"), "amount": 7}])

    with pytest.raises(SchemaChangeError, match="'amount' is double in the source") as bad:
        job.run(max_batch_files=1)

    assert "\n" not in str(bad.value)
    columns = [*COLUMNS, "amount"]
    assert target_rows(job, columns) == [(1, "a", 1, "v1", 5)]  # batch 1 committed, kept


def test_a_rewind_to_a_run_that_stopped_mid_backlog_then_a_rerun_equals_a_full_refresh(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    for step in range(6):
        job.land([row(step % 3, "ab"[step % 2], step, f"v{step}"), row(10 + step, "a", step, "n")])
    limited = {"max_batch_files": 2, "max_batches_per_run": 1}
    job.run(**limited)
    job.run(**limited)
    job.run(**limited)  # the backlog is done in three runs of one batch

    store.rewind("orders", "jr_1", why="redo from the first batch")
    job.land([row(1, "b", 0, "late and older")])
    job.run(**limited)
    job.run(**limited)
    job.run(**limited)

    job.assert_equals_full_refresh()


def test_a_null_key_the_newest_snapshot_still_has_is_not_gone(spark, tmp_path, store):
    # The merge groups a null key as one key; the reconcile counted it gone on every run
    # (a plain join never matches null), so the safety stop refused a reconcile removing nothing.
    snapshot = [
        {**row(0, "a", 10, "x"), "id": None},
        *(row(k, "ab"[k % 2], 10, "x") for k in range(1, 5)),
    ]
    job = Job(spark, tmp_path, store, file_snapshots=True)
    job.land(snapshot)
    job.run()
    job.land(snapshot)

    summary = job.run(file_snapshots=True, reconcile=True)

    assert summary["reconcile"] == {"target_keys": 5, "source_keys": 5, "gone_keys": 0}
    assert sorted(map(str, spark_rows(spark, job))) == sorted(
        map(str, snapshots_reference_rows([snapshot, snapshot]))
    )


def test_a_reconcile_of_an_empty_string_partition_keeps_its_keys(spark, tmp_path, store):
    first = [row(1, "", 10, "x"), row(2, "a", 10, "x"), row(3, "b", 10, "x")]
    second = [row(1, "", 10, "x"), row(2, "a", 10, "x")]
    job = Job(spark, tmp_path, store, **SNAPSHOTS)
    job.land(first)
    job.run()
    job.land(second)

    summary = job.run(reconcile=True, **SNAPSHOTS)

    assert sorted(r[0] for r in spark_rows(spark, job)) == [1, 2]
    assert summary["reconcile"]["gone_keys"] == 1


def land_parquet(job: Job, rows: list[dict], types: dict[str, str], name: str) -> None:
    """One Parquet file of ``rows`` with the given Arrow ``types``, landed like ``Job.land``."""
    job.clock.now += 10
    source = job.tmp / "source"
    source.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([(column, types.get(column, "string")) for column in rows[0]])
    path = source / name
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    os.utime(path, (job.clock.now, job.clock.now))


@pytest.mark.parametrize("widened", ["amount", "id"])
def test_a_backfill_whose_later_batch_widens_an_int_to_a_bigint(spark, tmp_path, store, widened):
    narrow = {"id": "int64", "updated": "int64", "amount": "int64", widened: "int32"}
    wide = {**narrow, widened: "int64"}
    job = Job(spark, tmp_path, store, source_format="parquet")
    land_parquet(
        job,
        [{**row(1, "a", 1, "v1"), "amount": 5}, {**row(2, "b", 1, "w1"), "amount": 6}],
        narrow,
        "f1.parquet",
    )
    land_parquet(job, [{**row(1, "b", 2, "v2"), "amount": 2**40}], wide, "f2.parquet")
    land_parquet(
        job,
        [{**row(2, "a", 3, "w3"), "amount": 7}, {**row(1, "a", 3, "v3"), "amount": 8}],
        wide,
        "f3.parquet",
    )

    job.run(source_format="parquet", max_batch_files=1)

    columns = [*COLUMNS, "amount"]
    seen = sorted(tuple(r) for r in read_parquet(spark, job.config.target_path, columns).collect())
    assert seen == [(1, "a", 3, "v3", 8), (2, "a", 3, "w3", 7)]


def test_a_reconcile_in_the_run_that_widens_a_column_removes_the_gone_keys(spark, tmp_path, store):
    narrow = {"id": "int64", "updated": "int64", "amount": "int32"}
    wide = {**narrow, "amount": "int64"}
    options = {**SNAPSHOTS, "source_format": "parquet"}
    job = Job(spark, tmp_path, store, **options)
    first = [{**row(k, "ab"[k % 2], 1, f"v{k}"), "amount": k} for k in range(1, 4)]
    land_parquet(job, first, narrow, "s1.parquet")
    job.run()
    land_parquet(job, [{**first[0], "amount": 2**40, "updated": 2}, first[1]], wide, "s2.parquet")

    summary = job.run(reconcile=True, **options)

    columns = [*COLUMNS, "amount"]
    seen = sorted(tuple(r) for r in read_parquet(spark, job.config.target_path, columns).collect())
    assert seen == [(1, "b", 2, "v1", 2**40), (2, "a", 1, "v2", 2)]
    assert summary["reconcile"]["gone_keys"] == 1


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
