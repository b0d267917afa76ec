"""Which run's figures the status table shows, decided without CloudWatch."""

from datetime import UTC, datetime

import pytest
from glue_incremental_tools import status

DAY_START = datetime(2024, 5, 1, tzinfo=UTC)
NOW = datetime(2024, 5, 2, tzinfo=UTC)


@pytest.mark.parametrize("state", ["FAILED", "ERROR", "TIMEOUT", "STOPPED", "RUNNING"])
def test_a_run_that_did_not_succeed_shows_no_metric_figures(state):
    run = {"JobRunState": state, "StartedOn": "2024-05-01T10:00:30+00:00"}

    assert status._run_window(run, DAY_START, NOW) is None
    assert status._figure({}, "records_read", "job", "RecordsRead", None) is None


def test_a_succeeded_run_is_looked_up_over_its_own_span():
    run = {
        "JobRunState": "SUCCEEDED",
        "StartedOn": "2024-05-01T10:00:30+00:00",
        "CompletedOn": "2024-05-01T10:01:10+00:00",
    }

    assert status._run_window(run, DAY_START, NOW) == (
        datetime(2024, 5, 1, 10, 0, 30, tzinfo=UTC),
        datetime(2024, 5, 1, 10, 1, 10, tzinfo=UTC),
    )


def test_a_job_without_runs_is_looked_up_over_the_whole_period():
    assert status._run_window({}, DAY_START, NOW) == (DAY_START, NOW)


def test_the_run_summary_wins_over_metrics():
    assert status._figure({"records_read": 7}, "records_read", "job", "RecordsRead", None) == 7.0


def _row(pipeline: str, **alarms: str) -> status.PipelineStatus:
    return status.PipelineStatus(pipeline, "load", f"gi-local-{pipeline}", [], alarms=alarms)


def test_locally_a_missed_run_alarm_is_explained_under_the_table():
    rows = [_row("orders", missed_run="ALARM"), _row("customers", missed_run="OK")]

    (note,) = status.table_notes(rows, "local")

    assert note.startswith("missed_run (orders): the local stack's Glue never fires triggers")
    assert "python -m glue_incremental run JOB_NAME" in note


def test_in_an_account_a_missed_run_alarm_is_not_explained_away():
    assert status.table_notes([_row("orders", missed_run="ALARM")], "prod") == []
    assert status.table_notes([_row("orders", missed_run="OK")], "local") == []
