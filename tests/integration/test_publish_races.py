"""Checks of the publish protocol: runs that race, stale runs, odd paths.

Each test drives the real writer on real Spark against a local target and
compares the target with what must be there, read with pyarrow or plain Spark
(no library code).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from glue_incremental.run.context import hooks
from glue_incremental.targets.parquet import publish, writer

from tests.harness.faults import Crash, crash_at
from tests.harness.reference import as_tuples, visible_rows

pytestmark = pytest.mark.spark

COLUMNS = ["id", "p", "ts", "v"]


def _frame(spark, rows):
    return spark.createDataFrame(rows, "id long, p string, ts long, v string").coalesce(1)


def _upsert(spark, rows, target: str, run_id: str, *, before_publish=None):
    return writer.upsert(
        spark,
        _frame(spark, rows),
        target,
        primary_key=["id"],
        partition_by=["p"],
        order_by="ts",
        run_id=run_id,
        before_publish=before_publish,
    )


def _target_rows(target: Path):
    return as_tuples(visible_rows(target, COLUMNS), COLUMNS)


def test_a_stale_run_whose_staging_was_recovered_by_the_next_run_deletes_no_live_file(
    spark, tmp_path
):
    """Run A passes its lease check, stalls; its lease expires; run B takes over, recovers
    (A's staging has no intent yet, so it is discarded), publishes and commits. When A
    resumes, its publish must not delete B's live files: A's staged rows are gone."""
    target = tmp_path / "t"
    _upsert(spark, [(1, "a", 1, "base"), (2, "a", 1, "base")], target.as_uri(), "r0")
    late = [(3, "a", 5, "from B")]

    def stall_while_the_next_run_takes_over():
        _upsert(spark, late, target.as_uri(), "runB")

    refused = None
    try:
        _upsert(
            spark,
            [(1, "a", 2, "from A")],
            target.as_uri(),
            "runA",
            before_publish=stall_while_the_next_run_takes_over,
        )
    except publish.PublishError as error:
        refused = error
    assert _target_rows(target) == [(1, "a", 1, "base"), (2, "a", 1, "base"), (3, "a", 5, "from B")]
    assert refused is not None and "runA" in str(refused)
    assert "nothing live was touched" in str(refused)


def test_odd_partition_values_under_a_trailing_slash_target_survive_a_crash_mid_publish(
    spark, tmp_path
):
    """Values needing Hive escapes, unicode, null and empty string (both Hive's default
    partition), a target URI ending in "/": a crash between moving in and deleting, then a
    rerun that moves keys between those partitions, leaves each key once, in its new place."""
    target = tmp_path / "t"
    uri = target.as_uri() + "/"
    odd = ["a/b", "100%", "é=x", "?#[]", None]
    _upsert(spark, [(i, value, 1, "v1") for i, value in enumerate(odd)], uri, "r1")
    # every key moves to the next value (the last one to the empty string, read back as null)
    moved = [(i, ([*odd[1:], ""])[i], 2, "v2") for i in range(len(odd))]
    with pytest.raises(Crash), hooks.installed(crash_at("publish.delete", times=2)):
        _upsert(spark, moved, uri, "r2")
    _upsert(spark, moved, uri, "r3")

    expected = [(i, value or None, 2, "v2") for i, value in enumerate([*odd[1:], ""])]
    seen = spark.read.schema("id long, ts long, v string, p string").parquet(str(target))
    assert sorted(tuple(r) for r in seen.select(*COLUMNS).collect()) == expected
    assert not (target / "_staging").exists() or not any((target / "_staging").iterdir())


@pytest.mark.parametrize("stalls_at", ["publish.move", "publish.delete"])
def test_a_run_whose_lease_expires_mid_publish_never_removes_the_next_runs_output(
    spark, tmp_path, stalls_at
):
    """Run A's lease expires while it publishes (after its intent, before a move or a
    delete); run B recovers A's intent, publishes and commits; A then resumes. A may fail,
    but B's rows must all stay, each key once."""
    target = tmp_path / "t"
    _upsert(
        spark,
        [(1, "a", 1, "base"), (2, "a", 1, "base"), (3, "b", 1, "base")],
        target.as_uri(),
        "r0",
    )
    stalled = []

    def next_run_takes_over(name, details):
        if name == stalls_at and not stalled:
            stalled.append(name)
            hooks.uninstall(next_run_takes_over)
            _upsert(spark, [(2, "a", 5, "from B"), (4, "a", 5, "from B")], target.as_uri(), "runB")

    # A may fail (its staged files are gone); B's rows must stay either way.
    with hooks.installed(next_run_takes_over), contextlib.suppress(Exception):
        _upsert(spark, [(1, "b", 2, "from A"), (3, "b", 2, "from A")], target.as_uri(), "runA")
    assert stalled == [stalls_at]
    assert sorted(_target_rows(target)) == [
        (1, "b", 2, "from A"),
        (2, "a", 5, "from B"),
        (3, "b", 2, "from A"),
        (4, "a", 5, "from B"),
    ]
