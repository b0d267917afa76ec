"""Hard deletes in the central property: a source of full snapshots (``--file_snapshots``)
drops and re-adds keys between deliveries while its declared schema changes (``value`` and
``discount`` appear and disappear, ``qty`` widens from int to bigint); runs reconcile every N
(``--reconcile_every``) or on demand, cut into batches, some crashing at a random hook point.
After the history's closing reconcile the target equals the pure-Python reference
(``reference.latest_snapshot_merged``: the newest snapshot's keys, each with its latest
version, a column the version's snapshot lacked null), with no key twice and every column
loaded, ``qty`` bigint once a widened snapshot was read: Parquet on a local disk, Parquet on
S3A (LocalStack) and Iceberg (the session's Hadoop catalog), the targets of the combined
property (``tests/harness/property_targets.py``); the reference is the same for every target.

``--reconcile_max_fraction 1``: a drawn snapshot may drop most keys, which is what a source
can do; the safety stop has its own tests (``test_reconcile_snapshots.py``). Snapshots are
never empty (an empty one is refused, not reconciled).
"""

from __future__ import annotations

import pytest
from hypothesis import event, example, given, settings

from tests.harness import reference
from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.file_jobs import Job
from tests.harness.histories import (
    INT_MAX,
    Snapshot,
    SnapshotHistory,
    SnapshotRun,
    snapshot_histories,
    snapshot_row,
)
from tests.harness.property_targets import TARGETS, a_target

pytestmark = pytest.mark.spark

V, D, BIG = ("value",), ("discount",), INT_MAX + 7


def _snapshot(columns: tuple[str, ...], widened: bool, *rows: tuple) -> Snapshot:
    """A snapshot of ``(id, part, updated, qty, text)`` rows carrying ``columns``."""
    return Snapshot([snapshot_row(*row, columns=columns) for row in rows], columns, widened)


# The example every target runs: key 2 leaves, and the run reading it crashes in its second
# one-file batch after the publish, before the DynamoDB commit (a reconcile every second
# run); then `value` disappears, `discount` appears and `qty` widens: keys 1 and 4
# re-delivered unchanged lose `value` and gain `discount`, key 3 takes a bigint quantity,
# key 2 comes back restored from an older copy (watermark 3, older than the 5 it left at: it
# returns as it left, with `value` and a widened quantity), and key 1 leaves at the closing
# reconcile.
EVERY_CHANGE = SnapshotHistory(
    2,
    [
        _snapshot(V, False, (1, "a", 1, 1, "x"), (2, "a", 5, 2, "x"), (3, "b", 1, 3, "x")),
        SnapshotRun(None, None, False),
        _snapshot(V, False, (1, "a", 1, 1, "x"), (3, "a", 2, 3, "y")),
        _snapshot(V, False, (1, "a", 1, 1, "x"), (3, "a", 2, 3, "y"), (4, "b", 1, 4, "w")),
        SnapshotRun(1, 6, False),
        SnapshotRun(None, None, False),
        _snapshot(
            D,
            True,
            (1, "a", 1, 1, "x"),
            (2, "b", 3, 4, "z"),
            (3, "a", 4, BIG, "y"),
            (4, "b", 1, 4, "w"),
        ),
        _snapshot(D, True, (2, "b", 3, 4, "z"), (3, "a", 4, BIG, "y"), (4, "b", 1, 4, "w")),
        SnapshotRun(2, None, False),
        SnapshotRun(None, None, True),
    ],
)


def _restored_older(before: list[list[dict]], rows: list[dict]) -> int:
    """Keys gone from the last snapshot that ``rows`` bring back with an older watermark."""
    latest: dict[int, int] = {}
    for row in (row for rows in before for row in rows):
        latest[row["id"]] = max(latest.get(row["id"], row["updated"]), row["updated"])
    last = {row["id"] for row in before[-1]} if before else set()
    older = [
        row for row in rows if row["id"] not in last and row["updated"] < latest.get(row["id"], 0)
    ]
    return len(older)


@settings(max_examples=settings.default.max_examples if IN_DEEP_RUN else 1, deadline=None)
@given(history=snapshot_histories(max_steps=5 if IN_DEEP_RUN else 3))
@example(history=EVERY_CHANGE)
@pytest.mark.parametrize("kind", TARGETS)
def test_property_snapshots_dropping_keys_with_reconciles_batches_and_crashes_equal_the_reference(
    spark, tmp_path_factory, store, request, kind, history: SnapshotHistory
):
    tmp = tmp_path_factory.mktemp("snapshots")
    target = a_target(kind, spark, tmp, request)
    options = {"file_snapshots": True, "reconcile_max_fraction": 1.0, **target.options}
    job = Job(spark, tmp, store, job_name=f"snap-{tmp.name}", **options)
    snapshots, loaded, crashes, changes, restores = [], set(), 0, 0, 0
    schema, read_widened = "", False
    for step in history.steps:
        if isinstance(step, Snapshot):
            restores += _restored_older(snapshots, step.rows)
            job.land(step.rows)
            snapshots.append(step.rows)
            loaded.update(step.declared())
            changes += bool(schema) and schema != step.source_schema()
            schema, read_widened = step.source_schema(), read_widened or step.widened
            continue
        hook = CrashAtStep(step.crash_at) if step.crash_at else None
        try:
            job.run(
                hook,
                **options,
                source_schema=schema,
                reconcile_every=history.reconcile_every,
                reconcile=step.reconcile,
                max_batch_files=step.batch_files,
            )
        except Crash:
            crashes += 1
    event(f"runs that crashed: {min(crashes, 2)}{'+' if crashes > 2 else ''}")
    event(f"schema changes: {min(changes, 2)}{'+' if changes > 2 else ''}")
    event(f"keys back with an older watermark: {min(restores, 1)}{'+' if restores > 1 else ''}")
    if history is EVERY_CHANGE:
        assert crashes == 1, "the example's crash point was not reached"

    columns = sorted(loaded)
    seen = target.rows(columns)
    expected = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    context = f"{kind}, {crashes} runs crashed"
    assert len({row["id"] for row in seen}) == len(seen), f"{context}: a key is there twice"
    assert reference.as_tuples(seen, columns) == reference.as_tuples(expected, columns), context
    dtypes = target.dtypes()  # snapshots are never empty: the target keeps a key, and a file
    assert sorted(dtypes) == columns, context
    assert dtypes["qty"] == ("bigint" if read_widened else "int"), context
