"""Backfills in bounded batches meeting schema changes, deletes, null watermarks, empty
batches, dry runs, failures and runs spread over several invocations.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.engine.source_plan import SchemaError
from glue_incremental.schema.evolution import SchemaChangeError
from glue_incremental.transforms.function import TransformSpec

from tests.harness import reference
from tests.harness.change_rows import (
    deleted_row,
    land_parquet,
    live_row,
    load_full_refresh,
    load_target_rows,
)
from tests.harness.file_jobs import COLUMNS, OP_D, T0, Job, config_for, row, target_rows
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import (
    FixedClock,
    read_parquet,
    run_load_at,
    write_json_file,
)

pytestmark = pytest.mark.spark


TIMED = "id bigint, part string, updated timestamp, value string"


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


def test_a_bounded_batch_ending_among_files_of_one_modification_time_reads_each_file_once(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="ties", max_batch_files=2, max_batches_per_run=1)
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 10, "x")], mtime=T0 - 50, name="f0.json")
    for number in range(1, 4):
        write_json_file(
            source, [row(number + 1, "b", 10, "t")], mtime=T0 - 40, name=f"f{number}.json"
        )
    write_json_file(source, [row(1, "a", 11, "y")], mtime=T0 - 30, name="f4.json")

    read = [job.run(max_batch_files=2, max_batches_per_run=1)["records_read"] for _ in range(3)]

    assert sum(read) == 5 and read[0] == 4, read
    assert load_target_rows(job) == load_full_refresh(job)


def test_batches_emptied_by_the_transform_or_holding_only_null_watermarks_keys_or_odd_partitions(
    spark, tmp_path, store
):
    # One file per batch: odd partition values (a slash, an equals sign, null), a file the
    # transform empties, a file of null watermarks, then keys moving between those partitions
    # and a null key. Each batch's aggregate (counts, key range, partitions) feeds its merge.
    options = {
        "max_batch_files": 1,
        "transform": TransformSpec.parse(
            "transform", "tests.harness.user_transforms:drops_marked_rows"
        ),
    }
    job = Job(spark, tmp_path, store, **options)
    landed = [
        [row(1, "a/b", 1, "x"), row(2, "x=y", 1, "x"), row(3, None, 1, "x")],
        [row(1, "a/b", 5, "drop"), row(4, "c", 5, "drop")],
        [row(1, "c", None, "null"), row(5, "x=y", None, "null"), row(6, "c", 3, "z")],
        [row(1, None, 2, "y"), row(3, "a/b", 2, "y"), row(None, "x=y", 2, "nullkey")],
    ]
    for rows in landed:
        job.land(rows)

    summary = job.run()

    # A version the transform drops still outranks the older ones (docs/transforms.md): a
    # key whose newest version is dropped leaves the target.
    delivered = [((index,), r) for index, rows in enumerate(landed) for r in rows]
    newest = reference.latest_per_key(delivered, ("id",), "updated")
    expected = [r for r in newest if r["value"] != "drop"]
    seen = [tuple(r) for r in read_parquet(spark, job.config.target_path, COLUMNS).collect()]
    assert reference.as_tuples([dict(zip(COLUMNS, r, strict=True)) for r in seen], COLUMNS) == (
        reference.as_tuples(expected, COLUMNS)
    )
    assert summary["batches"] == 4


def test_a_batch_whose_every_row_has_a_null_watermark_loads_as_one_unbatched_run_does(
    spark, tmp_path, store
):
    # JSON infers a column null in every row of a read as text: alone in its batch, the file
    # must not read as a type change of `updated` (bigint in the target), nor of `id`.
    job = Job(spark, tmp_path, store, max_batch_files=1)
    landed = [
        [row(1, "a", 1, "x"), row(2, "b", 1, "x")],
        [row(1, "a", None, "y"), row(3, "a", None, "y")],
        [row(None, "b", 2, "no key")],
    ]
    for rows in landed:
        job.land(rows)

    job.run(max_batch_files=1)

    delivered = [((index,), r) for index, rows in enumerate(landed) for r in rows]
    expected = reference.latest_per_key(delivered, ("id",), "updated")
    assert target_rows(job) == reference.as_tuples(expected, COLUMNS)
    job.land([row(4, "b", None, "z")])
    with pytest.raises(SchemaError, match="have a null 'updated'") as refused:
        job.run(max_batch_files=1, null_watermarks="fail")
    assert "\n" not in str(refused.value)
    assert target_rows(job) == reference.as_tuples(expected, COLUMNS)


def test_a_batched_file_runs_summary_counts_the_future_and_null_rows_of_every_batch(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store, source_schema=TIMED)
    job.land([{**row(1, "a", 0, "x"), "updated": "2023-11-14T00:00:00Z"}])
    job.land([{**row(2, "a", 0, "future"), "updated": "2035-01-01T00:00:00Z"}])
    job.land([{**row(3, "a", 0, "x"), "updated": None}, {**row(4, "a", 0, "x"), "updated": None}])
    job.land(
        [
            {**row(5, "a", 0, "x"), "updated": None},
            {**row(6, "a", 0, "x"), "updated": "2035-01-01T00:00:00Z"},
        ]
    )
    job.land([{**row(7, "a", 0, "x"), "updated": "2023-11-14T00:00:02Z"}])

    batched = job.run(source_schema=TIMED, max_batch_files=1)

    assert batched["batches"] == 5
    assert (batched["future_watermark_rows"], batched["null_watermark_rows"]) == (2, 3)


def test_a_column_rescued_in_every_batch_is_one_schema_change_of_the_run(spark, tmp_path, store):
    options = {"schema_evolution": "rescue", "max_batch_files": 1}
    job = Job(spark, tmp_path, store, **options)
    job.land([{**row(1, "a", 1, "x"), "qty": 1}])
    job.run(**options)
    job.land([{**row(2, "a", 2, "x"), "qty": "two"}])
    job.land([{**row(3, "a", 3, "x"), "qty": "three"}])

    summary = job.run(**options)

    assert summary["batches"] == 2
    assert len(summary["schema_changes"]) == len(set(summary["schema_changes"])), summary[
        "schema_changes"
    ]


def test_a_dry_run_between_runs_of_a_spread_backfill_lists_what_is_left_and_changes_nothing(
    spark, tmp_path, store
):
    options = {"max_batch_files": 1, "max_batches_per_run": 2}
    job = Job(spark, tmp_path, store, **options)
    for key in range(1, 6):
        job.land([row(key, "ab"[key % 2], key, "x")])
    first = job.run(**options)
    assert first["batches"] == 2 and first["batch_limit_reached"] is True
    state = store.get_watermark("orders")

    job.clock.now += 60
    job.runs += 1
    dry = run_load_at(
        spark,
        config_for(tmp_path, **options),
        job_name="orders",
        run_id="jr_dry",
        clock=job.clock,
        store=store,
        dry_run=True,
    )

    assert [batch["files"] for batch in dry["plan"]["batches"]] == [1, 1]
    assert store.get_watermark("orders") == state
    assert target_rows(job) == [(1, "b", 1, "x"), (2, "a", 2, "x")]
    second = job.run(**options)
    third = job.run(**options)
    assert (second["batches"], third["batches"]) == (2, 1)
    assert third["batch_limit_reached"] is False
    job.assert_equals_full_refresh()


@pytest.mark.postgres
def test_a_spread_jdbc_backfill_with_a_column_added_and_a_delete_between_its_runs(
    spark, postgres, tmp_path, store
):
    base = datetime(2024, 1, 1, tzinfo=UTC)
    with orders_table(postgres, prefix="spread") as table:
        postgres.execute(f"alter table {table} add column op text")
        upsert(
            postgres,
            table,
            [(k, "ab"[k % 2], base + timedelta(minutes=k), f"v{k}") for k in range(1, 7)],
        )
        clock = FixedClock(time.time())
        options = {"max_batch_rows": 2, "lookback": timedelta(0), "delete_marker": OP_D}

        def run(run_id: str, **more) -> dict:
            config = jdbc_config(postgres, table, tmp_path, **options, **more)
            clock.now += 60
            return run_load_at(
                spark, config, job_name="spread", run_id=run_id, clock=clock, store=store
            )

        first = run("jr_1", max_batches_per_run=1)
        assert (first["batches"], first["records_read"]) == (1, 2)
        postgres.execute(f"alter table {table} add column qty integer")
        postgres.execute(f"update {table} set qty = id * 10 where id >= 5")
        later = base + timedelta(minutes=10)
        postgres.execute(f"update {table} set op = 'D', updated_at = %s where id = 1", [later])

        second = run("jr_2")

        frame = spark.read.parquet((tmp_path / "target").as_uri())
        seen = sorted((r["id"], r["value"], r["qty"]) for r in frame.collect())
        assert seen == [
            (2, "v2", None),
            (3, "v3", None),
            (4, "v4", None),
            (5, "v5", 50),
            (6, "v6", 60),
        ]
        assert second["records_deleted"] == 1
        assert second["schema_changes"] == ["added qty int"]
        assert second["records_new"] == 5  # 3..6 and the delete of 1


def test_a_batched_run_failing_in_its_second_batch_reports_the_one_it_committed(
    spark, tmp_path, store, capsys
):
    declared = "id bigint, part string, updated bigint, value string"
    options = {"max_batch_files": 1, "null_watermarks": "fail", "source_schema": declared}
    job = Job(spark, tmp_path, store, **options)
    job.land([row(1, "a", 1, "x"), row(2, "a", 1, "x")])
    job.land([row(4, "b", None, "undated")])
    capsys.readouterr()

    with pytest.raises(SchemaError):
        job.run(**options)

    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (summary["status"], summary["committed"]) == ("FAILED", True)
    committed = store.get_watermark("orders")["watermarks"]["files"]["band_fingerprints"]
    assert len(committed) == 1  # the first batch
    assert (summary["batches"], summary["records_read"], summary["files_read"]) == (1, 2, 1)


@pytest.mark.xfail(
    strict=True,
    reason="a reset's bounded backfill replaces the target with its first batch: between the "
    "runs of the spread backfill readers miss every row of the later batches",
)
def test_a_reset_backfill_spread_over_runs_never_shows_readers_fewer_rows_than_before(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "x"), row(2, "b", 1, "x")])
    job.land([row(3, "a", 1, "x"), row(4, "b", 1, "x")])
    job.run()
    before = target_rows(job)
    store.reset("orders", why="reload everything")

    summary = job.run(max_batch_files=1, max_batches_per_run=1)

    assert summary["batch_limit_reached"] is True
    assert target_rows(job) == before  # the source still has every row: none may vanish
