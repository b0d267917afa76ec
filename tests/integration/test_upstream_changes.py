"""A downstream of an upstream job recomputes every partition the upstream's commits changed,
emptied ones included: the orders load (``tests/harness/chains.py``) feeding the daily
revenue aggregation, whose output always equals the plain-Python aggregation of whatever
the load's target holds."""

from __future__ import annotations

import pytest

from tests.harness.chains import LOAD_JOB, Chain, order
from tests.harness.faults import Crash, crash_at

pytestmark = pytest.mark.spark


def test_a_day_whose_orders_all_move_away_is_recomputed_and_not_counted_twice(
    spark, store, tmp_path
):
    chain = Chain(spark, tmp_path, store)
    chain.land(order(1, "2026-06-04", 1, 7, 10), order(2, "2026-06-05", 1, 8, 5))
    chain.load()
    chain.aggregate()
    assert chain.output() == [("2026-06-04", 7, 10, 1), ("2026-06-05", 8, 5, 1)]

    chain.land(order(1, "2026-06-05", 2, 7, 10))  # the day's only order moves to the next day
    moved = chain.load()
    assert moved["partitions_removed"] == [{"day": "2026-06-04"}]
    chain.aggregate()

    assert chain.output() == [("2026-06-05", 7, 10, 1), ("2026-06-05", 8, 5, 1)]
    assert chain.output() == chain.expected()


def test_a_day_emptied_by_a_soft_delete_is_recomputed(spark, store, tmp_path):
    from glue_incremental.deletes import DeleteMarker

    chain = Chain(spark, tmp_path, store, delete_marker=DeleteMarker("op", ("D",)))
    chain.land(order(1, "2026-06-04", 1, 7, 10), order(2, "2026-06-05", 1, 8, 5))
    chain.load()
    chain.aggregate()

    chain.land(order(1, "2026-06-04", 2, 7, 10, op="D"))
    chain.load()
    chain.aggregate()

    assert chain.output() == chain.expected() == [("2026-06-05", 8, 5, 1)]


def test_a_move_published_by_a_load_that_crashed_before_its_commit_is_named_by_the_rerun(
    spark, store, tmp_path
):
    """The crashed publish emptied the day; its rerun rewrites only the new day, yet its
    commit names the emptied one (the publish's note), so the downstream drops it."""
    chain = Chain(spark, tmp_path, store)
    chain.land(order(1, "2026-06-04", 1, 7, 10), order(2, "2026-06-05", 1, 8, 5))
    chain.load()
    chain.aggregate()

    chain.land(order(1, "2026-06-05", 2, 7, 10))
    with pytest.raises(Crash):
        chain.load(hook=crash_at("commit.before"))
    chain.aggregate()  # the published, uncommitted change is not read yet
    assert chain.output() == [("2026-06-04", 7, 10, 1), ("2026-06-05", 8, 5, 1)]
    chain.load()
    chain.aggregate()

    assert chain.output() == chain.expected() == [("2026-06-05", 7, 10, 1), ("2026-06-05", 8, 5, 1)]


def test_a_reset_and_full_reload_of_the_upstream_names_the_days_it_removed(spark, store, tmp_path):
    chain = Chain(spark, tmp_path, store)
    first = tmp_path / "source"
    chain.land(order(1, "2026-06-04", 1, 7, 10), order(2, "2026-06-05", 1, 8, 5))
    chain.load()
    chain.aggregate()

    for path in first.glob("*.json"):
        path.unlink()  # the source now holds only day 2026-06-05
    chain.land(order(2, "2026-06-05", 2, 8, 6))
    store.reset(LOAD_JOB, why="reload")
    reloaded = chain.load()
    assert {"day": "2026-06-04"} in reloaded["partitions_removed"]
    summary = chain.aggregate()

    assert chain.output() == chain.expected() == [("2026-06-05", 8, 6, 1)]
    assert summary["sources"]["orders"]["upstream_changes"]["partitions"] == 2


def test_a_rewind_of_the_upstream_that_keeps_its_output_changes_no_partition(
    spark, store, tmp_path
):
    chain = Chain(spark, tmp_path, store)
    chain.land(order(1, "2026-06-04", 1, 7, 10))
    chain.load()
    chain.land(order(2, "2026-06-05", 1, 8, 5))
    chain.load()
    chain.aggregate()

    store.rewind(LOAD_JOB, chain.load_runs[0], why="replay")
    summary = chain.aggregate()

    assert summary["sources"]["orders"]["upstream_changes"]["partitions"] == 0
    assert chain.output() == chain.expected()
