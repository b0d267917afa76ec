"""The load job with an Iceberg target: one snapshot per run carrying its watermark, fenced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from glue_incremental.load.job import LoadConfig, run_load
from glue_incremental.run.context import IncrementalRun
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.watermarks import LeaseLost, Watermarks, create_table
from glue_incremental_tools import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.histories import delivery_histories
from tests.harness.iceberg import latest_by_key, requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, job_argv, run_load_at, write_json_file

pytestmark = [pytest.mark.spark, requires_iceberg]

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated", "value"]
QUICK = os.environ.get("HYPOTHESIS_PROFILE", "quick") != "deep"


def row(key: int, updated: int) -> dict:
    """A version of a key; its partition and value follow from (key, updated), so ties are equal rows."""
    return {
        "id": key,
        "part": "abc"[(key + updated) % 3],
        "updated": updated,
        "value": f"v{key}.{updated}",
    }


def config_for(tmp: Path, table: str, **overrides) -> LoadConfig:
    options = {
        "source": (tmp / "source").as_uri(),
        "source_format": "json",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "partition_by": ("part",),
        "target_format": "iceberg",
        "target_table": table,
        "lookback": __import__("datetime").timedelta(seconds=600),
    }
    options.update(overrides)
    return LoadConfig(**options)


def land(tmp: Path, clock: FixedClock, rows: list[dict]) -> None:
    """``rows`` land in ``tmp/source`` now; the clock moves on 30 s, to the next run."""
    write_json_file(tmp / "source", rows, mtime=clock.now)
    clock.now += 30


def our_snapshots(spark, config):
    return iceberg_writer.snapshots(spark, config.iceberg_target)


def test_each_run_is_one_snapshot_carrying_its_run_id_and_watermark(spark, tmp_path, store):
    config = config_for(tmp_path, unique_table())
    clock = FixedClock(T0)
    land(tmp_path, clock, [row(1, 1), row(2, 1)])
    run_load_at(spark, config, job_name="ice", run_id="jr_1", clock=clock, store=store)
    land(tmp_path, clock, [row(1, 5), row(3, 2)])
    summary = run_load_at(spark, config, job_name="ice", run_id="jr_2", clock=clock, store=store)

    snapshots = our_snapshots(spark, config)
    assert [snapshot.run_id for snapshot in snapshots] == ["jr_1", "jr_2"]
    assert snapshots[-1].snapshot_id == summary["iceberg_snapshot_id"]
    assert snapshots[-1].watermark == store.get_watermark("ice")["watermarks"]
    assert snapshots[-1].watermark["cursor"] == 5
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == latest_by_key(
        [row(1, 1), row(2, 1), row(1, 5), row(3, 2)], "id", "updated", COLUMNS
    )


def test_ties_follow_the_parquet_writers_rule_the_later_file_within_and_across_runs(
    spark, tmp_path, store
):
    """Equal watermarks: in one run the later-modified file wins; across runs too, against the
    stored row's kept delivery (``tests/integration/test_ties_on_both_targets.py``: an older one)."""
    config = config_for(tmp_path, unique_table("ties"))
    source, keys = tmp_path / "source", range(10)
    tie = [{"id": k, "part": "a", "updated": 5} for k in keys]
    write_json_file(source, [{**r, "value": "later"} for r in tie], mtime=T0 - 50, name="a.json")
    write_json_file(source, [{**r, "value": "earlier"} for r in tie], mtime=T0 - 90, name="z.json")
    run_load_at(spark, config, job_name="ties", run_id="jr_1", clock=FixedClock(T0), store=store)
    assert {r[3] for r in table_rows(spark, config.iceberg_target.name, COLUMNS)} == {"later"}

    write_json_file(source, [{**r, "value": "new"} for r in tie[:5]], mtime=T0 + 10)
    run_load_at(
        spark, config, job_name="ties", run_id="jr_2", clock=FixedClock(T0 + 60), store=store
    )

    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == sorted(
        (k, "a", 5, "new" if k < 5 else "later") for k in keys
    )


def test_a_run_that_reads_nothing_commits_no_snapshot(spark, tmp_path, store):
    config = config_for(tmp_path, unique_table())
    clock = FixedClock(T0)
    land(tmp_path, clock, [row(1, 1)])
    run_load_at(spark, config, job_name="idle", run_id="jr_1", clock=clock, store=store)
    clock.now += 2000
    run_load_at(spark, config, job_name="idle", run_id="jr_2", clock=clock, store=store)

    assert [snapshot.run_id for snapshot in our_snapshots(spark, config)] == ["jr_1"]


def test_a_zombie_run_whose_lease_was_taken_over_commits_no_snapshot(spark, tmp_path, store):
    config = config_for(tmp_path, unique_table())
    clock = FixedClock(T0)
    land(tmp_path, clock, [row(1, 1)])
    zombie = IncrementalRun(
        spark=spark, job_name="zombie", run_id="jr_old", store=store, lease_seconds=1, clock=clock
    )

    with pytest.raises(LeaseLost), zombie:
        zombie.lease.stop_heartbeat()
        time.sleep(1.2)
        Watermarks().acquire_lease("zombie", "jr_new", seconds=60)
        run_load(zombie, config)

    assert our_snapshots(spark, config) == []
    assert store.get_watermark("zombie") is None


def test_a_commit_is_refused_when_the_table_moved_since_the_run_started(spark, tmp_path, store):
    config = config_for(tmp_path, unique_table())
    clock = FixedClock(T0)
    land(tmp_path, clock, [row(1, 1)])
    run_load_at(spark, config, job_name="moved", run_id="jr_1", clock=clock, store=store)
    started_from = iceberg_writer.current_snapshot(spark, config.iceberg_target)
    land(tmp_path, clock, [row(2, 2)])
    run_load_at(spark, config, job_name="moved", run_id="jr_2", clock=clock, store=store)

    stale = spark.createDataFrame(
        [(9, "a", 9, "stale")], "id long, part string, updated long, value string"
    )
    with pytest.raises(iceberg_writer.SnapshotMoved, match=str(started_from.snapshot_id)):
        iceberg_writer.publish_upsert(
            spark,
            config.iceberg_target,
            stale,
            primary_key=("id",),
            partition_by=("part",),
            order_by="updated",
            replace_all=False,
            started_from=started_from.snapshot_id,
            properties={},
            guard=lambda: None,
        )
    assert [snapshot.run_id for snapshot in our_snapshots(spark, config)] == ["jr_1", "jr_2"]


def test_a_reader_during_runs_only_ever_sees_complete_runs(spark, tmp_path, store):
    config = config_for(tmp_path, unique_table())
    name = config.iceberg_target.name
    clock = FixedClock(T0)
    seen: set[int] = set()
    stop = threading.Event()

    def read_in_a_loop() -> None:
        while not stop.is_set():
            if iceberg_writer.table_exists(spark, config.iceberg_target):
                seen.add(spark.table(name).count())

    reader = threading.Thread(target=read_in_a_loop, daemon=True)
    reader.start()
    try:
        for run in range(1, 4):
            # Each run updates every earlier key and adds three: a partial publish shows other counts.
            keys = range(1, 3 * run + 1)
            land(tmp_path, clock, [row(key, run) for key in keys])
            run_load_at(
                spark, config, job_name="read", run_id=f"jr_{run}", clock=clock, store=store
            )
    finally:
        stop.set()
        reader.join(timeout=60)

    assert seen, "the reader never read the table"
    assert seen <= {0, 3, 6, 9}


# -- the central property -------------------------------------------------------------------------


BATCHES = st.lists(st.tuples(st.integers(1, 5), st.integers(1, 30)), min_size=1, max_size=4).map(
    lambda pairs: [row(key, updated) for key, updated in pairs]
)


@settings(max_examples=4 if QUICK else 60)
@given(delivery_histories(BATCHES, [row(1, 1)], min_steps=1, max_steps=5))
def test_property_iceberg_target_equals_a_full_refresh(spark, tmp_path_factory, aws, history):
    create_table()
    store = Watermarks()
    tmp = tmp_path_factory.mktemp("ice-history")
    config = config_for(tmp, unique_table("prop"))
    job = f"prop-{tmp.name}"  # each example its own state: a state names its target
    clock = FixedClock(T0)
    runs, delivered = 0, []
    for kind, batch, late in history:
        clock.now += 30
        if kind == "batch":
            write_json_file(tmp / "source", batch, mtime=clock.now - (200 if late else 0))
            delivered.extend(batch)
        else:
            clock.now += 1
            runs += 1
            run_load_at(spark, config, job_name=job, run_id=f"jr_{runs}", clock=clock, store=store)

    expected = latest_by_key(delivered, "id", "updated", COLUMNS)
    actual = table_rows(spark, config.iceberg_target.name, COLUMNS) if expected else []
    assert actual == expected
    snapshots = our_snapshots(spark, config)
    assert len({snapshot.run_id for snapshot in snapshots}) == len(snapshots)
    if snapshots:
        assert snapshots[-1].watermark["cursor"] == store.get_watermark(job)["watermarks"]["cursor"]


# -- SIGKILL of the real script ---------------------------------------------------------------------


def run_script(
    tmp: Path, table: str, *, crash_at: str | None = None, kill_after: float | None = None
):
    """The real Glue script as a process; SIGKILLed at a named step or after a delay."""
    command = [
        sys.executable,
        *job_argv(
            str(ROOT / "glue_scripts" / "incremental_load.py"),
            JOB_NAME="killed",
            source=(tmp / "source").as_uri(),
            source_format="json",
            watermark_column="updated",
            primary_key="id",
            partition_by="part",
            target_format="iceberg",
            target_table=table,
            lease_seconds="2",
            lookback="10 minutes",
        ),
    ]
    env = {
        **os.environ,
        "GLUE_INCREMENTAL_SPARK_MASTER": "local[1]",
        # killpoint/sitecustomize.py kills the script at the named runtime.hooks point.
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "tests" / "harness" / "killpoint"), str(ROOT / "lib"), str(ROOT)]
        ),
        "GLUE_INCREMENTAL_TEST_KILL_AT_POINT": crash_at or "",
    }
    env.pop("GLUE_INCREMENTAL_TEST_KILL_AT_STEP", None)
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _out, err = process.communicate(timeout=kill_after or 300)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        _out, err = process.communicate()
    return process.returncode, err


@pytest.mark.parametrize(
    "crash_at",
    # iceberg.commit: just before the snapshot; commit.before: just before the DynamoDB commit.
    [
        "iceberg.commit",
        "commit.before",
        pytest.param(12.0, marks=pytest.mark.skipif(QUICK, reason="make test-deep only")),
    ],
    ids=["before_the_iceberg_commit", "between_the_iceberg_and_the_dynamodb_commit", "timed"],
)
def test_sigkill_at_any_moment_then_rerun_equals_a_full_refresh(spark, tmp_path, store, crash_at):
    """Runs before and after the killed one are in-process (same job, same table): one JVM per case."""
    table = unique_table("killed")
    config = config_for(tmp_path, table)
    batches = [[row(1, 1), row(2, 1)], [row(1, 4), row(3, 2)]]
    write_json_file(tmp_path / "source", batches[0], mtime=time.time() - 30)
    run_load_at(spark, config, job_name="killed", run_id="jr_1", clock=time.time, store=store)
    write_json_file(tmp_path / "source", batches[1], mtime=time.time() - 10)

    named = isinstance(crash_at, str)
    code, err = run_script(
        tmp_path,
        table,
        crash_at=crash_at if named else None,
        kill_after=None if named else crash_at,
    )
    assert code == -signal.SIGKILL or not named, err[-2000:]
    time.sleep(2.5)  # the killed run's lease expires
    run_load_at(spark, config, job_name="killed", run_id="jr_3", clock=time.time, store=store)

    expected = latest_by_key([r for batch in batches for r in batch], "id", "updated", COLUMNS)
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == expected
    snapshots = our_snapshots(spark, config)
    state = store.get_watermark("killed")
    assert snapshots[-1].watermark["cursor"] == state["watermarks"]["cursor"] == 4
    assert len({snapshot.run_id for snapshot in snapshots}) == len(snapshots) == 2
    if crash_at == "commit.before":
        history = list(store.iter_history("killed"))
        assert any("rolled_forward_from_snapshot" in entry for entry in history)
        assert snapshots[-1].run_id != "jr_3"  # the rerun found nothing left to do


# -- rewind restores output -------------------------------------------------------------------------


def test_rewind_rolls_the_table_back_to_that_runs_snapshot_and_a_rerun_equals_a_full_refresh(
    spark, tmp_path, store, capsys
):
    config = config_for(tmp_path, unique_table("rewind"))
    clock = FixedClock(T0)
    delivered = []
    for run in range(1, 4):
        batch = [row(run, run), row(1, run * 10)]
        delivered += batch
        land(tmp_path, clock, batch)
        run_load_at(spark, config, job_name="rw", run_id=f"jr_{run}", clock=clock, store=store)
    first = next(s for s in our_snapshots(spark, config) if s.run_id == "jr_1")

    assert cli.main(["watermarks", "rewind", "rw", "jr_1", "--why", "reprocess"]) == 0

    assert (
        iceberg_writer.current_snapshot(spark, config.iceberg_target).snapshot_id
        == first.snapshot_id
    )
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == latest_by_key(
        delivered[:2], "id", "updated", COLUMNS
    )
    latest = store.history("rw", limit=1).items[0]
    assert latest["kind"] == "rewind" and latest["iceberg_snapshot"] == str(first.snapshot_id)

    clock.now += 30
    run_load_at(spark, config, job_name="rw", run_id="jr_4", clock=clock, store=store)
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == latest_by_key(
        delivered, "id", "updated", COLUMNS
    )


def test_rewind_with_keep_output_leaves_the_table(spark, tmp_path, store, capsys):
    config = config_for(tmp_path, unique_table("keep"))
    clock = FixedClock(T0)
    for run in range(1, 3):
        land(tmp_path, clock, [row(run, run)])
        run_load_at(spark, config, job_name="keep", run_id=f"jr_{run}", clock=clock, store=store)
    before = iceberg_writer.current_snapshot(spark, config.iceberg_target)

    assert cli.main(["watermarks", "rewind", "keep", "jr_1", "--why", "x", "--keep-output"]) == 0

    assert iceberg_writer.current_snapshot(spark, config.iceberg_target) == before
    assert store.history("keep", limit=1).items[0]["output"] == "kept"


def test_reset_keeps_the_table_until_the_full_reload_replaces_it_in_one_snapshot(
    spark, tmp_path, store, capsys
):
    config = config_for(tmp_path, unique_table("reset"))
    clock = FixedClock(T0)
    delivered = [row(1, 1), row(2, 2)]
    land(tmp_path, clock, delivered)
    run_load_at(spark, config, job_name="reset", run_id="jr_1", clock=clock, store=store)

    assert cli.main(["watermarks", "reset", "reset", "--why", "full reload"]) == 0
    assert "until the next run" in store.history("reset", limit=1).items[0]["output"]
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == latest_by_key(
        delivered, "id", "updated", COLUMNS
    )

    clock.now += 30
    run_load_at(spark, config, job_name="reset", run_id="jr_2", clock=clock, store=store)
    assert [s.run_id for s in our_snapshots(spark, config)] == ["jr_1", "jr_2"]
    assert table_rows(spark, config.iceberg_target.name, COLUMNS) == latest_by_key(
        delivered, "id", "updated", COLUMNS
    )


# -- main's load behaviour holds for an Iceberg target ----------------------------------------------


@pytest.mark.postgres
def test_jdbc_into_iceberg_counts_new_versions_against_the_table_and_clamps_future_watermarks(
    spark, postgres, tmp_path, store
):
    t0 = datetime(2024, 5, 1, 12, tzinfo=UTC)
    with orders_table(postgres, prefix="ice_pg") as source:
        config = jdbc_config(
            postgres,
            source,
            tmp_path,
            target_path="",
            target_format="iceberg",
            target_table=unique_table("pg"),
        )

        def run_at(run_id: str, at: datetime) -> dict:
            clock = FixedClock(at.timestamp())
            return run_load_at(
                spark, config, job_name="icepg", run_id=run_id, clock=clock, store=store
            )

        upsert(
            postgres,
            source,
            [
                (1, "a", t0, "now"),
                (2, "a", datetime(2099, 1, 1, tzinfo=UTC), "from the future"),
                (3, "b", t0 - timedelta(minutes=10), "in the lookback"),
            ],
        )
        first = run_at("jr_1", t0)
        quiet = run_at("jr_2", t0 + timedelta(minutes=1))
        upsert(postgres, source, [(3, "b", t0 + timedelta(minutes=2), "changed")])
        changed = run_at("jr_3", t0 + timedelta(minutes=3))

    assert (first["records_new"], first["future_watermark_rows"]) == (3, 1)
    assert (quiet["records_read"], quiet["records_new"]) == (3, 0)
    assert (changed["records_new"], changed["future_watermark_rows"]) == (1, 1)
    # The 2099 row never moved the cursor, in DynamoDB nor in the snapshot.
    cursor = store.get_watermark("icepg")["watermarks"]["cursor"]
    assert cursor == t0 + timedelta(minutes=2)
    assert (
        iceberg_writer.current_snapshot(spark, config.iceberg_target).watermark["cursor"] == cursor
    )
    assert table_rows(spark, config.iceberg_target.name, ["id", "value"]) == [
        (1, "now"),
        (2, "from the future"),
        (3, "changed"),
    ]
