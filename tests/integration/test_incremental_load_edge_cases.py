"""Edge-case runs of the real load job: each compared with a full refresh
computed in plain Python (``tests/harness/reference.py``), on a local disk unless named."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental import aws
from glue_incremental.args import BookmarkOption
from glue_incremental.run.state import LayoutChanged
from glue_incremental.targets.parquet import writer
from glue_incremental_tools import cli

from tests.harness.faults import Crash, crash_at
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.notifications import notified_queue, wait_for_messages
from tests.harness.reference import as_tuples, full_refresh, latest_per_key, visible_rows
from tests.harness.s3 import after_last_write, put_json_lines

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def test_a_partition_column_named_with_an_underscore_keeps_every_key(spark, tmp_path, store):
    """``_part=a/`` is visible to Spark (a ``key=value`` name): the second run merges into it
    instead of taking the target for empty and replacing it with the update alone."""
    columns = ["id", "_part", "updated", "value"]
    config = json_files_config(tmp_path, partition_by=("_part",))
    source = tmp_path / "source"
    rows = [{"id": k, "_part": "a", "updated": 1, "value": "old"} for k in (1, 2)]
    write_json_file(source, rows, mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(source, [{"id": 1, "_part": "a", "updated": 2, "value": "new"}], mtime=T0 + 10)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    expected = as_tuples(full_refresh(source, ("id",), "updated"), columns)
    assert as_tuples(visible_rows(tmp_path / "target", columns), columns) == expected


def test_an_underscore_partition_is_merged_into_on_every_file_system(spark, targets):
    target = targets("t")
    columns = ["id", "_p", "ts"]

    def upsert(rows, run_id):
        frame = spark.createDataFrame(rows, "id long, _p string, ts long").coalesce(1)
        writer.upsert(
            spark,
            frame,
            target.uri,
            primary_key=["id"],
            partition_by=["_p"],
            order_by="ts",
            run_id=run_id,
        )

    upsert([(1, "a", 1), (2, "a", 1)], "r1")
    upsert([(1, "a", 2)], "r2")

    assert as_tuples(target.rows(columns), columns) == [(1, "a", 2), (2, "a", 1)]


def test_a_target_path_with_glob_characters_is_read_and_written_as_written(spark, tmp_path, store):
    """``out[1]/{t}``: the key index's staging, the target's partitions and the source
    files all reach ``spark.read`` as literal paths, not globs matching nothing."""
    root = tmp_path / "out[1]" / "{t}"
    source = root / "source"
    config = json_files_config(
        root,
        partition_by=("part",),
        source=f"file://{source}",
        target_path=f"file://{root / 'target'}",
    )
    columns = ["id", "part", "updated", "value"]
    write_json_file(source, [{"id": 1, "part": "a", "updated": 1, "value": "x"}], mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    moved = [{"id": 1, "part": "b", "updated": 2, "value": "y"}, {"id": 2, "part": "a"}]
    write_json_file(source, [{**moved[1], "updated": 1, "value": "z"}, moved[0]], mtime=T0 + 10)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    expected = as_tuples(full_refresh(source, ("id",), "updated"), columns)
    assert as_tuples(visible_rows(root / "target", columns), columns) == expected


SCHEMA = pa.schema([("id", pa.int64()), ("part", pa.string()), ("updated", pa.int64())])


def _land(source: Path, name: str, rows: list[dict], *, mtime: float, empty: bool = False) -> None:
    """``rows`` as ``name``'s format; ``empty``: the empty form of that format (a 0-byte JSON
    file, a header-only CSV, a Parquet file of zero rows)."""
    source.mkdir(parents=True, exist_ok=True)
    path = source / name
    if name.endswith(".parquet"):
        pq.write_table(pa.Table.from_pylist([] if empty else rows, schema=SCHEMA), path)
    elif name.endswith(".csv"):
        lines = ["id,part,updated"] + [f"{r['id']},{r['part']},{r['updated']}" for r in rows]
        path.write_text("\n".join(lines[:1] if empty else lines) + "\n")
    else:
        path.write_text("" if empty else "".join(f"{json.dumps(r)}\n" for r in rows))
    os.utime(path, (mtime, mtime))


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_an_empty_file_as_the_only_new_input_is_a_run_with_nothing_new(spark, tmp_path, store, fmt):
    """Spark writes such files for empty frames: the run commits (the file is not read again)
    and the target keeps what it held, instead of every retry failing on a schema of nothing."""
    source, columns = tmp_path / "source", ["id", "part", "updated"]
    rows = [{"id": 1, "part": "a", "updated": 1}]
    config = json_files_config(tmp_path, partition_by=("part",), source_format=fmt)
    _land(source, f"first.{fmt}", rows, mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    _land(source, f"empty.{fmt}", rows, mtime=T0 + 10, empty=True)

    summary = run_load_at(
        spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store
    )

    assert summary["committed"] and summary["records_read"] == 0
    seen = [
        {**r, "id": int(r["id"]), "updated": int(r["updated"])}
        for r in visible_rows(tmp_path / "target", columns)
    ]
    assert as_tuples(seen, columns) == as_tuples(
        latest_per_key([((0, ""), rows[0])], ("id",), "updated"), columns
    )


def _one_run_then_the_source_emptied(spark, tmp_path, store, config) -> None:
    write_json_file(tmp_path / "source", [{"id": 1, "part": "a", "updated": 1}], mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    for path in (tmp_path / "source").iterdir():
        path.unlink()


def test_a_full_reload_of_an_empty_file_source_empties_the_parquet_target(spark, tmp_path, store):
    config = json_files_config(tmp_path, partition_by=("part",))
    _one_run_then_the_source_emptied(spark, tmp_path, store, config)

    run_load_at(
        spark,
        config,
        job_name="j",
        run_id="jr_2",
        clock=FixedClock(T0 + 60),
        store=store,
        option=BookmarkOption.DISABLE,
    )

    assert visible_rows(tmp_path / "target", ["id"]) == []


@requires_iceberg
def test_a_first_run_after_a_reset_on_an_empty_source_empties_the_iceberg_table(
    spark, tmp_path, store
):
    config = json_files_config(
        tmp_path, partition_by=("part",), target_format="iceberg", target_table=unique_table()
    )
    _one_run_then_the_source_emptied(spark, tmp_path, store, config)
    store.reset("j", why="reload")

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    assert table_rows(spark, config.iceberg_target.name, ["id"]) == []


@pytest.mark.postgres
def test_a_full_reload_of_an_empty_jdbc_table_empties_the_target(spark, tmp_path, store, postgres):
    with orders_table(postgres) as table:
        config = jdbc_config(postgres, table, tmp_path)
        upsert(postgres, table, [(1, "a", datetime(2024, 1, 1, tzinfo=UTC), "x")])
        run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
        postgres.execute(f"delete from {table}")

        run_load_at(
            spark,
            config,
            job_name="j",
            run_id="jr_2",
            clock=FixedClock(T0 + 60),
            store=store,
            option=BookmarkOption.DISABLE,
        )

    assert visible_rows(tmp_path / "target", ["id"]) == []


@requires_iceberg
def test_a_rewind_to_a_run_that_wrote_no_snapshot_restores_the_table_as_that_run_left_it(
    spark, tmp_path, store, capsys
):
    """jr_2 read only an empty file: it committed (its bookmark moved) but wrote no snapshot.
    Rewinding to it rolls the table back to the snapshot current when it committed (jr_1's);
    a run whose table has no such snapshot is refused in one line, nothing changed."""
    config = json_files_config(
        tmp_path, partition_by=("part",), target_format="iceberg", target_table=unique_table()
    )
    source = tmp_path / "source"
    for run, rows in enumerate(
        [[{"id": 1, "part": "a", "updated": 1}], [], [{"id": 1, "part": "a", "updated": 2}]], 1
    ):
        _land(source, f"f{run}.json", rows, mtime=T0 + 100 * run - 50, empty=not rows)
        summary = run_load_at(
            spark,
            config,
            job_name="j",
            run_id=f"jr_{run}",
            clock=FixedClock(T0 + 100 * run),
            store=store,
        )
        assert summary["committed"]

    assert cli.main(["watermarks", "rewind", "j", "jr_2", "--why", "reprocess"]) == 0

    assert table_rows(spark, config.iceberg_target.name, ["id", "updated"]) == [(1, 1)]
    assert (
        store.get_watermark("j")["watermarks"] == store.state_after_run("j", "jr_2")["watermarks"]
    )


def test_source_partition_types_are_fixed_on_the_first_run_not_inferred_per_batch(
    spark, tmp_path, store
):
    """``store=00A`` makes the column text on the first run; a later batch holding only
    ``store=007`` is still text (``007``, as a full refresh reads it), not the integer 7."""
    config = json_files_config(tmp_path, partition_by=("store",))
    source = tmp_path / "source"
    write_json_file(source / "store=00A", [{"id": 1, "updated": 1}], mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(source / "store=007", [{"id": 2, "updated": 1}], mtime=T0 + 10)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    columns = ["id", "store"]
    assert as_tuples(visible_rows(tmp_path / "target", columns), columns) == [
        (1, "00A"),
        (2, "007"),
    ]


def test_a_changed_partition_by_is_refused_then_a_full_reload_migrates_the_target(
    spark, tmp_path, store
):
    """An incremental run under another ``--partition_by`` would keep the old layout beside
    the new (every key twice): it is refused in one line naming both, nothing written. A
    full reload under the new layout leaves only it: the target equals a full refresh."""
    source, columns = tmp_path / "source", ["id", "part", "updated", "value"]
    write_json_file(source, [row(k, "a", 1) for k in (1, 2)], mtime=T0 - 100)
    run_load_at(
        spark,
        json_files_config(tmp_path, partition_by=("part",)),
        job_name="j",
        run_id="jr_1",
        clock=FixedClock(T0),
        store=store,
    )
    before = sorted(p.name for p in (tmp_path / "target").rglob("*.parquet"))
    write_json_file(source, [row(1, "b", 2)], mtime=T0 + 10)
    unpartitioned = json_files_config(tmp_path, partition_by=())

    with pytest.raises(LayoutChanged) as refused:
        run_load_at(
            spark,
            unpartitioned,
            job_name="j",
            run_id="jr_2",
            clock=FixedClock(T0 + 60),
            store=store,
        )
    assert "partition_by" in str(refused.value) and "['part']" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert sorted(p.name for p in (tmp_path / "target").rglob("*.parquet")) == before

    store.reset("j", why="new layout")  # what the refusal advises: the next run reloads all
    run_load_at(
        spark,
        unpartitioned,
        job_name="j",
        run_id="jr_3",
        clock=FixedClock(T0 + 120),
        store=store,
    )
    seen = spark.read.parquet(str(tmp_path / "target")).select(*columns).collect()
    expected = as_tuples(full_refresh(source, ("id",), "updated"), columns)
    assert sorted(tuple(r) for r in seen) == expected


def row(key: int, part: str, updated: int) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": f"v{key}.{updated}"}


def _visible_and_in_flight(queue_url: str) -> tuple[int, int]:
    attributes = aws.client("sqs").get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


@pytest.mark.s3
def test_a_run_with_notifications_that_does_not_commit_leaves_the_queue_as_it_found_it(
    spark, tmp_path, store, s3_bucket
):
    """A run failing before its publish, then a dry run: the new file's message is visible
    again at once (not hidden for the visibility timeout while the band moves past the
    file); the next run reads the file and deletes the message."""
    queue = notified_queue(s3_bucket, "src/")
    config = json_files_config(
        tmp_path,
        source=f"s3://{s3_bucket}/src/",
        discovery="notifications",
        notification_queue_url=queue,
    )
    put_json_lines(f"s3://{s3_bucket}/src/", [{"id": 1, "updated": 1}])
    wait_for_messages(queue, 1)
    run_load_at(
        spark,
        config,
        job_name="n",
        run_id="jr_1",
        clock=FixedClock(after_last_write()),
        store=store,
    )
    put_json_lines(f"s3://{s3_bucket}/src/", [{"id": 2, "updated": 1}])
    wait_for_messages(queue, 1)

    with pytest.raises(Crash):
        run_load_at(
            spark,
            config,
            job_name="n",
            run_id="jr_2",
            clock=FixedClock(after_last_write()),
            store=store,
            hook=crash_at("publish.stage"),
        )
    assert _visible_and_in_flight(queue) == (1, 0)
    run_load_at(
        spark,
        config,
        job_name="n",
        run_id="jr_3",
        clock=FixedClock(time.time()),
        store=store,
        dry_run=True,
    )
    assert _visible_and_in_flight(queue) == (1, 0)

    run_load_at(
        spark, config, job_name="n", run_id="jr_4", clock=FixedClock(time.time()), store=store
    )

    assert sorted(r["id"] for r in visible_rows(tmp_path / "target", ["id"])) == [1, 2]
    assert _visible_and_in_flight(queue) == (0, 0)
