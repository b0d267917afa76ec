"""The dependents' rule against the local stack's EventBridge (LocalStack's TestEventPattern).

Glue emits "Glue Job State Change" for every run whatever started it; these events
are what Glue sends (https://docs.aws.amazon.com/glue/latest/dg/automating-awsglue-with-cloudwatch-events.html).
"""

from __future__ import annotations

import json

import pytest
from glue_incremental import aws as clients
from glue_incremental_tools.orchestration import Dependency, slow_run_pattern, state_change_pattern

JOIN = Dependency("gi-orders-enriched", ("gi-orders", "gi-customers"))


def glue_event(detail_type: str, **detail: object) -> str:
    return json.dumps(
        {
            "id": "7e5c3f7a-0000-0000-0000-000000000000",
            "version": "0",
            "detail-type": detail_type,
            "source": "aws.glue",
            "account": "000000000000",
            "time": "2026-11-24T16:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": {"jobRunId": "jr_0123", "severity": "INFO", **detail},
        }
    )


def matches(pattern: dict, event: str) -> bool:
    answer = clients.client("events").test_event_pattern(
        EventPattern=json.dumps(pattern), Event=event
    )
    return bool(answer["Result"])


@pytest.mark.parametrize("upstream", ["gi-orders", "gi-customers"])
def test_an_upstream_run_that_succeeded_however_started_matches_the_dependents_rule(aws, upstream):
    event = glue_event("Glue Job State Change", jobName=upstream, state="SUCCEEDED")

    assert matches(state_change_pattern(JOIN), event)


@pytest.mark.parametrize("state", ["FAILED", "TIMEOUT", "STOPPED"])
def test_an_upstream_run_that_did_not_succeed_never_matches(aws, state):
    event = glue_event("Glue Job State Change", jobName="gi-orders", state=state)

    assert not matches(state_change_pattern(JOIN), event)


def test_another_jobs_success_does_not_match(aws):
    event = glue_event("Glue Job State Change", jobName="gi-other", state="SUCCEEDED")

    assert not matches(state_change_pattern(JOIN), event)


def test_a_run_past_its_delay_threshold_matches_the_slow_run_warning(aws):
    event = glue_event(
        "Glue Job Run Status",
        jobName="gi-orders",
        state="RUNNING",
        notificationCondition={"NotifyDelayAfter": 90.0},
        message="Job run exceeded the delay threshold",
    )

    assert matches(slow_run_pattern(["gi-orders", "gi-customers"]), event)
    assert not matches(slow_run_pattern(["gi-customers"]), event)
