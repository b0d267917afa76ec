"""The incremental load over file sources: the central guarantee and its edge cases."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from glue_incremental.args import BookmarkOption
from glue_incremental.load.job import LoadConfig, SchemaError
from glue_incremental.watermarks import LeaseHeld, WatermarkConflict, Watermarks, create_table
from hypothesis import given
from hypothesis import strategies as st
from pyspark.testing import assertDataFrameEqual

from tests.harness import reference
from tests.harness.faults import Crash, crash_at, on_point
from tests.harness.file_jobs import COLUMNS, config_for, row
from tests.harness.histories import delivery_histories
from tests.harness.loads import (
    FixedClock,
    partition_file_snapshot,
    read_parquet,
    run_load_at,
    write_json_file,
)

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def full_refresh(spark, tmp: Path, deliveries=None):
    """The reference, in pure Python: the latest row per key over everything landed.

    ``deliveries`` ((order, row) pairs) overrides the delivery order, which is
    otherwise (modification time, file name) of the files under ``tmp/source``.
    """
    rows = deliveries if deliveries is not None else reference.source_rows(tmp / "source")
    latest = reference.latest_per_key(rows, ("id",), "updated")
    return spark.createDataFrame(
        [tuple(r[c] for c in COLUMNS) for r in latest],
        "id long, part string, updated long, value string",
    )


def run_orders(spark, config: LoadConfig, store, run_id: str, at: float, **options) -> dict:
    """Run the ``orders`` job as ``run_id`` with the clock at ``at``; returns its summary."""
    return run_load_at(
        spark,
        config,
        job_name="orders",
        run_id=run_id,
        clock=FixedClock(at),
        store=store,
        **options,
    )


def loaded_then_landed(spark, tmp: Path, store, first: list[dict], then: list[dict], config=None):
    """Arrange: ``first`` landed and loaded by the first run, then ``then`` landed 10 s after T0.

    Returns the config (``config_for(tmp)`` unless one is given).
    """
    config = config or config_for(tmp)
    write_json_file(tmp / "source", first, mtime=T0 - 100)
    run_orders(spark, config, store, "jr_1", T0)
    write_json_file(tmp / "source", then, mtime=T0 + 10)
    return config


def test_first_run_loads_everything_and_commits_the_bookmark(spark, tmp_path, store):
    config = config_for(tmp_path)
    write_json_file(
        tmp_path / "source", [row(1, "a", 10, "x"), row(2, "b", 11, "y")], mtime=T0 - 100
    )

    summary = run_orders(spark, config, store, "jr_1", T0)

    assert summary["records_read"] == 2
    assert summary["committed"] is True
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        spark.createDataFrame(
            [(1, "a", 10, "x"), (2, "b", 11, "y")],
            "id long, part string, updated long, value string",
        ),
    )
    state = store.get_watermark("orders")
    assert state["watermarks"]["cursor"] == 11
    assert state["watermarks"]["files"]["high_mark_ms"] == int((T0 - 100) * 1000)


def test_second_run_reads_only_new_files_and_rewrites_only_their_partitions(spark, tmp_path, store):
    config = loaded_then_landed(
        spark,
        tmp_path,
        store,
        first=[row(1, "a", 10, "x"), row(2, "b", 11, "y")],
        then=[row(1, "a", 20, "x2"), row(3, "a", 21, "z")],
    )
    untouched = {
        k: v
        for k, v in partition_file_snapshot(tmp_path / "target").items()
        if k.startswith("part=b")
    }

    summary = run_orders(spark, config, store, "jr_2", T0 + 60)

    assert summary["records_read"] == 2
    assert summary["files_read"] == 1
    assert [p["part"] for p in summary["partitions_written"]] == ["a"]
    after = partition_file_snapshot(tmp_path / "target")
    assert {k: v for k, v in after.items() if k.startswith("part=b")} == untouched
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        spark.createDataFrame(
            [(1, "a", 20, "x2"), (2, "b", 11, "y"), (3, "a", 21, "z")],
            "id long, part string, updated long, value string",
        ),
    )


def test_a_run_that_finds_nothing_publishes_zero_and_keeps_the_watermark(spark, tmp_path, store):
    from datetime import UTC, datetime, timedelta

    from glue_incremental import aws as aws_clients
    from glue_incremental.run import metrics

    config = config_for(tmp_path)
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0 - 100)
    run_orders(spark, config, store, "jr_1", T0)
    before = store.get_watermark("orders")

    summary = run_orders(spark, config, store, "jr_2", T0 + 60)

    assert summary["records_read"] == 0
    assert summary["metrics_published"] is True
    assert store.get_watermark("orders")["version"] == before["version"]
    now = datetime.now(UTC)
    datapoints = aws_clients.client("cloudwatch").get_metric_statistics(
        Namespace=metrics.NAMESPACE,
        MetricName=metrics.RECORDS_READ,
        Dimensions=[{"Name": metrics.DIMENSION, "Value": "orders"}],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=1),
        Period=60,
        Statistics=["Minimum", "Maximum", "SampleCount"],
    )["Datapoints"]
    assert sum(point["SampleCount"] for point in datapoints) == 2  # one per run, the empty one too
    assert min(point["Minimum"] for point in datapoints) == 0.0


def test_a_row_whose_partition_changes_ends_up_in_exactly_one_partition(spark, tmp_path, store):
    config = loaded_then_landed(
        spark,
        tmp_path,
        store,
        first=[row(1, "a", 10, "x"), row(2, "a", 10, "y")],
        then=[row(1, "b", 20, "moved")],
    )

    summary = run_orders(spark, config, store, "jr_2", T0 + 60)

    assert sorted(p["part"] for p in summary["partitions_written"]) == ["a", "b"]
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        spark.createDataFrame(
            [(1, "b", 20, "moved"), (2, "a", 10, "y")],
            "id long, part string, updated long, value string",
        ),
    )


def test_a_partition_whose_rows_all_moved_away_is_removed(spark, tmp_path, store):
    config = loaded_then_landed(
        spark, tmp_path, store, first=[row(1, "a", 10, "x")], then=[row(1, "b", 20, "moved")]
    )

    summary = run_orders(spark, config, store, "jr_2", T0 + 60)

    assert summary["partitions_removed"] == [{"part": "a"}]
    assert not (tmp_path / "target" / "part=a").exists()


def test_watermark_is_not_moved_when_the_write_fails(spark, tmp_path, store):
    config = loaded_then_landed(
        spark,
        tmp_path,
        store,
        first=[row(1, "a", 10, "x")],
        then=[row(2, "b", 20, "y"), row(3, "c", 21, "z")],
    )

    with pytest.raises(Crash):
        run_orders(spark, config, store, "jr_2", T0 + 60, hook=crash_at("publish.move", times=2))

    assert store.get_watermark("orders")["job_run_id"] == "jr_1"


@pytest.mark.parametrize("crash_point", ["between_partitions", "between_write_and_commit"])
def test_a_rerun_after_a_crash_has_no_duplicate_and_no_lost_row(
    spark, tmp_path, store, crash_point
):
    config = config_for(tmp_path)
    source = tmp_path / "source"
    clock = FixedClock(T0)
    write_json_file(source, [row(1, "a", 10, "x"), row(2, "b", 10, "y")], mtime=T0 - 100)
    run_load_at(spark, config, job_name="orders", run_id="jr_1", clock=clock, store=store)
    write_json_file(
        source, [row(1, "c", 20, "x2"), row(3, "b", 21, "z"), row(4, "d", 22, "w")], mtime=T0 + 10
    )

    hook = (
        crash_at("publish.move", times=2)
        if crash_point == "between_partitions"
        else crash_at("commit.before")
    )
    clock.now = T0 + 60
    with pytest.raises(Crash):
        run_load_at(
            spark, config, job_name="orders", run_id="jr_2", clock=clock, store=store, hook=hook
        )
    clock.now = T0 + 120
    run_load_at(spark, config, job_name="orders", run_id="jr_3", clock=clock, store=store)

    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        full_refresh(spark, tmp_path),
    )


def test_a_second_concurrent_run_stops_before_reading_and_names_the_holder(spark, tmp_path, store):
    config = config_for(tmp_path)
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0 - 100)
    holder = store.acquire_lease("orders", "jr_running", seconds=300)

    with pytest.raises(LeaseHeld, match="jr_running"):
        run_orders(spark, config, store, "jr_2", T0)

    assert not (tmp_path / "target").exists()
    holder.release()


def test_two_runs_racing_on_one_state_one_gets_a_conflict_and_the_target_stays_consistent(
    spark, tmp_path, store
):
    config = loaded_then_landed(
        spark, tmp_path, store, first=[row(1, "a", 10, "x")], then=[row(2, "a", 20, "y")]
    )
    other = Watermarks()

    def commit_from_another_run():
        # Another process commits while this run is between its write and its commit.
        other.get_watermark("orders")
        other.add_watermark(other.create_watermark_item("orders", "jr_other", cursor=99))

    with pytest.raises(WatermarkConflict):
        run_orders(
            spark,
            config,
            store,
            "jr_2",
            T0 + 60,
            hook=on_point("commit.before", lambda **_: commit_from_another_run()),
        )
    assert store.get_watermark("orders")["job_run_id"] == "jr_other"
    frame = read_parquet(spark, config.target_path, COLUMNS)
    assert frame.count() == frame.select("id").distinct().count()


def test_missing_watermark_column_fails_before_anything_is_written(spark, tmp_path, store):
    config = config_for(tmp_path, watermark_column="modified_at")
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0 - 100)

    with pytest.raises(SchemaError, match="modified_at"):
        run_orders(spark, config, store, "jr_1", T0)

    assert not (tmp_path / "target").exists()
    assert store.get_watermark("orders") is None


def test_null_watermarks_are_counted_and_loaded(spark, tmp_path, store):
    config = config_for(tmp_path)
    write_json_file(
        tmp_path / "source",
        [row(1, "a", 10, "x"), {"id": 2, "part": "a", "updated": None, "value": "n"}],
        mtime=T0 - 100,
    )

    summary = run_orders(spark, config, store, "jr_1", T0)

    assert summary["null_watermark_rows"] == 1
    assert read_parquet(spark, config.target_path, COLUMNS).count() == 2


def test_null_watermarks_fail_the_run_when_the_policy_says_so(spark, tmp_path, store):
    config = config_for(tmp_path, null_watermarks="fail")
    write_json_file(
        tmp_path / "source", [{"id": 2, "part": "a", "updated": None, "value": "n"}], mtime=T0 - 100
    )

    with pytest.raises(SchemaError, match="null 'updated'"):
        run_orders(spark, config, store, "jr_1", T0)

    assert not (tmp_path / "target").exists()


def test_a_dry_run_prints_the_plan_and_writes_nothing(spark, tmp_path, store, capsys):
    config = config_for(tmp_path)
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0 - 100)

    run_orders(spark, config, store, "jr_1", T0, dry_run=True)

    assert '"event": "dry_run"' in capsys.readouterr().out
    assert not (tmp_path / "target").exists()
    assert store.get_watermark("orders") is None


def test_rewind_then_rerun_equals_a_full_refresh(spark, tmp_path, store):
    config = config_for(tmp_path)
    source = tmp_path / "source"
    clock = FixedClock(T0)
    write_json_file(source, [row(1, "a", 10, "x")], mtime=T0 - 100)
    run_load_at(spark, config, job_name="orders", run_id="jr_1", clock=clock, store=store)
    write_json_file(source, [row(2, "b", 20, "y"), row(1, "a", 21, "x2")], mtime=T0 + 10)
    clock.now = T0 + 60
    run_load_at(spark, config, job_name="orders", run_id="jr_2", clock=clock, store=store)

    store.rewind("orders", "jr_1", why="reprocess with fixed transform")
    clock.now = T0 + 120
    summary = run_load_at(spark, config, job_name="orders", run_id="jr_3", clock=clock, store=store)

    assert summary["records_read"] == 2
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        full_refresh(spark, tmp_path),
    )


def test_pause_reads_state_but_never_commits(spark, tmp_path, store):
    config = loaded_then_landed(
        spark, tmp_path, store, first=[row(1, "a", 10, "x")], then=[row(2, "a", 20, "y")]
    )

    summary = run_orders(spark, config, store, "jr_2", T0 + 60, option=BookmarkOption.PAUSE)

    assert summary["records_read"] == 1
    assert summary["committed"] is False
    assert store.get_watermark("orders")["job_run_id"] == "jr_1"


# -- the central property ------------------------------------------------------------------------

KEYS = st.integers(min_value=1, max_value=6)
PARTS = st.sampled_from(["a", "b", "c"])


BATCHES = st.lists(
    st.tuples(KEYS, PARTS, st.integers(min_value=1, max_value=40), st.sampled_from("pqrs")),
    min_size=1,
    max_size=4,
    unique_by=lambda t: (t[0], t[2]),  # one file never ties with itself
).map(lambda rows: [row(k, p, u, f"{v}{u}") for k, p, u, v in rows])


# Late files carry a modification time before the last run, inside the band; equal
# timestamps across files are common.
@given(
    delivery_histories(
        BATCHES, [row(1, "a", 1, "first")], min_steps=2, max_steps=7, late_redeliveries=True
    )
)
def test_property_incremental_runs_equal_a_full_refresh(spark, tmp_path_factory, aws, history):
    create_table()
    store = Watermarks()
    tmp = tmp_path_factory.mktemp("history")
    config = config_for(tmp, lookback=timedelta(seconds=600))
    job = f"prop-{tmp.name}"  # each example its own state: a state names its target
    clock = FixedClock(T0)
    runs = 0
    deliveries = []  # ((the run that reads it, mtime, name), row): the tie rule's order
    for kind, batch, late in history:
        clock.now += 30
        if kind == "batch":
            # Late files are stamped before the previous run started, like a multipart upload.
            path = write_json_file(tmp / "source", batch, mtime=clock.now - (200 if late else 0))
            order = (runs + 1, path.stat().st_mtime_ns, path.name)
            deliveries += [(order, r) for r in batch]
        else:
            clock.now += 1
            runs += 1
            run_load_at(spark, config, job_name=job, run_id=f"jr_{runs}", clock=clock, store=store)

    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        full_refresh(spark, tmp, deliveries),
    )


@pytest.mark.parametrize(
    "overrides",
    [{"partition_moves": "ignore"}, {"primary_key": ("id", "part")}],
    ids=["moves_declared_impossible", "partition_column_in_the_key"],
)
def test_when_keys_cannot_move_only_the_affected_partitions_are_read(
    spark, tmp_path, store, overrides
):
    config = loaded_then_landed(
        spark,
        tmp_path,
        store,
        first=[row(1, "a", 10, "x"), row(2, "b", 10, "y")],
        then=[row(1, "a", 20, "x2")],
        config=config_for(tmp_path, **overrides),
    )
    # Reading partition b now would fail: the run must not touch it at all.
    (tmp_path / "target" / "part=b" / "part-corrupt.parquet").write_bytes(b"not parquet")

    summary = run_orders(spark, config, store, "jr_2", T0 + 60)

    assert summary["partitions_written"] == [{"part": "a"}]
    rows = spark.read.parquet("file://" + str(tmp_path / "target" / "part=a")).collect()
    assert [(r["id"], r["value"]) for r in rows] == [(1, "x2")]


def test_an_unknown_partition_moves_option_is_rejected(tmp_path):
    from glue_incremental.args import ArgumentError

    with pytest.raises(ArgumentError, match="--partition_moves 'sometimes'"):
        config_for(tmp_path, partition_moves="sometimes")
