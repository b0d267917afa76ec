"""No crash, at any instant, on a local disk, with S3 semantics or on S3 itself, loses or
duplicates a row.

The publish is enumerated once with a counting hook; then the run is crashed
at step k (``make test-deep``: every object operation of the publish, and of
the recovery that follows; ``make test``: the first of each kind and a spread,
``faults.crash_points``), and a rerun with *different* new input must equal a
full refresh computed in pure Python (``tests/harness/reference.py``). The ``s3a``
file system puts the target in LocalStack's S3, written and read by Spark through S3A.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.errors import HiddenPartitionValues
from glue_incremental.load.job import main
from glue_incremental.run.context import hooks
from glue_incremental.targets.parquet import writer
from glue_incremental.watermarks import Watermarks, create_table

from tests.harness.faults import (
    QUICK_CRASH_POINTS,
    Crash,
    CrashAtStep,
    StepCounter,
    crash_at,
    crash_points,
)
from tests.harness.file_jobs import Job
from tests.harness.loads import (
    FixedClock,
    job_argv,
    json_files_config,
    run_load_at,
    write_json_file,
)
from tests.harness.reference import as_tuples, full_refresh
from tests.harness.targets import LocalTarget, Target

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated", "value"]
JOB = "sweep"
# A sweep on S3 costs minutes (two Spark runs through S3A per step): by default only the
# partitioned layout runs there; `make test-deep` (HYPOTHESIS_PROFILE=deep) runs both.
S3A_LAYOUTS = (
    ("partitioned", "unpartitioned")
    if os.environ.get("HYPOTHESIS_PROFILE") == "deep"
    else ("partitioned",)
)


# Each crash point on S3 is two Spark runs through S3A: `make test` takes fewer there.
S3A_QUICK_POINTS = 4


def skip_slow_s3a_layouts(filesystem: str, layout: str) -> None:
    if filesystem == "s3a" and layout not in S3A_LAYOUTS:
        pytest.skip(f"the {layout} sweep on s3a runs under HYPOTHESIS_PROFILE=deep only")


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


BASE = [row(1, "a", 10, "v1"), row(2, "a", 10, "v2"), row(3, "b", 10, "v3"), row(4, "b", 10, "v4")]
# Key 1 moves from a to b, key 3 changes in place, key 5 is new in c.
UPDATE = [row(1, "b", 20, "v1'"), row(3, "b", 20, "v3'"), row(5, "c", 20, "v5")]
# The rerun's different new input: key 2 moves from a to c, key 4 changes, key 6 is new.
NEXT = [row(2, "c", 30, "v2''"), row(4, "b", 30, "v4''"), row(6, "d", 30, "v6")]


class Scenario:
    """One target, its JSON source (on the local disk) and its job state, with a restorable
    baseline."""

    def __init__(
        self, spark, tmp: Path, store: Watermarks, target: Target, *, partitioned: bool
    ) -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.source, self.target = tmp / "source", target
        self.config = json_files_config(
            tmp, target_path=target.uri, partition_by=("part",) if partitioned else ()
        )

    def land(self, rows, at: float, name: str | None = None) -> None:
        write_json_file(self.source, rows, mtime=at, name=name)

    def run(self, run_id: str, at: float, hook=None) -> dict:
        return run_load_at(
            self.spark,
            self.config,
            job_name=JOB,
            run_id=run_id,
            clock=FixedClock(at),
            store=self.store,
            hook=hook,
        )

    def first_run_then_land_update(self) -> None:
        """Where every sweep starts: BASE loaded by jr_1 at T0, then UPDATE landed 10 s later."""
        self.land(BASE, T0 - 100)
        self.run("jr_1", T0)
        self.land(UPDATE, T0 + 10)

    def save(self, name: str) -> None:
        self.target.save(name)

    def restore(self, name: str, *, state_after: str) -> None:
        self.target.restore(name)
        self.store.rewind(JOB, state_after, why="next crash point")
        (self.source / "next.json").unlink(missing_ok=True)

    def assert_equals_full_refresh(self, context: str) -> None:
        seen = as_tuples(self.target.rows(COLUMNS), COLUMNS)
        expected = as_tuples(full_refresh(self.source, ("id",), "updated"), COLUMNS)
        assert len({r[0] for r in seen}) == len(seen), f"{context}: a key is there twice: {seen}"
        assert seen == expected, context


@pytest.fixture
def scenario(spark, tmp_path, store, filesystem, targets, layout) -> Scenario:
    """The Scenario every sweep starts from, on each file system and layout (slow ones skipped)."""
    skip_slow_s3a_layouts(filesystem, layout)
    sweep = Scenario(spark, tmp_path, store, targets("target"), partitioned=layout == "partitioned")
    sweep.first_run_then_land_update()
    return sweep


def test_a_crash_at_every_step_of_a_publish_then_a_rerun_with_new_input_equals_a_full_refresh(
    scenario, filesystem
):
    scenario.save("baseline")
    counter = StepCounter()
    scenario.run("jr_count", T0 + 60, hook=counter)
    names = counter.names()
    assert "publish.intent" in names and "publish.move" in names and "commit.after" in names
    if filesystem == "copy_then_delete":
        assert "fs.copied" in names

    for k in crash_points(
        names, quick=S3A_QUICK_POINTS if filesystem == "s3a" else QUICK_CRASH_POINTS
    ):
        scenario.restore("baseline", state_after="jr_1")
        crash = CrashAtStep(k)
        with pytest.raises(Crash):
            scenario.run(f"jr_crash_{k}", T0 + 60, hook=crash)
        scenario.land(NEXT, T0 + 70, name="next.json")
        scenario.run(f"jr_rerun_{k}", T0 + 120)
        scenario.assert_equals_full_refresh(f"crash at step {k} ({crash.crashed_at})")


def test_a_crash_at_every_step_of_a_recovery_then_a_rerun_equals_a_full_refresh(
    scenario, filesystem
):
    # Crashed right after the intent: recovery has every file to move in and every old one to delete.
    with pytest.raises(Crash):
        scenario.run("jr_crashed", T0 + 60, hook=crash_at("publish.move"))
    scenario.save("crashed")
    counter = StepCounter()
    scenario.run("jr_count", T0 + 120, hook=counter)
    names = counter.names()
    recovery = names[: names.index("publish.stage")]  # the rerun recovers before anything else
    assert "recover.move" in recovery and "recover.delete" in recovery

    for k in crash_points(
        recovery, quick=S3A_QUICK_POINTS if filesystem == "s3a" else QUICK_CRASH_POINTS
    ):
        scenario.restore("crashed", state_after="jr_1")
        with pytest.raises(Crash):
            scenario.run(f"jr_recover_{k}", T0 + 120, hook=CrashAtStep(k))
        scenario.land(NEXT, T0 + 130, name="next.json")
        scenario.run(f"jr_rerun_{k}", T0 + 180)
        scenario.assert_equals_full_refresh(f"crash at recovery step {k}")


class CrashBeforeAChecksumMove:
    """``os.rename`` that raises ``Crash`` instead of the ``k``-th move of a checksum (the
    file it belongs to already moved: on a local disk the two are separate calls); with
    ``k=0`` it only records the kind of each checksum move."""

    def __init__(self, k: int = 0) -> None:
        self.k, self.kinds = k, []
        self._rename = os.rename

    def __call__(self, source, destination) -> None:
        name = os.path.basename(str(source))
        if name.startswith(".") and name.endswith(".crc"):
            self.kinds.append(
                next((d for d in ("_retained", "_staging") if d in str(destination)), "live")
            )
            if len(self.kinds) == self.k:
                raise Crash(f"crash before moving checksum {source}")
        self._rename(source, destination)


@pytest.mark.parametrize("layout", ["partitioned", "unpartitioned"])
def test_a_crash_between_a_local_file_and_its_checksum_then_a_rerun_equals_a_full_refresh(
    spark, tmp_path, store, layout, monkeypatch
):
    from glue_incremental.io import local_files

    scenario = Scenario(
        spark,
        tmp_path,
        store,
        LocalTarget(tmp_path / "target"),
        partitioned=layout == "partitioned",
    )
    scenario.first_run_then_land_update()
    scenario.save("baseline")
    counter = CrashBeforeAChecksumMove()
    with monkeypatch.context() as patched:
        patched.setattr(local_files.os, "rename", counter)
        scenario.run("jr_count", T0 + 60)
    assert counter.kinds, "the publish moved no checksum: nothing to crash between"

    for k in crash_points(counter.kinds):
        scenario.restore("baseline", state_after="jr_1")
        with monkeypatch.context() as patched, pytest.raises(Crash):
            patched.setattr(local_files.os, "rename", CrashBeforeAChecksumMove(k))
            scenario.run(f"jr_crash_{k}", T0 + 60)
        scenario.land(NEXT, T0 + 70, name="next.json")
        scenario.run(f"jr_rerun_{k}", T0 + 120)
        scenario.assert_equals_full_refresh(
            f"crash before checksum move {k} ({counter.kinds[k - 1]})"
        )


def test_a_concurrent_reader_never_misses_a_kept_key_and_sees_only_old_or_new_rows(
    spark, tmp_path, store, targets
):
    """What docs/writer-protocol.md promises a reader listing the path during a publish."""
    scenario = Scenario(spark, tmp_path, store, targets("target"), partitioned=True)
    scenario.first_run_then_land_update()
    old = {tuple(r.values()) for r in scenario.target.rows(COLUMNS)}
    new = {tuple(r[c] for c in COLUMNS) for r in full_refresh(scenario.source, ("id",), "updated")}
    kept_keys = {r[0] for r in new} & {r[0] for r in old}
    observations = []

    def reader(name, _details):
        seen = {tuple(r[c] for c in COLUMNS) for r in scenario.target.rows(COLUMNS)}
        observations.append((name, seen))

    scenario.run("jr_2", T0 + 60, hook=reader)

    assert len(observations) > 5
    for name, seen in observations:
        assert seen <= old | new, f"at {name}: a row that is neither old nor new"
        assert kept_keys <= {r[0] for r in seen}, f"at {name}: a key is missing"
    assert observations[-1][1] == new


# -- the reproductions --------------------------------------------------------------------


def _upsert(spark, frame, target: Target, run_id: str, partition_by=("p",)):
    return writer.upsert(
        spark,
        frame,
        target.uri,
        primary_key=["id"],
        partition_by=list(partition_by),
        order_by="ts",
        run_id=run_id,
    )


def _frame(spark, rows, partitions: int = 1):
    return spark.createDataFrame(rows, "id long, p string, ts long, v string").repartition(
        partitions
    )


def _target_rows(target: Target):
    return as_tuples(target.rows(["id", "p", "ts", "v"]), ["id", "p", "ts", "v"])


def test_recovery_runs_before_the_target_is_read(spark, targets):
    target = targets("t")
    rows = [(i, "a" if i < 50 else "b", 1, f"x{i}") for i in range(100)]
    _upsert(spark, _frame(spark, rows, 2), target, "r1")
    update = [(7, "a", 2, "changed")]
    with pytest.raises(Crash), hooks.installed(crash_at("publish.delete")):
        _upsert(spark, _frame(spark, update), target, "r2")
    _upsert(spark, _frame(spark, update), target, "r3")
    expected = sorted([r for r in rows if r[0] != 7] + update)
    assert _target_rows(target) == expected


def test_a_key_that_moved_partition_is_there_once(spark, targets):
    target = targets("t")
    _upsert(spark, _frame(spark, [(1, "a", 1, "old"), (2, "b", 1, "x")]), target, "r1")
    moved = [(1, "b", 2, "new")]
    with pytest.raises(Crash), hooks.installed(crash_at("publish.delete", times=2)):
        _upsert(spark, _frame(spark, moved), target, "r2")
    _upsert(spark, _frame(spark, moved), target, "r3")
    assert _target_rows(target) == [(1, "b", 2, "new"), (2, "b", 1, "x")]


def test_an_unpartitioned_target_caught_mid_publish_is_recovered(spark, targets):
    target = targets("t")
    rows = [(i, "a", 1, f"x{i}") for i in range(100)]
    writer.replace_partitions(
        spark, _frame(spark, rows, 4), target.uri, partition_by=[], affected=None, run_id="r1"
    )
    assert len(target.data_files()) == 4
    more = [(i, "a", 1, f"y{i}") for i in range(100, 110)]
    with pytest.raises(Crash), hooks.installed(crash_at("publish.delete", times=2)):
        _upsert(spark, _frame(spark, more), target, "r2", partition_by=())
    _upsert(spark, _frame(spark, more), target, "r3", partition_by=())
    assert len(_target_rows(target)) == 110


def test_s3_renames_interrupted_between_copy_and_delete_are_recovered(spark, tmp_path, monkeypatch):
    from glue_incremental.io.spark_listing import session_conf

    from tests.harness.faults import use_filesystem

    use_filesystem(monkeypatch, "copy_then_delete")
    target = LocalTarget(tmp_path / "t")
    rows = [(i, "a", 1, f"x{i}") for i in range(200)]
    _upsert(spark, _frame(spark, rows), target, "r1")
    rewritten = [(i, "a", 2, f"u{i}") for i in range(200)]
    for k in (1, 2, 3):  # the partition is rewritten as three files: crash after each copy
        with (
            pytest.raises(Crash),
            hooks.installed(crash_at("fs.copied", times=k)),
            session_conf(spark, {"spark.sql.files.maxRecordsPerFile": "70"}),
        ):
            writer.replace_partitions(
                spark,
                _frame(spark, rewritten, 3),
                target.uri,
                partition_by=["p"],
                affected=[("a",)],
                run_id=f"crash{k}",
            )
        _upsert(spark, _frame(spark, [(0, "a", 3, f"after{k}")]), target, f"rerun{k}")
        expected = sorted([(0, "a", 3, f"after{k}"), *rewritten[1:]])
        assert _target_rows(target) == expected, f"after a crash at copy {k}"


def test_a_run_id_that_leaves_the_staging_prefix_is_refused_before_reading(spark, tmp_path, aws):
    create_table()
    lake = tmp_path / "lake"
    sibling = lake / "other_dataset" / "data.json"
    sibling.parent.mkdir(parents=True)
    sibling.write_text("{}\n")
    write_json_file(tmp_path / "source", [row(1, "a", 1, "x")], mtime=T0)
    argv = job_argv(
        "incremental_load.py",
        JOB_NAME="orders",
        JOB_RUN_ID="../..",
        source=(tmp_path / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key="id",
        target_path=(lake / "orders").as_uri(),
    )
    with pytest.raises(ArgumentError, match=r"--JOB_RUN_ID '\.\./\.\.' is not a valid run id"):
        main(argv, spark=spark)
    assert sibling.exists()
    assert not (lake / "orders").exists()
    assert Watermarks().get_watermark("orders") is None


def test_partition_values_stay_inside_their_directory(spark, tmp_path):
    target = LocalTarget(tmp_path / "lake" / "t")
    _upsert(spark, _frame(spark, [(1, "../../escape", 1, "x"), (2, "a/b", 1, "y")]), target, "r1")
    assert not (tmp_path / "escape").exists() and not (tmp_path / "lake" / "escape").exists()
    assert sorted(p.name for p in target.path.iterdir() if not p.name.startswith("_")) == [
        "p=..%2F..%2Fescape",
        "p=a%2Fb",
    ]
    assert _target_rows(target) == [(1, "../../escape", 1, "x"), (2, "a/b", 1, "y")]


@pytest.mark.parametrize("value", ["x._COPYING_", "y_$folder$"])
def test_a_partition_value_every_reader_would_skip_is_refused_writing_nothing(
    spark, tmp_path, value
):
    target = LocalTarget(tmp_path / "lake" / "t")
    _upsert(spark, _frame(spark, [(1, "a", 1, "x")]), target, "r1")
    before = _target_rows(target)

    with pytest.raises(HiddenPartitionValues, match="no reader would see: p=") as refused:
        _upsert(spark, _frame(spark, [(2, value, 1, "y"), (3, "a", 2, "z")]), target, "r2")

    assert "\n" not in str(refused.value)
    assert _target_rows(target) == before
    assert not (target.path / "_staging" / "r2").exists()


def test_a_load_of_a_row_whose_partition_no_reader_would_see_fails_committing_nothing(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "x._COPYING_", 10, "y")])

    with pytest.raises(HiddenPartitionValues, match=r"part=x\._COPYING_"):
        job.run()

    assert store.get_watermark(job.job_name) is None
