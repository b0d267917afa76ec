"""The central property with every kind of change at once (issue 25).

One history mixes inserts, updates, soft deletes and re-inserts, keys moving partition,
columns that appear, disappear and widen (int to bigint) in the declared source schema,
runs cut into batches of a random number of files (or unbounded), and crashes at a random
hook point followed by more runs. After it the target equals an independent pure-Python
full refresh (``reference.full_refresh_with_changes``), with no key twice: Parquet on a
local disk, Parquet on S3A (LocalStack) and Iceberg (the session's Hadoop catalog).

Any order of versions is drawn: an older version of a key delivered after a delete of it
(in a later run, or a later batch of the same run) loses to the delete's tombstone
(``docs/deletes.md``, "Tombstones"), as it loses in the full refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from glue_incremental.deletes.markers import DeleteMarker
from glue_incremental.watermarks import Watermarks, create_table
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from tests.harness import reference
from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.histories import Epoch, Land, Run, change_histories
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.property_targets import TARGETS, a_target

pytestmark = pytest.mark.spark

OP_D = DeleteMarker("op", ("D",))
BASE_COLUMNS = ["id", "op", "part", "qty", "updated"]
T0 = 1_700_000_000.0


def _rows(columns: tuple[str, ...], *versions: tuple) -> Land:
    """A landed file of ``(id, part, updated, op, qty)`` versions carrying ``columns``."""
    rows = []
    for key, part, updated, op, qty in versions:
        row = {"id": key, "part": part, "updated": updated, "op": op, "qty": qty}
        row.update({"value": f"v{key}.{updated}"} if "value" in columns else {})
        row.update({"discount": key * 100 + updated} if "discount" in columns else {})
        rows.append(row)
    return Land(rows)


V, D, BIG = ("value",), ("discount",), 2**31 + 7
# The example every target runs first: keys move partition, a delete, a crash mid-publish of
# a one-file batch (Iceberg: after batch 2's Iceberg commit, before its DynamoDB commit); then
# `value` disappears, `discount` appears and `qty` widens, the deleted key is re-inserted in
# another partition, another is deleted, and an older version arrives after a newer one.
EVERY_CHANGE = [
    Epoch(
        V,
        False,
        [
            _rows(V, (1, "a", 3, "U", 1), (2, "a", 3, "U", 2), (3, "b", 3, "U", 3)),
            _rows(V, (2, "b", 5, "U", 2), (3, "b", 4, "D", 3)),
            Run(batch_files=1, crash_at=5),
            Run(batch_files=None, crash_at=None),
        ],
    ),
    Epoch(
        D,
        True,
        [
            _rows(D, (1, "b", 7, "U", BIG), (2, "b", 8, "D", 5), (3, "a", 6, None, 4)),
            _rows(D, (1, "a", 6, "U", 8), (4, "a", 8, "U", 6)),
            Run(batch_files=1, crash_at=None),
        ],
    ),
]


@settings(max_examples=settings.default.max_examples if IN_DEEP_RUN else 2, deadline=None)
@given(history=change_histories(), keep_marker=st.booleans())
@example(history=EVERY_CHANGE, keep_marker=False)
@pytest.mark.parametrize("kind", TARGETS)
def test_property_any_mix_of_changes_deletes_batches_and_crashes_equals_the_reference(
    spark, tmp_path_factory, aws, request, kind, history, keep_marker
):
    crashes = check_history(spark, tmp_path_factory, request, kind, history, keep_marker)
    event(f"runs that crashed: {min(crashes, 2)}{'+' if crashes > 2 else ''}")
    if history is EVERY_CHANGE:
        assert crashes == 1, "the example's crash point was not reached"


def check_history(
    spark, tmp_path_factory, request, kind: str, history: list[Epoch], keep_marker: bool
) -> int:
    """Runs ``history`` against a fresh target of ``kind``, checks it equals the reference
    with no key twice and the declared columns and types; returns how many runs crashed."""
    create_table()  # idempotent; each example has its own job, source and target
    store, tmp = Watermarks(), tmp_path_factory.mktemp("changes")
    target = a_target(kind, spark, tmp, request)
    clock, job_name = FixedClock(T0), f"changes-{tmp.name}"
    deliveries, columns_of_epoch, loaded_columns = [], {}, set(BASE_COLUMNS)
    runs = crashes = 0
    for number, epoch in enumerate(history):
        columns_of_epoch[number] = epoch.declared()
        for step in epoch.steps:
            clock.now += 10
            if isinstance(step, Land):
                write_json_file(tmp / "source", step.rows, mtime=clock.now)
                deliveries += [((number, len(deliveries)), row) for row in step.rows]
                loaded_columns.update(epoch.declared())
                continue
            runs += 1
            crashes += _run(
                spark, store, tmp, target, epoch, step, job_name, runs, clock, keep_marker
            )

    columns = sorted(loaded_columns - ({"op"} if not keep_marker else set()))
    expected = reference.full_refresh_with_changes(
        deliveries,
        columns_of_epoch,
        sorted(loaded_columns),
        primary_key=("id",),
        watermark="updated",
        is_delete=lambda row: OP_D.is_delete(row["op"]),
    )
    seen = target.rows(columns)
    context = f"{kind}, {runs} runs, {crashes} crashed"
    assert len({row["id"] for row in seen}) == len(seen), f"{context}: a key is there twice"
    assert _by_key(seen, columns) == _by_key(expected, columns), context
    if seen:  # every key deleted: a Parquet target has no file left to show its columns
        dtypes = target.dtypes()
        assert sorted(dtypes) == columns, context
        read_widened = any(e.widened and any(isinstance(s, Land) for s in e.steps) for e in history)
        assert dtypes["qty"] == ("bigint" if read_widened else "int"), context
    return crashes


def _run(
    spark, store, tmp, target, epoch: Epoch, step: Run, job_name, number, clock, keep_marker
) -> int:
    """One run of the step's shape; 1 when its injected crash happened."""
    config = json_files_config(
        tmp,
        partition_by=("part",),
        source_schema=epoch.source_schema(),
        delete_marker=OP_D,
        keep_delete_marker=keep_marker,
        max_batch_files=step.batch_files,
        **target.options,
    )
    clock.now += 60
    hook = CrashAtStep(step.crash_at) if step.crash_at else None
    try:
        run_load_at(
            spark,
            config,
            job_name=job_name,
            run_id=f"jr_{number}",
            clock=clock,
            store=store,
            hook=hook,
        )
    except Crash:
        return 1
    return 0


def _by_key(rows, columns: Sequence[str]) -> dict[Any, tuple]:
    return {row["id"]: tuple(row.get(name) for name in columns) for row in rows}


# Found by the deep property: the column widens (int to bigint) in a run whose only row is an
# older version of a stored key, so the merge keeps the stored row and writes none.
WIDENED_BY_A_LOSING_ROW = [
    Epoch(
        (),
        False,
        [
            _rows((), (3, "a", 7, "U", 0), (3, "a", 12, "U", 0), (4, "a", 12, "U", 9)),
            _rows((), (3, "a", 7, None, 3), (3, "b", 12, None, 8), (4, "a", 12, "U", 9)),
            Run(1, None),
        ],
    ),
    Epoch(V, False, [Run(2, None), Run(2, 7), Run(None, None)]),
    Epoch(V + D, True, [_rows(V + D, (3, "a", 7, None, 0)), Run(None, None)]),
]


@pytest.mark.parametrize("kind", TARGETS)
def test_a_column_widened_by_a_run_whose_only_row_loses_is_widened_in_the_target(
    spark, tmp_path_factory, aws, request, kind
):
    check_history(spark, tmp_path_factory, request, kind, WIDENED_BY_A_LOSING_ROW, False)


# A column added by a run whose only row loses (an older version of a deleted key): no row of
# the run is written, yet a read of the target's files has the column, as a full refresh does.
ADDED_BY_A_LOSING_ROW = [
    Epoch(
        (),
        False,
        [_rows((), (1, "a", 5, "U", 0), (1, "a", 9, "D", 0), (2, "a", 5, "U", 1)), Run(None, None)],
    ),
    Epoch(D, False, [_rows(D, (1, "b", 2, "U", 3)), Run(None, None)]),
]


@pytest.mark.parametrize("kind", TARGETS)
def test_a_column_added_by_a_run_whose_only_row_loses_is_in_the_target(
    spark, tmp_path_factory, aws, request, kind
):
    check_history(spark, tmp_path_factory, request, kind, ADDED_BY_A_LOSING_ROW, False)
