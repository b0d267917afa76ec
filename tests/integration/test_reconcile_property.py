"""Hard deletes in the central property: a source of full snapshots (``--file_snapshots``)
drops and re-adds keys between deliveries; runs reconcile every N (``--reconcile_every``)
or on demand, cut into batches, some crashing at a random hook point. After the history's
closing reconcile the target equals the pure-Python reference
(``reference.latest_snapshot_merged``: the newest snapshot's keys, each with its latest
version), with no key twice. Parquet on local disk.

``--reconcile_max_fraction 1``: a drawn snapshot may drop most keys, which is what a source
can do; the safety stop has its own tests (``test_reconcile_snapshots.py``). Snapshots are
never empty (an empty one is refused, not reconciled).
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings

from tests.harness import reference
from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.file_jobs import COLUMNS, Job
from tests.harness.histories import Snapshot, SnapshotHistory, snapshot_histories

pytestmark = pytest.mark.spark


@settings(max_examples=settings.default.max_examples if IN_DEEP_RUN else 2, deadline=None)
@given(history=snapshot_histories(max_steps=5 if IN_DEEP_RUN else 3))
def test_property_snapshots_dropping_keys_with_reconciles_batches_and_crashes_equal_the_reference(
    spark, tmp_path_factory, store, history: SnapshotHistory
):
    tmp = tmp_path_factory.mktemp("snapshots")
    options = {"file_snapshots": True, "reconcile_max_fraction": 1.0}
    job = Job(spark, tmp, store, job_name=f"snap-{tmp.name}", **options)
    snapshots, crashes = [], 0
    for step in history.steps:
        if isinstance(step, Snapshot):
            job.land(step.rows)
            snapshots.append(step.rows)
            continue
        hook = CrashAtStep(step.crash_at) if step.crash_at else None
        try:
            job.run(
                hook,
                **options,
                reconcile_every=history.reconcile_every,
                reconcile=step.reconcile,
                max_batch_files=step.batch_files,
            )
        except Crash:
            crashes += 1
    event(f"runs that crashed: {min(crashes, 2)}{'+' if crashes > 2 else ''}")

    seen = reference.visible_rows(job.target, COLUMNS)
    expected = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    assert len({row["id"] for row in seen}) == len(seen), "a key is there twice"
    assert reference.as_tuples(seen, COLUMNS) == reference.as_tuples(expected, COLUMNS)
