"""What an upstream's commits say they changed (``output_changes``) and what a downstream
reads from them (``engine.upstream.committed_changes``): over a history kept in memory."""

from __future__ import annotations

from typing import Any

import pytest
from glue_incremental.engine.upstream import committed_changes
from glue_incremental.targets.parquet import output_changes, restore
from glue_incremental.watermarks.errors import UnknownRun, WatermarkItemTooLarge

PATH = "s3://lake/orders"


def _run(version: int, *days: str, path: str = PATH, recorded: bool = True) -> dict[str, Any]:
    values: dict[str, Any] = {"cursor": version, "published_at_ms": version}
    if recorded:
        changes = output_changes.entry(("day",), [{"day": day} for day in days])
        values[output_changes.CHANGES_KEY] = {path: changes}
    return {"version": version, "kind": "run", "job_run_id": f"r{version}", "watermarks": values}


class History:
    """A store's history, newest first, as ``Watermarks.iter_history`` yields it."""

    def __init__(self, *items: dict[str, Any]) -> None:
        self.items = sorted(items, key=lambda item: -item["version"])

    def iter_history(self, job: str, slot: str) -> Any:
        return iter(self.items)

    def state_after_run(self, job: str, run_id: str, slot: str) -> dict[str, Any]:
        for item in self.items:
            if item["job_run_id"] == run_id and item["kind"] == "run":
                return item
        raise UnknownRun(job, run_id, slot)


def _changes(history: History, since: int, current: int, columns=("day",)) -> Any:
    return committed_changes(history, "load", "default", PATH, columns, since, current)  # type: ignore[arg-type]


def test_the_union_of_every_commit_since_the_one_read_names_emptied_partitions_too():
    history = History(_run(1, "a", "b"), _run(2, "a"), _run(3, "c"), _run(4, "d"))

    changed = _changes(history, 1, 3)

    assert changed.partitions == {("a",), ("c",)} and not changed.everything


def test_a_reset_a_set_and_a_rewind_that_keeps_the_output_change_no_partition():
    history = History(
        _run(1, "a"),
        {"version": 2, "kind": "reset", "job_run_id": "manual-reset", "watermarks": None},
        {**_run(3, "x"), "kind": "rewind", "job_run_id": "manual-rewind"},  # a copy of run 1's
        {**_run(4, "y"), "kind": "set", "job_run_id": "manual-set"},
    )

    assert _changes(history, 1, 4).partitions == frozenset()


# An Iceberg table rolled back, or a load's retained Parquet files restored: either way the
# undone runs' partitions are rewritten.
@pytest.mark.parametrize("output", ["rolled back", restore.RESTORED])
def test_a_rewind_that_rolled_the_output_back_names_what_the_undone_runs_changed(output):
    rollback = {
        **_run(4, "a"),
        "kind": "rewind",
        "job_run_id": "manual-rewind",
        "output": output,
        "rewound_to_run": "r1",
    }
    history = History(_run(1, "a"), _run(2, "b"), _run(3, "c"), rollback)

    # The reader had read version 3 already: only the rollback is new, yet it names b and c.
    assert _changes(history, 3, 4).partitions == {("b",), ("c",)}


def test_a_commit_that_says_all_or_history_that_expired_recomputes_everything():
    too_many = [f"d{n}" for n in range(output_changes.MAX_LISTED + 1)]
    assert _changes(History(_run(1), _run(2, *too_many)), 1, 2).everything
    assert _changes(History(_run(1), _run(3, "a")), 1, 3).everything  # version 2 expired
    assert _changes(History(_run(1, "a")), 5, 1).everything  # the history restarted


def test_commits_that_recorded_nothing_are_counted_and_leave_the_file_rule_to_name_them():
    history = History(_run(1), _run(2, recorded=False), _run(3, "c"), _run(4, "d", path="s3://x"))

    changed = _changes(history, 1, 4)

    assert changed.partitions == {("c",)} and changed.unrecorded == 2


def test_partitions_are_projected_on_the_sides_columns_and_a_column_the_target_lacks_is_all():
    values = {"columns": ["day", "hour"], "partitions": [["a", "01"], ["a", "02"], [None, "03"]]}
    item = _run(2)
    item["watermarks"][output_changes.CHANGES_KEY] = {PATH: values}
    history = History(_run(1), item)

    assert _changes(history, 1, 2).partitions == {("a",), (None,)}
    assert _changes(history, 1, 2, columns=("region",)).everything


def test_paths_name_one_location_whatever_their_scheme_spelling():
    assert output_changes.location("s3a://lake/orders/") == output_changes.location(PATH)
    assert output_changes.location("file:///tmp/x/") == output_changes.location("/tmp/x")


def test_a_state_too_large_with_the_list_keeps_all_instead():
    def fits(slot: str, state: dict[str, Any]) -> None:
        if (
            output_changes.everything(state[output_changes.CHANGES_KEY])
            != state[output_changes.CHANGES_KEY]
        ):
            raise WatermarkItemTooLarge("load", 500_000)

    changes = {PATH: output_changes.entry(("day",), [{"day": "a"}])}
    states = output_changes.with_changes({"default": {"cursor": 1}}, changes, fits)

    assert states["default"][output_changes.CHANGES_KEY] == {
        PATH: {"columns": ["day"], "all": True}
    }


@pytest.mark.parametrize("count", [0, 3])
def test_an_entry_lists_distinct_partitions_nulls_first(count):
    rows = [{"day": "b"}, {"day": None}, {"day": "b"}][:count]

    assert output_changes.entry(("day",), rows) == {
        "columns": ["day"],
        "partitions": [[None], ["b"]] if count else [],
    }
