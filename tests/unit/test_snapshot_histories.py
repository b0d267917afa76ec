"""The snapshot histories the hard-delete property draws (``tests/harness/histories.py``):
schema changes between snapshots that the property's reference relies on."""

from __future__ import annotations

import itertools

from hypothesis import Phase, find, given, settings

from tests.harness.histories import (
    INT_MAX,
    Snapshot,
    SnapshotHistory,
    SnapshotRun,
    snapshot_histories,
)


def _snapshots(history: SnapshotHistory) -> list[Snapshot]:
    return [step for step in history.steps if isinstance(step, Snapshot)]


@given(history=snapshot_histories())
def test_every_snapshot_is_read_under_its_own_declared_schema(history):
    schema, committed_since = None, True
    for step in history.steps:
        if isinstance(step, SnapshotRun):
            committed_since = committed_since or step.crash_at is None
            continue
        changed = schema is not None and schema != (step.columns, step.widened)
        assert committed_since or not changed, "a schema change with files of the old one unread"
        assert all(sorted(row) == sorted(step.declared()) for row in step.rows)
        assert step.widened or all(row["qty"] <= INT_MAX for row in step.rows)
        schema, committed_since = (step.columns, step.widened), False
    assert history.steps[-1] == SnapshotRun(history.steps[-1].batch_files, None, True)


@given(history=snapshot_histories())
def test_a_widened_quantity_never_narrows_again(history):
    widened = [snapshot.widened for snapshot in _snapshots(history)]
    assert widened == sorted(widened)


def test_one_history_can_add_a_column_drop_a_column_and_widen_the_quantity():
    def every_change(history: SnapshotHistory) -> bool:
        snapshots = _snapshots(history)
        pairs = list(itertools.pairwise(snapshots))
        added = any(set(new.columns) - set(old.columns) for old, new in pairs)
        dropped = any(set(old.columns) - set(new.columns) for old, new in pairs)
        widened = any(new.widened and not old.widened for old, new in pairs)
        return added and dropped and widened

    found = find(
        snapshot_histories(),
        every_change,
        settings=settings(
            phases=[Phase.generate], database=None, derandomize=True, max_examples=1000
        ),
    )  # not shrunk: any such history will do
    assert every_change(found)


def test_a_key_gone_from_a_snapshot_can_come_back_with_an_older_watermark():
    def restored_older(history: SnapshotHistory) -> bool:
        seen: dict[int, int] = {}
        previous: set[int] = set()
        for snapshot in _snapshots(history):
            for row in snapshot.rows:
                if row["id"] not in previous and row["updated"] < seen.get(row["id"], 0):
                    return True
                seen[row["id"]] = max(seen.get(row["id"], 0), row["updated"])
            previous = {row["id"] for row in snapshot.rows}
        return False

    found = find(
        snapshot_histories(),
        restored_older,
        settings=settings(
            phases=[Phase.generate], database=None, derandomize=True, max_examples=1000
        ),
    )
    assert restored_older(found)


@given(history=snapshot_histories())
def test_a_present_key_never_moves_its_watermark_back(history):
    previous: dict[int, int] = {}
    for snapshot in _snapshots(history):
        for row in snapshot.rows:
            assert row["updated"] >= previous.get(row["id"], row["updated"])
        previous = {row["id"]: row["updated"] for row in snapshot.rows}
