"""The load's plan as a planned source of CustomJob: the state its slot commits, when a run
that read nothing needs no commit, and what it leaves the source at (plain Python)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from glue_incremental.engine.cursors import BatchStats
from glue_incremental.engine.source_plan import SourcePlan
from glue_incremental.load.planned import PlannedLoad
from glue_incremental.run.state import LoadState

STORED = {"cursor": 5, "published_at_ms": 1_000, "runs_since_reconcile": 1}


def _planned(carried: LoadState, calls: list[str] | None = None, **stats: Any) -> PlannedLoad:
    log = calls if calls is not None else []
    plan = SourcePlan(
        summary={},
        read=lambda: None,
        carried=carried,
        details={"files_read": 0},
        after_commit=lambda run: log.append("after_commit"),
        release=lambda: log.append("release"),
    )
    found = BatchStats(**stats) if stats else None
    return PlannedLoad(plan, dict(STORED), carried, stats=found)


def test_the_slot_commits_the_carried_state_with_the_greatest_cursor_read() -> None:
    carried = LoadState(cursor=5, published_at_ms=1_000, runs_since_reconcile=2)
    planned = _planned(carried, rows=2, nulls=0, future=0, max_cursor=9)

    assert planned.state(2_000, None) == {
        "cursor": 9,
        "published_at_ms": 2_000,
        "runs_since_reconcile": 2,
    }
    older = _planned(carried, rows=1, nulls=0, future=0, max_cursor=3)
    assert older.state(2_000, None)["cursor"] == 5  # a cursor never moves back


def test_a_run_that_read_nothing_and_carries_the_stored_state_needs_no_commit() -> None:
    carried = LoadState(cursor=5, published_at_ms=1_000, runs_since_reconcile=1)

    assert _planned(carried).unchanged({}) is True
    assert _planned(carried, rows=1, nulls=0, future=0, max_cursor=5).unchanged({}) is False
    moved = replace(carried, runs_since_reconcile=2)
    assert _planned(moved).unchanged({}) is False


def test_the_load_figures_name_new_null_and_future_rows_and_the_state_size() -> None:
    carried = LoadState(cursor=5, published_at_ms=1_000)
    planned = _planned(carried, rows=4, nulls=1, future=2, max_cursor=7)
    planned.records_new = 3

    figures = planned.figures({"cursor": 7, "published_at_ms": 2_000})

    assert figures["records_new"] == 3
    assert (figures["null_watermark_rows"], figures["future_watermark_rows"]) == (1, 2)
    assert figures["state_bytes"] > 0


def test_the_source_is_released_unless_the_block_followed_up_after_its_commit() -> None:
    carried = LoadState(cursor=5, published_at_ms=1_000)
    failed: list[str] = []
    _planned(carried, failed).release()
    finished: list[str] = []
    clean = _planned(carried, finished)
    clean.after_commit(None)  # type: ignore[arg-type]
    clean.release()

    assert failed == ["release"]
    assert finished == ["after_commit"]
