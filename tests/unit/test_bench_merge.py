"""A partial benchmark run merged into the committed results keeps every other section."""

from __future__ import annotations

import pytest

from tests.benchmarks.merge import ScaleMismatch, merge


def results(commit: str, started: str, sections: dict, scale: str = "full") -> dict:
    return {
        "meta": {
            "git_commit": commit,
            "started_at": started,
            "scale": {"name": scale},
            "machine": {"load_average_at_start": [1.0, 1.0, 1.0]},
            "load_average_at_end": [2.0, 2.0, 2.0],
        },
        "sections": sections,
    }


def test_a_partial_run_replaces_its_sections_and_each_section_keeps_its_own_run():
    base = results("old", "2026-01-01", {"jdbc": {"status": "ok"}, "join": {"status": "ok"}})
    partial = results("new", "2026-02-01", {"join": {"status": "ok", "points": [1]}})

    merged = merge(base, partial, ["jdbc", "join"])

    assert list(merged["sections"]) == ["jdbc", "join"]
    assert merged["sections"]["jdbc"]["run"]["git_commit"] == "old"
    assert merged["sections"]["join"]["points"] == [1]
    assert merged["sections"]["join"]["run"]["git_commit"] == "new"
    assert merged["sections"]["join"]["run"]["started_at"] == "2026-02-01"
    assert merged["meta"]["merged_runs"][0]["sections"] == ["join"]
    assert "run" not in base["sections"]["jdbc"]  # the inputs are left as they were


def test_a_run_at_another_scale_is_refused_in_one_line():
    base = results("old", "2026-01-01", {})
    with pytest.raises(ScaleMismatch, match="cannot merge a smoke run into full results"):
        merge(base, results("new", "2026-02-01", {}, scale="smoke"), [])


def test_a_section_measured_again_is_named_with_its_latest_partial_run_only():
    from tests.benchmarks.report import _current_merged_runs

    base = results("aaa", "t0", {"join": {"points": [1]}, "bounded_batches": {"points": [2]}})
    once = merge(base, results("bbb", "t1", {"bounded_batches": {"points": [3]}}), ["join"])
    twice = merge(once, results("ccc", "t2", {"bounded_batches": {"points": [4]}}), ["join"])
    current = _current_merged_runs(twice["meta"]["merged_runs"])
    assert [(run["git_commit"], run["sections"]) for run in current] == [
        ("ccc", ["bounded_batches"])
    ]
