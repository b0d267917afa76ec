"""Ties on the watermark: the row just read wins over the stored one; then the later delivery."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta

import pytest

from tests.harness import reference
from tests.harness.change_rows import DELETE_COLUMNS, change
from tests.harness.file_jobs import OP_D, Job
from tests.harness.jdbc_tables import jdbc_config
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated", "value"]


def row(key: int, updated: int, value: str) -> dict:
    return {"id": key, "part": "a", "updated": updated, "value": value}


def test_with_equal_watermarks_the_row_just_read_beats_the_stored_one(spark, tmp_path, store):
    config = json_files_config(tmp_path, partition_by=("part",))
    write_json_file(tmp_path / "source", [row(k, 5, "old") for k in range(20)], mtime=T0 - 100)
    run_load_at(spark, config, job_name="ties", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(tmp_path / "source", [row(k, 5, "new") for k in range(20)], mtime=T0 + 10)

    run_load_at(
        spark, config, job_name="ties", run_id="jr_2", clock=FixedClock(T0 + 60), store=store
    )

    values = {r["value"] for r in visible_rows(tmp_path / "target", COLUMNS)}
    assert values == {"new"}


def test_within_one_run_the_later_file_then_the_greater_file_name_wins(spark, tmp_path, store):
    config = json_files_config(tmp_path, partition_by=("part",))
    source = tmp_path / "source"
    # Key 1: the later modification time wins although its name sorts first.
    write_json_file(source, [row(1, 5, "later")], mtime=T0 - 50, name="a.json")
    write_json_file(source, [row(1, 5, "earlier")], mtime=T0 - 90, name="z.json")
    # Key 2: the same modification time: the greater file name wins.
    write_json_file(source, [row(2, 5, "name-b")], mtime=T0 - 70, name="b.json")
    write_json_file(source, [row(2, 5, "name-c")], mtime=T0 - 70, name="c.json")

    run_load_at(spark, config, job_name="ties", run_id="jr_1", clock=FixedClock(T0), store=store)

    seen = as_tuples(visible_rows(tmp_path / "target", COLUMNS), COLUMNS)
    assert seen == [(1, "a", 5, "later"), (2, "a", 5, "name-c")]
    assert seen == as_tuples(full_refresh(source, ("id",), "updated"), COLUMNS)


@pytest.mark.postgres
def test_same_day_updates_of_a_date_watermark_are_kept(spark, postgres, tmp_path, store):
    table = f"ties_{uuid.uuid4().hex[:8]}"
    postgres.execute(
        f"create table {table} (id bigint primary key, part text, updated_on date, value text)"
    )
    day = date(2024, 5, 1)
    insert = (
        f"insert into {table} (id, part, updated_on, value) values (%s, %s, %s, %s) "
        "on conflict (id) do update set updated_on = excluded.updated_on, value = excluded.value"
    )
    try:
        postgres.execute(insert, [(k, "a", day, "before") for k in range(20)], many=True)
        config = jdbc_config(
            postgres, table, tmp_path, watermark_column="updated_on", lookback=timedelta(0)
        )
        start = datetime(2024, 5, 1, 9, tzinfo=UTC).timestamp()
        run_load_at(
            spark, config, job_name="pg", run_id="jr_1", clock=FixedClock(start), store=store
        )
        postgres.execute(insert, [(k, "a", day, "after") for k in range(20)], many=True)
        later = start + timedelta(hours=3).total_seconds()
        run_load_at(
            spark, config, job_name="pg", run_id="jr_2", clock=FixedClock(later), store=store
        )
        postgres.execute(insert, [(99, "a", day + timedelta(days=1), "next day")], many=True)
        run_load_at(
            spark,
            config,
            job_name="pg",
            run_id="jr_3",
            clock=FixedClock(later + 86400),
            store=store,
        )
    finally:
        postgres.execute(f"drop table {table}")

    values = [
        r["value"] for r in visible_rows(tmp_path / "target", ["id", "value"]) if r["id"] != 99
    ]
    assert sorted(values) == ["after"] * 20


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
