"""The dependents' state machine, as Terraform renders it, executed on LocalStack's Step Functions.

The definition comes from ``terraform console`` (``tests/harness/state_machines.py``),
the Glue calls are mocked (LocalStack's ``SFN_MOCK_CONFIG`` test cases), and the input
is what the rule's input transformer sends (glue_event_chain's tftest checks that
template): the dependent, its upstreams, AND/ANY and the upstream run that finished.
GetJobRuns answers every upstream alike (the Map's lookups run in parallel, in no set
order), so each case is built so that only the finished upstream's own answer could
differ, and the machine ignores it: that run just SUCCEEDED whatever the lookup says.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from glue_incremental import aws as clients

from tests.harness.state_machines import glue_runs, mock_config, rendered_definition

MACHINE = "gi-test-start-dependents"
JOIN = "gi-test-orders-enriched"
UPSTREAMS = ["gi-test-customers", "gi-test-orders"]
STARTED = {"Return": {"JobRunId": "jr_dependent"}}

CASES = {
    "AllSucceeded": {"LatestRun": "Succeeded", "StartJob": "Started"},
    "OtherFailed": {"LatestRun": "Failed", "StartJob": "Started"},
    "LookupLags": {"LatestRun": "Running", "StartJob": "Started"},
    "StartRefused": {"LatestRun": "Succeeded", "StartJob": "ConcurrentRunsExceeded"},
}
RESPONSES = {
    "Succeeded": glue_runs("SUCCEEDED"),
    "Failed": glue_runs("FAILED"),
    "Running": glue_runs("RUNNING"),
    "Started": STARTED,
    "ConcurrentRunsExceeded": {
        "Throw": {"Error": "Glue.ConcurrentRunsExceededException", "Cause": "max concurrent runs"}
    },
}


@pytest.fixture(scope="module")
def machine(endpoint) -> Iterator[str]:
    """The rendered state machine on LocalStack, with the mocked Glue answers above."""
    mock_config(Path(endpoint.sfn_mock_config), MACHINE, CASES, RESPONSES)
    sfn = clients.client("stepfunctions")
    created = sfn.create_state_machine(
        name=MACHINE,
        definition=json.dumps(rendered_definition()),
        roleArn="arn:aws:iam::000000000000:role/glue-gi-test-start-dependents",
    )
    yield created["stateMachineArn"]
    sfn.delete_state_machine(stateMachineArn=created["stateMachineArn"])


def execute(machine: str, case: str, **event: Any) -> tuple[str, list[str]]:
    """Run one mocked execution: its final status and the states it entered, in order."""
    sfn = clients.client("stepfunctions")
    execution = sfn.start_execution(stateMachineArn=f"{machine}#{case}", input=json.dumps(event))
    arn = execution["executionArn"]
    deadline = time.monotonic() + 30
    while (status := sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
        assert time.monotonic() < deadline, f"execution {arn} still RUNNING after 30 s"
        time.sleep(0.1)
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    entered = [
        e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
    ]
    return status, entered


def started(entered: list[str]) -> bool:
    return "StartJob" in entered


def test_and_starts_the_dependent_once_every_upstreams_latest_run_succeeded(machine):
    status, entered = execute(
        machine,
        "AllSucceeded",
        job=JOIN,
        upstreams=UPSTREAMS,
        logical="AND",
        finished="gi-test-orders",
    )

    assert status == "SUCCEEDED"
    assert started(entered)


def test_and_waits_while_another_upstreams_latest_run_failed(machine):
    status, entered = execute(
        machine,
        "OtherFailed",
        job=JOIN,
        upstreams=UPSTREAMS,
        logical="AND",
        finished="gi-test-orders",
    )

    assert status == "SUCCEEDED"
    assert not started(entered)
    assert entered[-1] == "WaitForTheOtherUpstreams"


def test_any_starts_the_dependent_on_one_upstreams_success_whatever_the_others_did(machine):
    status, entered = execute(
        machine,
        "OtherFailed",
        job="gi-test-report",
        upstreams=UPSTREAMS,
        logical="ANY",
        finished="gi-test-orders",
    )

    assert status == "SUCCEEDED"
    assert started(entered)


def test_a_manual_rerun_of_the_failed_upstream_starts_the_dependent(machine):
    # customers FAILED (the previous case), on-call reran it by hand and it SUCCEEDED:
    # Glue emits the same SUCCEEDED event, and the latest runs are now all SUCCEEDED.
    status, entered = execute(
        machine,
        "AllSucceeded",
        job=JOIN,
        upstreams=UPSTREAMS,
        logical="AND",
        finished="gi-test-customers",
    )

    assert status == "SUCCEEDED"
    assert started(entered)


def test_the_finished_run_counts_as_succeeded_while_its_lookup_still_lags(machine):
    status, entered = execute(
        machine,
        "LookupLags",
        job=JOIN,
        upstreams=["gi-test-customers"],
        logical="AND",
        finished="gi-test-customers",
    )

    assert status == "SUCCEEDED"
    assert started(entered)


def test_a_refused_start_fails_the_execution_which_is_what_pages_on_call(machine):
    status, entered = execute(
        machine,
        "StartRefused",
        job=JOIN,
        upstreams=UPSTREAMS,
        logical="AND",
        finished="gi-test-orders",
    )

    assert status == "FAILED"
    assert started(entered)
