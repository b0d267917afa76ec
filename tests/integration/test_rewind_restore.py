"""``watermarks rewind`` on a Parquet target restores the files that run left, with the state.

A bad delivery (made-up keys, a key moved to another partition) is loaded, then undone: the
target equals the pure-Python full refresh of the deliveries up to the run rewound to, the
key index and deliveries are back with the rows (a later move of the same key leaves it
once), and a further run brings the good data. A crash at any step of the restore is
finished by a second rewind or by the next run.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from glue_incremental.hooks import hooks
from glue_incremental.load.job import LoadConfig
from glue_incremental.targets.parquet import publish, restore
from glue_incremental.transforms.function import TransformSpec
from glue_incremental.watermarks import Watermarks, create_table
from glue_incremental_tools import cli
from glue_incremental_tools.output_files import LocalStore

from tests.harness import job_snapshots, reference
from tests.harness.change_rows import DELETE_COLUMNS, change
from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_points
from tests.harness.file_jobs import COLUMNS, OP_D, Job, row, target_rows
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.joins import T0
from tests.harness.loads import FixedClock, run_load_at, write_json_file

GOOD = [row(1, "a", 10, "x"), row(2, "a", 10, "y"), row(3, "b", 10, "z")]
MORE = [row(2, "a", 20, "y2"), row(4, "b", 20, "w")]
# Made-up keys, and key 1 moved to a partition it never was in.
BAD = [row(1, "c", 30, "bad"), row(90, "a", 30, "made up"), row(91, "d", 30, "made up")]
FS = LocalStore()


@pytest.fixture(scope="module")
def bad_load_history(spark, endpoint, tmp_path_factory):
    """Two good runs, then jr_3 loading ``bad.json``, run once for the module (three Spark
    runs each test would repeat); the expected rows after jr_2."""
    endpoint.reset()
    create_table()
    root = tmp_path_factory.mktemp("bad_load")
    job = Job(spark, root / "job", Watermarks())
    job.land(GOOD)
    job.run()
    job.land(MORE)
    job.run()
    expected = as_rows(reference.full_refresh(job.tmp / "source", ("id",), "updated"))
    job.land(BAD, name="bad.json")
    job.run()
    assert (1, "c", 30, "bad") in target_rows(job)
    return job_snapshots.take(job, root / "pristine"), expected


@pytest.fixture
def bad_load(bad_load_history, store, monkeypatch):
    """The module's bad load, its files and state as after jr_3, for this test alone."""
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    snapshot, expected = bad_load_history
    return job_snapshots.restore(snapshot, store), expected


def as_rows(rows: list[dict]) -> list[tuple]:
    return reference.as_tuples(rows, COLUMNS)


def rewind(job: Job, run_id: str, *options: str) -> tuple[int, str]:
    code = cli.main(["watermarks", "rewind", job.job_name, run_id, "--why", "bad load", *options])
    return code, json.dumps(job.store.get_watermark(job.job_name), default=str)


def quarantine_and_fix(job: Job) -> None:
    """The runbook's next step: the bad file leaves the source, the corrected one lands."""
    (job.tmp / "source" / "bad.json").unlink()
    job.land([row(1, "b", 40, "fixed")], name="fix.json")


def test_a_rewind_restores_the_files_of_the_run_and_the_next_run_brings_the_good_data(bad_load):
    job, expected = bad_load

    code, _ = rewind(job, "jr_2")

    assert code == 0
    assert target_rows(job) == expected
    state = job.store.get_watermark(job.job_name)
    assert state["output"] == restore.RESTORED
    assert json.loads(state["restored_partitions"]) == ["part=a", "part=c", "part=d"]
    kept = publish.retained_seqs(FS, str(job.target))
    assert max(kept) == state["watermarks"][restore.STATE_KEY]
    quarantine_and_fix(job)
    job.run()
    # Key 1 moves from a (restored) to b: a stale index would leave it in c or a too.
    assert target_rows(job) == as_rows(
        reference.full_refresh(job.tmp / "source", ("id",), "updated")
    )


def test_keep_output_leaves_the_files_and_the_next_run_merges_onto_them(bad_load):
    job, _ = bad_load

    code, _ = rewind(job, "jr_2", "--keep-output")

    assert code == 0
    assert (90, "a", 30, "made up") in target_rows(job)


def test_a_rewind_past_the_retention_refuses_in_one_line_and_changes_nothing(bad_load, capsys):
    job, _ = bad_load
    before = job.store.get_watermark(job.job_name)["version"]
    oldest = min(publish.retained_seqs(FS, str(job.target)))
    FS.delete_file(f"{publish.record_prefix(str(job.target), oldest + 1)}/_publish.json")
    capsys.readouterr()

    code = cli.main(["watermarks", "rewind", job.job_name, "jr_1", "--why", "bad load"])

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"publish {oldest + 1}" in err and "reset" in err
    assert job.store.get_watermark(job.job_name)["version"] == before


def test_a_rewind_to_a_run_written_before_retention_keeps_the_files_with_a_notice(
    spark, tmp_path, store, monkeypatch, capsys
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store, output_retention=timedelta(0))
    job.land(GOOD)
    job.run()
    job.land(BAD, name="bad.json")
    job.run()
    capsys.readouterr()

    code = cli.main(["watermarks", "rewind", job.job_name, "jr_1", "--why", "bad load"])

    err = capsys.readouterr().err
    assert code == 0 and err.startswith("notice: ") and err.count("\n") == 1, err
    assert (90, "a", 30, "made up") in target_rows(job)


def test_a_restore_cut_short_at_any_step_is_finished_by_a_second_rewind(bad_load):
    job, expected = bad_load
    baseline = job.tmp / "baseline"
    shutil.copytree(job.target, baseline)
    counter = StepCounter()
    with hooks.installed(counter):
        rewind(job, "jr_2")
    names = counter.names()
    assert {"restore.stage", "publish.move", "publish.delete", "restore.drop"} <= set(names)

    for step in crash_points(names):
        back_to_bad_load(job, baseline)
        crash = CrashAtStep(step)
        with hooks.installed(crash), pytest.raises(Crash):
            rewind(job, "jr_2")
        code, _ = rewind(job, "jr_2")
        assert code == 0
        assert target_rows(job) == expected, crash.crashed_at


@pytest.mark.parametrize(
    ("point", "times"),
    [("restore.stage", 1), ("publish.move", 2)],
    ids=["before-the-intent", "after-the-intent"],
)
def test_a_restore_cut_short_is_finished_by_the_next_run(bad_load, point, times):
    job, expected = bad_load
    with hooks.installed(CrashAtStep(times, prefix=point)), pytest.raises(Crash):
        rewind(job, "jr_2")
    assert target_rows(job) != expected

    (job.tmp / "source" / "bad.json").unlink()
    summary = job.run()

    assert target_rows(job) == expected
    assert summary["output_restored_partitions"] == ["part=a", "part=c", "part=d"]


def back_to_bad_load(job: Job, baseline: Path) -> None:
    """The target as jr_3 left it, and its state current again."""
    shutil.rmtree(job.target)
    shutil.copytree(baseline, job.target)
    job.store.rewind(job.job_name, "jr_3", why="next crash point")


def test_a_rewind_too_far_then_forward_again_refuses_and_the_next_run_converges(bad_load, capsys):
    job, _ = bad_load
    assert rewind(job, "jr_1")[0] == 0
    state_back = job.store.get_watermark(job.job_name)["version"]
    capsys.readouterr()

    # The operator meant jr_2: its files were removed by the first rewind's restore.
    code = cli.main(["watermarks", "rewind", job.job_name, "jr_2", "--why", "bad load"])

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "jr_2" in err and "reset" in err
    assert job.store.get_watermark(job.job_name)["version"] == state_back
    (job.tmp / "source" / "bad.json").unlink()
    job.run()
    assert target_rows(job) == as_rows(
        reference.full_refresh(job.tmp / "source", ("id",), "updated")
    )


def test_a_rewind_a_run_and_a_second_rewind_to_the_same_run_restore_it_again(bad_load):
    job, expected = bad_load
    assert rewind(job, "jr_2")[0] == 0
    quarantine_and_fix(job)
    job.run()  # jr_4: the fix
    assert target_rows(job) != expected

    code, _ = rewind(job, "jr_2")

    assert code == 0
    assert target_rows(job) == expected


def test_a_rewind_to_a_run_whose_output_an_earlier_rewind_undid_refuses(bad_load, capsys):
    job, _ = bad_load
    assert rewind(job, "jr_2")[0] == 0
    quarantine_and_fix(job)
    job.run()  # jr_4 publishes under the number jr_3's publish had
    after_fix = target_rows(job)
    before = job.store.get_watermark(job.job_name)["version"]
    capsys.readouterr()

    code = cli.main(["watermarks", "rewind", job.job_name, "jr_3", "--why", "bad load"])

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert job.store.get_watermark(job.job_name)["version"] == before
    assert target_rows(job) == after_fix


def test_a_rewind_after_a_keep_output_rewind_still_restores_the_later_run(bad_load):
    job, expected = bad_load
    assert rewind(job, "jr_1", "--keep-output")[0] == 0  # the files stay, records too

    code, _ = rewind(job, "jr_2")

    assert code == 0
    assert target_rows(job) == expected


def test_a_rewind_over_a_run_of_several_bounded_batches_restores_before_all_of_them(
    spark, tmp_path, store, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store, max_batch_files=1)
    job.land(GOOD)
    job.run()
    expected = as_rows(reference.full_refresh(tmp_path / "source", ("id",), "updated"))
    job.land(BAD[:2], name="bad1.json")
    job.land(BAD[2:], name="bad2.json")
    job.run()  # two batches, two publishes

    code, _ = rewind(job, "jr_1")

    assert code == 0
    assert target_rows(job) == expected


def test_a_rewind_over_a_filtered_delete_brings_the_key_back_without_its_tombstone(
    spark, tmp_path, store, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    drops = TransformSpec("tests.harness.user_transforms", "drops_marked_rows")
    job = Job(spark, tmp_path, store, transform=drops)
    job.land([row(9, "a", 10, "kept"), row(3, "a", 10, "z")])
    job.run()
    job.land([row(9, "a", 30, "drop")], name="bad.json")
    job.run()
    assert [r[0] for r in target_rows(job)] == [3]

    assert rewind(job, "jr_1")[0] == 0
    assert [r[0] for r in target_rows(job)] == [3, 9]
    # The filtered version leaves the source; a version older than it but newer than the
    # stored one arrives: a tombstone left behind (watermark 30) would keep it out.
    (tmp_path / "source" / "bad.json").unlink()
    job.land([row(9, "a", 20, "back")])
    job.run()

    assert target_rows(job) == as_rows(
        reference.full_refresh(tmp_path / "source", ("id",), "updated")
    )


def test_a_rewind_to_the_current_run_changes_no_file(bad_load):
    job, _ = bad_load
    before = target_rows(job)

    code, _ = rewind(job, "jr_3")

    assert code == 0
    assert target_rows(job) == before


def test_a_rewind_to_a_run_that_wrote_nothing_names_the_run_that_wrote_its_publish(
    bad_load, capsys
):
    job, _ = bad_load
    job.land([], name="empty.json")
    job.run()  # jr_4: reads 0 rows from a new file, its state keeps jr_3's publish
    job.land([row(5, "a", 50, "later")], name="later.json")
    job.run()  # jr_5
    capsys.readouterr()

    code, _ = rewind(job, "jr_4")

    out, err = capsys.readouterr()
    assert code == 0, err
    assert "(written by jr_3, the state of jr_4)" in out, out
    assert (5, "a", 50, "later") not in target_rows(job)


def test_a_rewind_to_a_run_that_never_ran_is_one_line(bad_load, capsys):
    job, _ = bad_load
    before = job.store.get_watermark(job.job_name)["version"]
    capsys.readouterr()

    code = cli.main(["watermarks", "rewind", job.job_name, "jr_nope", "--why", "bad load"])

    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "jr_nope" in err, err
    assert job.store.get_watermark(job.job_name)["version"] == before


def test_history_and_show_after_a_restoring_rewind_print_without_a_traceback(bad_load, capsys):
    job, _ = bad_load
    assert rewind(job, "jr_2")[0] == 0
    capsys.readouterr()

    for argv in (["history", job.job_name], ["show", job.job_name]):
        code = cli.main(["watermarks", *argv])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), argv
        assert "jr_2" in out, argv


def test_a_rewind_over_a_reset_and_full_reload_brings_back_the_partitions_it_dropped(
    spark, tmp_path, store, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store)
    job.land(GOOD, name="good.json")
    job.run()
    job.land(MORE, name="more.json")
    job.run()
    expected = as_rows(reference.full_refresh(tmp_path / "source", ("id",), "updated"))
    (tmp_path / "source" / "more.json").unlink()  # the reset's reload lacks part b's key 4
    (tmp_path / "source" / "good.json").write_text("")  # and every other row: all dropped
    job.land([row(5, "e", 50, "only")])
    store.reset(job.job_name, why="a mistake")
    job.run()
    assert target_rows(job) == [(5, "e", 50, "only")]

    code, _ = rewind(job, "jr_2")

    assert code == 0
    assert target_rows(job) == expected


@pytest.mark.spark
@requires_iceberg
def test_a_rewind_across_a_run_that_deleted_keys_then_a_rerun_equals_the_full_refresh(
    spark, tmp_path, store
):
    config = LoadConfig(
        source=(tmp_path / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_format="iceberg",
        target_table=unique_table("tombstones"),
        delete_marker=OP_D,
    )
    clock = FixedClock(T0)
    batches = [
        [change(1, 10, "U"), change(2, 10, "U")],
        [change(1, 20, "D")],  # key 1 leaves, its tombstone stays
        [change(1, 30, "U", "back"), change(2, 40, "D")],  # key 1 back, key 2 leaves
    ]
    for number, batch in enumerate(batches, start=1):
        clock.now += 60
        write_json_file(tmp_path / "source", batch, mtime=clock.now - 30)
        run_load_at(spark, config, job_name="tomb", run_id=f"jr_{number}", clock=clock, store=store)
    assert cli.main(["watermarks", "rewind", "tomb", "jr_1", "--why", "recompute"]) == 0
    late = [change(1, 15, "U", "late"), change(2, 35, "U", "late")]  # older than each delete
    clock.now += 60
    write_json_file(tmp_path / "source", late, mtime=clock.now - 30)

    run_load_at(spark, config, job_name="tomb", run_id="jr_4", clock=clock, store=store)

    latest = reference.full_refresh(tmp_path / "source", ("id",), "updated")
    expected = reference.without_deletes(latest, lambda row: OP_D.is_delete(row["op"]))
    assert table_rows(spark, config.iceberg_target.name, DELETE_COLUMNS) == reference.as_tuples(
        expected, DELETE_COLUMNS
    )


def test_a_rewind_restores_a_history_targets_versions_and_side_store_to_the_earlier_run(
    spark, store, tmp_path, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store, history="scd2")

    def stored() -> tuple[list, list]:
        def rows(path: Path) -> list:
            return sorted(
                tuple(sorted(r.asDict().items())) for r in spark.read.parquet(str(path)).collect()
            )

        return rows(job.target), rows(job.target / "_history")

    job.land(GOOD)
    job.run()
    job.land([row(1, "a", 20, "x2"), *MORE])  # key 1 gets a second version
    job.run()
    after_jr_2 = stored()
    job.land(BAD, name="bad.json")
    job.run()
    assert stored() != after_jr_2

    code, _ = rewind(job, "jr_2")

    assert code == 0
    assert stored() == after_jr_2


def test_a_rewind_to_a_run_that_found_the_target_empty_empties_it_again(
    spark, tmp_path, store, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store)
    (tmp_path / "source").mkdir(parents=True)
    job.run()  # jr_1: nothing landed yet, the target stays empty
    job.land(BAD, name="bad.json")
    job.run()

    code, _ = rewind(job, "jr_1")

    assert code == 0
    assert target_rows(job) == []


def test_a_rewind_over_a_widening_then_a_rerun_leaves_one_type_spark_reads(
    spark, tmp_path, store, monkeypatch
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    job = Job(spark, tmp_path, store)
    job.land(
        [
            {"id": 1, "part": "a", "updated": 1, "qty": 3},
            {"id": 2, "part": "b", "updated": 1, "qty": 5},
        ]
    )
    job.run()
    # One 20-digit value widens qty to decimal(20,0): every partition is rewritten.
    job.land([{"id": 3, "part": "a", "updated": 2, "qty": 12345678901234567890}])
    job.run()

    assert rewind(job, "jr_1")[0] == 0
    job.run()  # reads the widening file again

    seen = spark.read.parquet(str(job.target)).select("id", "qty").collect()
    assert sorted((r["id"], int(r["qty"])) for r in seen) == [
        (1, 3),
        (2, 5),
        (3, 12345678901234567890),
    ]
