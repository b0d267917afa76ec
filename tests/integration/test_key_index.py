"""The key index: with the default ``--partition_moves detect``, a run reads only the partitions
its keys are in (never the whole target), and the index stays right across moves, crashes,
a lost index and runs that do not maintain it."""

from __future__ import annotations

import shutil

import pytest
from glue_incremental.keys import index as key_index

from tests.harness.faults import StepCounter, crash_points
from tests.harness.file_jobs import Job, row

pytestmark = pytest.mark.spark


def test_a_default_run_reads_only_the_partitions_its_keys_are_in(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y"), row(3, "c", 10, "z")])
    job.run()
    # Reading partition b or c now would fail: the key lookup must not touch them.
    job.corrupt("part=b")
    job.corrupt("part=c")
    with pytest.raises(Exception, match=r"(?i)parquet|page|decompress"):
        spark.read.parquet("file://" + str(job.target / "part=b")).collect()
    job.land([row(1, "a", 20, "x2"), row(4, "a", 20, "new")])

    summary = job.run()

    assert summary["partitions_written"] == [{"part": "a"}]
    rows = spark.read.parquet("file://" + str(job.target / "part=a")).collect()
    assert sorted((r["id"], r["value"]) for r in rows) == [(1, "x2"), (4, "new")]


@pytest.mark.parametrize("lookup", ["keys_as_a_filter", "keys_joined"])
def test_a_key_moving_partition_twice_leaves_each_old_partition(
    spark, tmp_path, store, monkeypatch, lookup
):
    if lookup == "keys_joined":  # what a run with more than MAX_LISTED_KEYS keys does
        monkeypatch.setattr(key_index, "MAX_LISTED_KEYS", 0)
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "a", 10, "y")])
    job.run()
    job.land([row(1, "b", 20, "to b")])
    first = job.run()
    job.land([row(1, "c", 30, "to c")])
    second = job.run()
    job.land([row(1, "a", 40, "back to a")])
    third = job.run()

    assert sorted(p["part"] for p in first["partitions_written"]) == ["a", "b"]
    assert second["partitions_removed"] == [{"part": "b"}]
    assert third["partitions_removed"] == [{"part": "c"}]
    job.assert_equals_full_refresh()


def test_keys_outside_every_indexed_key_range_skip_the_lookup(spark, tmp_path, store, monkeypatch):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y")])
    job.run()
    looked_up: list[object] = []
    real_partitions_of = key_index.partitions_of
    monkeypatch.setattr(
        key_index,
        "partitions_of",
        lambda *args, **kwargs: looked_up.append(args) or real_partitions_of(*args, **kwargs),
    )
    job.land([row(10, "a", 20, "new"), row(11, "c", 20, "new too")])

    new_keys = job.run()

    assert looked_up == []  # the index's footers hold keys 1..2 only: none of 10..11 is stored
    assert sorted(p["part"] for p in new_keys["partitions_written"]) == ["a", "c"]
    job.land([row(2, "c", 30, "moved")])
    moved = job.run()
    assert len(looked_up) == 1  # key 2 is in the indexed range: looked up, found in b
    assert moved["partitions_removed"] == [{"part": "b"}]
    job.assert_equals_full_refresh()


def test_a_lost_index_is_rebuilt_from_the_target(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y")])
    job.run()
    shutil.rmtree(job.target / key_index.INDEX_DIR)
    job.land([row(1, "b", 20, "moved")])

    job.run()

    assert job.segments() == [1, 2]
    job.land([row(2, "c", 30, "moved too")])
    job.run()
    job.assert_equals_full_refresh()


def test_a_run_that_ignores_moves_drops_the_index_and_detect_rebuilds_it(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y")])
    job.run()
    assert job.segments()
    job.land([row(3, "b", 20, "new")])
    job.run(partition_moves="ignore")
    assert job.segments() == []  # an index that missed a publish would be wrong: it is gone
    job.land([row(3, "a", 30, "moved")])

    job.run()

    assert job.segments() == [1, 2]
    job.assert_equals_full_refresh()


def test_segments_are_compacted_and_lookups_stay_right(spark, tmp_path, store, monkeypatch):
    monkeypatch.setattr(key_index, "MAX_SEGMENTS", 3)
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y")])
    job.run()
    for step, part in enumerate(["b", "c", "a", "c"], start=2):
        job.land([row(1, part, 10 * step, f"v{step}")])
        job.run()
        assert len(job.segments()) <= 3

    job.assert_equals_full_refresh()


def test_a_crash_at_every_step_between_data_and_index_publish_then_a_rerun_is_right(
    spark, tmp_path, store
):
    """The index's files are listed in the run's write-ahead intent with its data: a crash
    after the data is live and before the index is (or the reverse) is rolled forward."""
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "a", 10, "y"), row(3, "b", 10, "z")])
    job.run()
    job.land([row(1, "b", 20, "moved")], name="update.json")
    baseline = tmp_path / "baseline"
    shutil.copytree(job.target, baseline)
    counter = StepCounter()
    job.run(hook=counter)
    moves = [d["destination"] for name, d in counter.steps if name == "publish.move"]
    assert any(f"/{key_index.INDEX_DIR}/" in m for m in moves), moves
    assert any("/part=" in m for m in moves), moves
    steps = [name for name, _ in counter.steps if name.startswith("publish.")]

    for k in crash_points(steps):
        job.crash_at_publish_step_then_rerun(
            k,
            baseline=baseline,
            rewound_to="jr_1",
            rows=[row(1, "c", 200, "moved again"), row(3, "a", 200, "z2")],
        )
