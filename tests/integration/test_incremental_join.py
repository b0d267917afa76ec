"""The incremental join job: after every run the output equals a full recompute.

Sides are JSON-lines files in ``date=<p>`` directories whose modification
times the tests set (``os.utime``), and runs start at chosen clock times, so
which files a run sees is exact. The reference is a pure-Python join of
everything landed so far.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.args import ArgumentError, BookmarkOption
from glue_incremental.join import (
    JoinInputError,
    main,
    run_join,
)
from glue_incremental.partitions.predicates import (
    InvalidPartitionValue,
    MissingPartitionColumn,
    scanned_files,
)
from glue_incremental.run.context import BookmarkControl, IncrementalRun
from glue_incremental.watermarks import WatermarkItemTooLarge, Watermarks
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import joins, reference
from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_at, crash_points, on_point
from tests.harness.joins import (
    HIVE_NULL,
    T0,
    assert_output,
    config_for,
    land,
    left_row,
    read_output,
    right_row,
    run_at,
)
from tests.harness.loads import FixedClock, partition_file_snapshot, write_json_file
from tests.harness.targets import partition_values_as_strings

pytestmark = pytest.mark.spark


# --------------------------------------------------------------------------- the property

_batch = st.tuples(
    st.sampled_from(["left", "right"]),
    st.sampled_from(["2024-01-01", "2024-01-02", "2024-01-03", None]),
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 9)), min_size=1, max_size=3),
)
_history = st.lists(st.lists(_batch, max_size=3), min_size=1, max_size=4)


# Each example is up to four joins and their checks (58 s for six on a loaded 2-core machine):
# make test draws three, make test-deep its profile's 200.
@settings(max_examples=settings.default.max_examples if IN_DEEP_RUN else 3)
@given(
    history=_history,
    join_type=st.sampled_from(["inner", "left", "full"]),
    crash_at=st.none() | st.integers(0, 3),
)
def test_property_every_run_equals_a_full_recompute(spark, store, history, join_type, crash_at):
    """Random arrival orders: either side first, partitions touched again, late
    partitions, empty runs, and optionally a crash between write and commit."""
    tmp = Path(tempfile.mkdtemp(prefix="join-property-"))
    config = config_for(tmp, join_type)
    job = f"join-{uuid.uuid4().hex[:8]}"
    landed: dict[str, list[tuple]] = {"left": [], "right": []}
    for number, batches in enumerate(history):
        base = T0 + number * 100
        for offset, (side, partition, rows) in enumerate(batches):
            if side == "left":
                payload = [left_row(k, f"l{v}", v) for k, v in rows]
                landed["left"] += [(partition, k, f"l{v}", v) for k, v in rows]
            else:
                payload = [right_row(k, f"r{v}", f"x{v}") for k, v in rows]
                landed["right"] += [(partition, k, f"r{v}", f"x{v}") for k, v in rows]
            land(tmp / side, partition, payload, base + offset)
        now = base + 50
        if crash_at == number:
            # Only a run still waiting for a side's first data stops before publishing.
            publishes = bool(landed["left"]) and bool(landed["right"])
            with pytest.raises(Crash) if publishes else contextlib.nullcontext():
                run_at(
                    spark,
                    config,
                    store,
                    job_name=job,
                    run_id=f"jr_{number}_crashed",
                    now=now,
                    hook=CrashAtStep(1, prefix="join.published"),  # between write and commit
                )
            now += 1
        run_at(spark, config, store, job_name=job, run_id=f"jr_{number}", now=now)
        assert_output(spark, config, landed["left"], landed["right"], join_type)


# --------------------------------------------------------------------------- scenarios


def test_only_affected_partitions_are_read_and_rewritten(spark, tmp_path, store):
    config = config_for(tmp_path, "left")
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        land(tmp_path / "left", day, [left_row(1, f"l-{day}", 1)], T0 - 100)
        land(tmp_path / "right", day, [right_row(1, f"r-{day}", "a")], T0 - 100)
    run_at(spark, config, store, job_name="sales", run_id="jr_1", now=T0)
    before = partition_file_snapshot(tmp_path / "target")

    land(tmp_path / "right", "2024-01-02", [right_row(1, "late", "b")], T0 + 10)
    seen: dict[str, Any] = {}
    summary = run_at(
        spark,
        config,
        store,
        job_name="sales",
        run_id="jr_2",
        now=T0 + 60,
        hook=on_point("join.joined", lambda **details: seen.update(details)),
    )

    assert summary["affected_partitions"] == 1
    assert [p["date"] for p in summary["partitions_written"]] == ["2024-01-02"]
    after = partition_file_snapshot(tmp_path / "target")
    for name, stamp in before.items():
        if not name.startswith("date=2024-01-02"):
            assert after[name] == stamp, f"{name} was rewritten"
    # Both sides' scans were pruned to the affected partition: in the plan and in files read.
    plan = seen["joined"]._jdf.queryExecution().executedPlan().toString()
    assert plan.count("PartitionFilters: [isnotnull(date") == 2
    assert "(date#" in plan and "= 2024-01-02)" in plan
    for side in ("left", "right"):
        seen[side].collect()
        (scan,) = scanned_files(seen[side])
        assert scan.partitions == 1
        assert {f.split("/")[-2] for f in scan.files} == {"date=2024-01-02"}
        assert len(scan.files) == (2 if side == "right" else 1)
    left = [(d, 1, f"l-{d}", 1) for d in ("2024-01-01", "2024-01-02", "2024-01-03")]
    right = [(d, 1, f"r-{d}", "a") for d in ("2024-01-01", "2024-01-02", "2024-01-03")]
    right.append(("2024-01-02", 1, "late", "b"))
    assert_output(spark, config, left, right, "left")


def test_both_slots_commit_together_and_an_unchanged_run_commits_nothing(spark, tmp_path, store):
    config = config_for(tmp_path)
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)
    run_at(spark, config, store, job_name="pair", run_id="jr_1", now=T0)
    left, right = store.get_watermark("pair", "left"), store.get_watermark("pair", "right")
    assert left["job_run_id"] == right["job_run_id"] == "jr_1"
    assert left["watermarks"]["files"]["high_mark_ms"] == int((T0 - 100) * 1000)
    assert left["watermarks"]["published_at_ms"] == right["watermarks"]["published_at_ms"]

    summary = run_at(spark, config, store, job_name="pair", run_id="jr_2", now=T0 + 60)
    assert summary["records_read"] == 0 and summary["committed"] is False
    assert store.get_watermark("pair", "left")["version"] == left["version"]


def test_a_conflict_on_either_slot_aborts_the_commit(spark, tmp_path, store):
    config = config_for(tmp_path)
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)

    def meddle() -> None:  # another writer moves only the right slot meanwhile
        Watermarks().set("pair", "right", who="test", why="conflict", files=None)

    from glue_incremental.watermarks import WatermarkConflict

    with pytest.raises(WatermarkConflict):
        run_at(
            spark,
            config,
            store,
            job_name="pair",
            run_id="jr_1",
            now=T0,
            hook=on_point("commit.before", lambda **_: meddle()),
        )
    assert store.get_watermark("pair", "left") is None


def test_waits_until_both_sides_have_data_then_catches_up(spark, tmp_path, store):
    config = config_for(tmp_path, "left")
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    summary = run_at(spark, config, store, job_name="wait", run_id="jr_1", now=T0)
    assert summary["waiting_for"] == ["right"] and summary["committed"] is False
    assert read_output(spark, config.target_path) is None

    land(tmp_path / "right", "2024-01-02", [right_row(2, "b", "x")], T0 + 10)
    run_at(spark, config, store, job_name="wait", run_id="jr_2", now=T0 + 60)
    assert_output(
        spark,
        config,
        [("2024-01-01", 1, "a", 1)],
        [("2024-01-02", 2, "b", "x")],
        "left",
    )


def test_a_declared_schema_lets_one_side_run_alone(spark, tmp_path, store):
    config = config_for(
        tmp_path,
        "left",
        right_schema="id long, value string, label string, date string",
    )
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    run_at(spark, config, store, job_name="alone", run_id="jr_1", now=T0)
    rows = read_output(spark, config.target_path)
    assert [tuple(r) for r in rows] == [("2024-01-01", 1, "a", 1, None, None)]


def test_a_full_join_drops_output_partitions_that_end_up_empty(spark, tmp_path, store):
    """An inner join whose partition loses its match is removed, not left stale."""
    config = config_for(tmp_path, "inner")
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)
    run_at(spark, config, store, job_name="inner", run_id="jr_1", now=T0)
    assert len(read_output(spark, config.target_path)) == 1
    # new left rows for another partition, right nothing: output partition absent
    land(tmp_path / "left", "2024-01-02", [left_row(2, "c", 2)], T0 + 10)
    summary = run_at(spark, config, store, job_name="inner", run_id="jr_2", now=T0 + 60)
    assert summary["records_written"] == 0
    assert not (tmp_path / "target" / "date=2024-01-02").exists()


def test_null_partitions_stay_apart_from_the_others(spark, tmp_path, store):
    """Spark types a partition column whose values are all null as ``void``: a schema
    inferred from the null partition alone must not null out the other partitions."""
    config = config_for(tmp_path, "full")
    land(tmp_path / "left", None, [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", None, [right_row(1, "b", "x")], T0 - 100)
    run_at(spark, config, store, job_name="nulls", run_id="jr_1", now=T0)
    assert (tmp_path / "target" / f"date={HIVE_NULL}").is_dir()

    land(tmp_path / "right", "2024-01-01", [right_row(1, "c", "y")], T0 + 10)
    run_at(spark, config, store, job_name="nulls", run_id="jr_2", now=T0 + 60)
    land(tmp_path / "left", None, [left_row(1, "d", 2)], T0 + 110)
    run_at(spark, config, store, job_name="nulls", run_id="jr_3", now=T0 + 160)
    assert_output(
        spark,
        config,
        [(None, 1, "a", 1), (None, 1, "d", 2)],
        [(None, 1, "b", "x"), ("2024-01-01", 1, "c", "y")],
        "full",
    )


def test_a_crash_mid_publish_is_repaired_by_the_rerun(spark, tmp_path, store):
    config = config_for(tmp_path, "full")
    left = [(d, 1, f"l-{d}", 1) for d in ("2024-01-01", "2024-01-02")]
    right = [(d, 1, f"r-{d}", "a") for d in ("2024-01-01", "2024-01-02")]
    for d, i, v, a in left:
        land(tmp_path / "left", d, [left_row(i, v, a)], T0 - 100)
    for d, i, v, lb in right:
        land(tmp_path / "right", d, [right_row(i, v, lb)], T0 - 100)

    with pytest.raises(Crash):
        run_at(
            spark,
            config,
            store,
            job_name="midway",
            run_id="jr_1",
            now=T0,
            hook=crash_at("publish.move", times=2),
        )
    assert store.get_watermark("midway", "left") is None
    run_at(spark, config, store, job_name="midway", run_id="jr_2", now=T0 + 1)
    assert_output(spark, config, left, right, "full")


def test_csv_sides_and_a_dry_run(spark, tmp_path, store):
    config = config_for(tmp_path, "inner", left_format="csv", right_format="csv")
    for side, header, line in (
        ("left", "id,value,amount", "1,a,5"),
        ("right", "id,value,label", "1,b,x"),
    ):
        directory = tmp_path / side / "date=2024-01-01"
        directory.mkdir(parents=True)
        (directory / "part.csv").write_text(f"{header}\n{line}\n")
        os.utime(directory / "part.csv", (T0 - 100, T0 - 100))
    dry = IncrementalRun(
        spark=spark,
        job_name="csv",
        run_id="jr_dry",
        store=store,
        clock=FixedClock(T0),
        dry_run=True,
        publish_metrics=False,
    )
    with dry:
        run_join(dry, config)
    assert dry.summary["plan"]["affected_partitions"] == 1
    assert read_output(spark, config.target_path) is None
    assert store.get_watermark("csv", "left") is None

    run_at(spark, config, store, job_name="csv", run_id="jr_1", now=T0)
    with partition_values_as_strings(spark):
        rows = spark.read.parquet(config.target_path).collect()
    assert [r.asDict() for r in rows] == [
        {
            "id": "1",
            "left_value": "a",
            "amount": "5",
            "right_value": "b",
            "label": "x",
            "date": "2024-01-01",
        }
    ]


def test_bookmarks_disabled_recomputes_everything_and_commits_nothing(spark, tmp_path, store):
    config = config_for(tmp_path, "left")
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)
    run_at(spark, config, store, job_name="full", run_id="jr_1", now=T0)
    stale = tmp_path / "target" / "date=2023-12-31"  # output no side produces any more
    shutil.copytree(tmp_path / "target" / "date=2024-01-01", stale)
    before = store.get_watermark("full", "left")["version"]

    summary = run_at(
        spark,
        config,
        store,
        job_name="full",
        run_id="jr_2",
        now=T0 + 60,
        option=BookmarkOption.DISABLE,
    )
    assert summary["records_read"] == 2 and summary["committed"] is False
    assert not stale.exists()  # the whole target was replaced
    assert store.get_watermark("full", "left")["version"] == before
    assert_output(spark, config, [("2024-01-01", 1, "a", 1)], [("2024-01-01", 1, "b", "x")], "left")


# --------------------------------------------------------------------------- bad inputs


def _nothing_written(tmp: Path, store: Watermarks, job: str) -> None:
    target = tmp / "target"
    assert not target.exists() or not [p for p in target.rglob("*.parquet")]
    assert store.get_watermark(job, "left") is None and store.get_watermark(job, "right") is None


BAD_RIGHT_SIDES = [
    pytest.param(
        {},
        "date=2024-01-01",
        {"key": 1, "value": "b", "label": "x"},
        JoinInputError,
        r"^right side, column 'id': join key is missing",
        id="a_join_key_missing_on_one_side",
    ),
    pytest.param(
        {},
        "day=2024-01-01",
        right_row(1, "b", "x"),
        MissingPartitionColumn,
        r"^right: partition column 'date' is missing",
        id="mismatched_partition_columns",
    ),
    pytest.param(
        {},
        "date=2024-01-01",
        {"id": "one", "value": "b", "label": "x"},
        JoinInputError,
        r"right side, column 'id': join key type string",
        id="mismatched_key_types",
    ),
    pytest.param(
        {"partition_types": {"date": "date"}},
        "date=2024-13-45",
        right_row(1, "b", "x"),
        InvalidPartitionValue,
        r"'2024-13-45' for column 'date' of type date",
        id="an_invalid_partition_value_for_its_type",
    ),
]


@pytest.mark.parametrize(("overrides", "directory", "right", "error", "message"), BAD_RIGHT_SIDES)
def test_a_bad_right_side_fails_before_writing(
    spark, tmp_path, store, overrides, directory, right, error, message
):
    config = config_for(tmp_path, **overrides)
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    write_json_file(tmp_path / "right" / directory, [right], mtime=T0 - 100)

    with pytest.raises(error, match=message):
        run_at(spark, config, store, job_name="bad", run_id="jr_1", now=T0)

    _nothing_written(tmp_path, store, "bad")


# --------------------------------------------------------------------------- the script


def test_the_script_entry_point_parses_arguments_and_runs(spark, tmp_path, store):
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)
    argv = [
        "incremental_join.py",
        "--JOB_NAME",
        "script_join",
        "--left_path",
        (tmp_path / "left").as_uri(),
        "--right_path",
        (tmp_path / "right").as_uri(),
        "--left_format",
        "json",
        "--right_format",
        "json",
        "--join_keys",
        "id",
        "--join_type",
        "full",
        "--partition_by",
        "date",
        "--target_path",
        (tmp_path / "target").as_uri(),
        "--watermarks_table",
        "glue-watermarks",
    ]
    summary = main(argv, spark=spark)
    assert summary["status"] == "SUCCEEDED" and summary["committed"] is True
    assert [tuple(r) for r in read_output(spark, (tmp_path / "target").as_uri())] == [
        ("2024-01-01", 1, "a", 1, "b", "x")
    ]


@pytest.mark.parametrize(
    ("extra", "name", "fragment"),
    [
        (["--join_type", "outer"], "join_type", "join_type must be one of inner, left, full"),
        (["--left_format", "avro"], "left_format", "--left_format 'avro' is not one of"),
        (["--upstream_jobs", "orders_load"], "upstream_jobs", "entries are side=job"),
        (["--partition_types", "date:timestamp"], "partition_types", "type must be one of"),
        (["--partition_types", "hour:int"], "partition_types", "not in --partition_by"),
    ],
)
def test_bad_arguments_are_rejected_by_name(spark, extra, name, fragment):
    argv = [
        "incremental_join.py",
        "--JOB_NAME",
        "j",
        "--left_path",
        "file:///l",
        "--right_path",
        "file:///r",
        "--join_keys",
        "id",
        "--partition_by",
        "date",
        "--target_path",
        "file:///t",
        *extra,
    ]
    with pytest.raises(ArgumentError) as raised:
        main(argv, spark=spark)
    assert raised.value.name == name and fragment in str(raised.value)


# On S3 the join's properties run in test_s3.py; its publish is the writer's, swept there on s3a.
@pytest.mark.parametrize("filesystem", ["local", "copy_then_delete"], indirect=True)
def test_a_crash_at_every_step_of_the_output_publish_then_a_rerun_equals_a_full_recompute(
    spark, tmp_path, store, filesystem
):
    """The join's output uses the writer's publish protocol: crash at each step, then rerun."""
    config = config_for(tmp_path, "left")
    left = [("2024-01-01", 1, "l1", 1), ("2024-01-02", 2, "l2", 2)]
    right = [("2024-01-01", 1, "r1", "a")]
    for d, i, v, a in left:
        land(tmp_path / "left", d, [left_row(i, v, a)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "r1", "a")], T0 - 100)
    run_at(spark, config, store, job_name="sweep", run_id="jr_1", now=T0)
    shutil.copytree(tmp_path / "target", tmp_path / "baseline")
    land(tmp_path / "right", "2024-01-02", [right_row(2, "r2", "b")], T0 + 10)
    land(tmp_path / "left", "2024-01-01", [left_row(3, "l3", 3)], T0 + 10)
    counter = StepCounter()
    run_at(spark, config, store, job_name="sweep", run_id="jr_count", now=T0 + 60, hook=counter)
    steps = [name for name, _ in counter.steps]
    assert "publish.move" in steps and "publish.delete" in steps

    for k in crash_points(steps):
        shutil.rmtree(tmp_path / "target")
        shutil.copytree(tmp_path / "baseline", tmp_path / "target")
        for slot in ("left", "right"):
            store.rewind("sweep", "jr_1", slot, why="next crash point")
        with pytest.raises(Crash):
            run_at(
                spark,
                config,
                store,
                job_name="sweep",
                run_id=f"jr_c{k}",
                now=T0 + 60,
                hook=CrashAtStep(k),
            )
        new_input = land(tmp_path / "left", "2024-01-03", [left_row(4, "l4", 4)], T0 + 70)
        run_at(spark, config, store, job_name="sweep", run_id=f"jr_r{k}", now=T0 + 120)
        new_input.unlink()
        assert_output(
            spark,
            config,
            [*left, ("2024-01-01", 3, "l3", 3), ("2024-01-03", 4, "l4", 4)],
            [*right, ("2024-01-02", 2, "r2", "b")],
            "left",
        )


def join_output(target, columns) -> list[tuple]:
    rows = reference.visible_rows(target, columns)
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


def join_dry_run(spark, config, store, job_name: str, now: float) -> dict:
    run = IncrementalRun(
        spark=spark,
        job_name=job_name,
        run_id=f"dry_{now}",
        store=store,
        bookmark=BookmarkControl(BookmarkOption.ENABLE),
        clock=FixedClock(now),
        publish_metrics=False,
        dry_run=True,
    )
    with run:
        run_join(run, config)
    return run.summary


def test_a_side_adding_a_column_then_an_older_partition_recomputed_keeps_every_row(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "left")
    left, right = tmp_path / "left", tmp_path / "right"
    joins.land(left, "d1", [joins.left_row(1, "a", 1)], joins.T0 - 300)
    joins.land(right, "d1", [joins.right_row(1, "r", "x")], joins.T0 - 300)
    joins.run_at(spark, config, store, job_name="evolves", run_id="jr_1", now=joins.T0)
    joins.land(left, "d2", [joins.left_row(2, "b", 2)], joins.T0 + 10)
    joins.land(right, "d2", [{**joins.right_row(2, "r", "y"), "note": "n"}], joins.T0 + 10)
    joins.run_at(spark, config, store, job_name="evolves", run_id="jr_2", now=joins.T0 + 60)
    joins.land(left, "d1", [joins.left_row(3, "c", 3)], joins.T0 + 70)

    summary = joins.run_at(
        spark, config, store, job_name="evolves", run_id="jr_3", now=joins.T0 + 120
    )

    assert summary["affected_partitions"] == 1
    columns = ["date", "id", "amount", "label", "note"]
    assert join_output(tmp_path / "target", columns) == [
        ("d1", 1, 1, "x", None),
        ("d1", 3, 3, None, None),
        ("d2", 2, 2, "y", "n"),
    ]


def test_a_side_appearing_after_two_runs_with_dry_runs_and_a_crash_at_published_between(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "full")
    name, t0 = "appears", joins.T0
    left_root, right_root = tmp_path / "left", tmp_path / "right"
    left = [("d1", 1, "a", 1)]
    joins.land(left_root, "d1", [joins.left_row(1, "a", 1)], t0 - 100)
    assert not joins.run_at(spark, config, store, job_name=name, run_id="jr_1", now=t0)["committed"]
    join_dry_run(spark, config, store, name, t0 + 30)
    left.append(("d2", 2, "b", 2))
    joins.land(left_root, "d2", [joins.left_row(2, "b", 2)], t0 + 40)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_2", now=t0 + 60)
    assert store.get_watermark(name, "left") is None
    right = [("d2", 2, "r", "x"), ("d3", 3, "r", "y")]
    joins.land(right_root, "d2", [joins.right_row(2, "r", "x")], t0 + 70)
    joins.land(right_root, "d3", [joins.right_row(3, "r", "y")], t0 + 70)

    with pytest.raises(Crash):
        joins.run_at(
            spark,
            config,
            store,
            job_name=name,
            run_id="jr_3",
            now=t0 + 120,
            hook=CrashAtStep(1, prefix="join.published"),
        )
    assert join_dry_run(spark, config, store, name, t0 + 130)["plan"]["affected_partitions"] == 3
    joins.run_at(spark, config, store, job_name=name, run_id="jr_4", now=t0 + 140)
    joins.assert_output(spark, config, left, right, "full")

    left.append(("d3", 3, "c", 3))
    joins.land(left_root, "d3", [joins.left_row(3, "c", 3)], t0 + 150)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_5", now=t0 + 200)
    joins.assert_output(spark, config, left, right, "full")


def test_a_join_whose_side_state_cannot_be_committed_fails_first_publishing_nothing(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "left")
    joins.land(tmp_path / "left", "d1", [joins.left_row(1, "a", 1)], joins.T0 - 100)
    # Deep directories of long names: a file bookmark entry of ~2.9 kB per directory, 150 of
    # them over DynamoDB's 400 kB item.
    levels = "/".join(f"{chr(97 + level)}={'n' * 240}" for level in range(12))
    for number in range(150):
        directory = tmp_path / "right" / "date=d1" / levels / f"z={number}"
        directory.mkdir(parents=True)
        path = directory / "f.json"
        path.write_text('{"id": 1, "value": "r", "label": "x"}\n')
        os.utime(path, (joins.T0 - 5000, joins.T0 - 5000))

    with pytest.raises(WatermarkItemTooLarge, match="409600-byte item limit"):
        joins.run_at(spark, config, store, job_name="too_big", run_id="jr_1", now=joins.T0)

    assert store.get_watermark("too_big", "left") is None
    assert joins.read_output(spark, config.target_path) is None, "published, never committed"


def test_a_side_whose_only_new_file_is_empty_changes_nothing(spark, tmp_path, store):
    config = config_for(tmp_path)
    land(tmp_path / "left", "2024-01-01", [left_row(1, "a", 1)], T0 - 100)
    land(tmp_path / "right", "2024-01-01", [right_row(1, "b", "x")], T0 - 100)
    run_at(spark, config, store, job_name="empty", run_id="jr_1", now=T0)

    # 0 bytes, as Spark writes an empty frame's file: the side has nothing new to read.
    land(tmp_path / "right", "2024-01-02", [], T0 + 10)
    run_at(spark, config, store, job_name="empty", run_id="jr_2", now=T0 + 60)

    assert_output(
        spark, config, [("2024-01-01", 1, "a", 1)], [("2024-01-01", 1, "b", "x")], "inner"
    )
