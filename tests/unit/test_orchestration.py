"""The wiring's logic: which upstream runs start which jobs (AND/ANY), never after a failure."""

from __future__ import annotations

import pytest
from glue_incremental_tools.orchestration import (
    Dependency,
    WiringError,
    dependents_to_start,
    slow_run_pattern,
    state_change_pattern,
)

JOIN = Dependency("orders-enriched", ("orders", "customers"), "AND")
REPORT = Dependency("report", ("orders",), "ANY")
EITHER = Dependency("either", ("orders", "customers"), "ANY")


def test_a_succeeded_upstream_starts_its_single_upstream_dependent():
    assert dependents_to_start([JOIN, REPORT], "orders", "SUCCEEDED", {}) == ("report",)


@pytest.mark.parametrize("state", ["FAILED", "TIMEOUT", "STOPPED", "ERROR", "RUNNING"])
def test_a_run_that_did_not_succeed_starts_nothing(state):
    everyone_succeeded = {"orders": "SUCCEEDED", "customers": "SUCCEEDED"}

    assert dependents_to_start([JOIN, REPORT, EITHER], "orders", state, everyone_succeeded) == ()


def test_and_waits_for_every_upstreams_latest_run_to_have_succeeded():
    assert dependents_to_start([JOIN], "orders", "SUCCEEDED", {"customers": "FAILED"}) == ()
    assert dependents_to_start([JOIN], "orders", "SUCCEEDED", {"customers": None}) == ()
    assert dependents_to_start([JOIN], "orders", "SUCCEEDED", {"customers": "SUCCEEDED"}) == (
        "orders-enriched",
    )


def test_a_rerun_by_hand_of_the_failed_upstream_starts_the_dependent():
    # customers failed; on-call reruns it from the console; its SUCCEEDED event arrives.
    latest = {"orders": "SUCCEEDED", "customers": "FAILED"}
    assert dependents_to_start([JOIN], "orders", "SUCCEEDED", latest) == ()

    latest["customers"] = "SUCCEEDED"

    assert dependents_to_start([JOIN], "customers", "SUCCEEDED", latest) == ("orders-enriched",)


def test_the_finished_run_counts_as_succeeded_even_if_the_lookup_lags():
    stale = {"orders": "RUNNING", "customers": "SUCCEEDED"}

    assert dependents_to_start([JOIN], "orders", "SUCCEEDED", stale) == ("orders-enriched",)


def test_any_starts_on_either_upstream_whatever_the_other_did():
    assert dependents_to_start([EITHER], "customers", "SUCCEEDED", {"orders": "FAILED"}) == (
        "either",
    )


def test_a_job_that_is_nobodys_upstream_starts_nothing():
    assert dependents_to_start([JOIN, REPORT], "report", "SUCCEEDED", {}) == ()


@pytest.mark.parametrize(
    ("job", "upstreams", "logical", "named"),
    [
        ("j", (), "AND", "job j has no upstreams"),
        ("j", ("j",), "AND", "job j names itself"),
        ("j", ("a",), "OR", "logical must be AND or ANY, not 'OR'"),
    ],
)
def test_a_dependency_the_wiring_cannot_express_is_refused_naming_it(
    job, upstreams, logical, named
):
    with pytest.raises(WiringError, match=named):
        Dependency(job, upstreams, logical)


def test_the_rule_matches_only_the_upstreams_succeeded_state_changes():
    assert state_change_pattern(JOIN) == {
        "source": ["aws.glue"],
        "detail-type": ["Glue Job State Change"],
        "detail": {"jobName": ["customers", "orders"], "state": ["SUCCEEDED"]},
    }
    assert slow_run_pattern(["b", "a"])["detail"] == {"jobName": ["a", "b"]}
