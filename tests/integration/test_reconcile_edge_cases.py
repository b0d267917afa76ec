"""The reconcile of full snapshots at its edges: delete markers, an emptied target, exactly
the allowed fraction, a crash before its commit, Iceberg, key and column type changes,
null keys and empty partition values. Each compared with a plain-Python reference.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.schema.evolution import SchemaChangeError

from tests.harness import reference
from tests.harness.change_rows import deleted_row, land_parquet, live_row, snapshots_reference
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.file_jobs import COLUMNS, OP_D, SNAPSHOTS, Job, row, target_rows
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, partition_file_snapshot, read_parquet, run_load_at

pytestmark = pytest.mark.spark


def snapshots_reference_rows(snapshots: list[list[dict]]) -> list[tuple]:
    merged = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    return [tuple(r[c] for c in COLUMNS) for r in merged]


def spark_rows(spark, job: Job) -> list[tuple]:
    """The target's rows as Spark reads them (a null or empty partition value too)."""
    return [tuple(r) for r in read_parquet(spark, job.config.target_path, COLUMNS).collect()]


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
