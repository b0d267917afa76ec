"""Custom job scripts on ``glue_incremental.custom``: the aggregation script recomputes only
the days that changed and always equals the plain-Python aggregation of every order;
bad scripts fail in one line with nothing written or committed; the CLI works on their
state. Orders are JSON-lines files in ``day=<d>/`` (``tests/harness/aggregates.py``)."""

from __future__ import annotations

import pytest

from tests.harness.aggregates import World

pytestmark = pytest.mark.spark


def test_each_run_replaces_only_the_days_its_orders_touched(spark, store, tmp_path):
    world = World(tmp_path)
    world.land("2024-01-01", [(1, 10), (2, 5)])
    world.land("2024-01-02", [(1, 7)])
    first = world.run(spark, "jr_1")
    assert world.output(spark) == world.expected()
    assert first["committed"] and first["partitions_written"] == 2
    untouched = {p: p.stat().st_mtime_ns for p in (world.target / "day=2024-01-01").iterdir()}

    world.land("2024-01-02", [(1, 3), (3, 4)], age=120)  # late: older than the first files
    second = world.run(spark, "jr_2")

    assert world.output(spark) == world.expected()
    assert second["partitions_written"] == 1
    assert {p: p.stat().st_mtime_ns for p in (world.target / "day=2024-01-01").iterdir()} == untouched
    assert set(store.slots("daily_revenue")) == {"orders"}
