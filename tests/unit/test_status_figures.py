"""Which run's figures the status table shows, decided without CloudWatch."""

from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental_tools import run_history, status

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
    assert "up to an hour later" in note  # LocalStack evaluates it once per 3660 s period
    assert "python -m glue_incremental run JOB_NAME" in note


def test_in_an_account_a_missed_run_alarm_is_not_explained_away():
    assert status.table_notes([_row("orders", missed_run="ALARM")], "prod") == []
    assert status.table_notes([_row("orders", missed_run="OK")], "local") == []


class _Glue:
    """A local Glue (moto) that calls every run SUCCEEDED, as soon as it starts."""

    def __init__(self, started: datetime) -> None:
        self.started = started

    def get_job_runs(self, JobName: str) -> dict:  # boto3 spells it JobName
        return {
            "JobRuns": [
                {"Id": "jr_1", "JobRunState": "SUCCEEDED", "StartedOn": self.started, "Timeout": 60}
            ]
        }


def _local_runs(monkeypatch, started: datetime, record: dict | None) -> None:
    monkeypatch.setattr(status.aws, "client", lambda name: _Glue(started))

    def get_run_record(job: str, run_id: str) -> dict:
        if record is None:
            raise KeyError(run_id)  # as a missing object reads: no record yet
        return record

    monkeypatch.setattr(status.runner, "get_run_record", get_run_record)


def test_locally_a_run_without_the_runners_record_yet_is_running(monkeypatch):
    _local_runs(monkeypatch, NOW - timedelta(minutes=5), None)

    run = status._last_run("gi-local-orders", local=True, now=NOW)

    assert run["JobRunState"] == "RUNNING"
    assert status._run_window(run, DAY_START, NOW) is None


def test_locally_a_run_without_a_record_after_the_jobs_timeout_says_so(monkeypatch):
    _local_runs(monkeypatch, NOW - timedelta(minutes=61), None)
    run = status._last_run("gi-local-orders", local=True, now=NOW)
    row = status.PipelineStatus(
        "orders", "load", "gi-local-orders", [], last_run_state=run["JobRunState"]
    )

    assert run["JobRunState"] == "NO RECORD"
    (note,) = status.table_notes([row], "local")
    assert note.startswith("NO RECORD (orders)") and "the runner stopped?" in note


def test_a_recorded_run_shows_its_times_as_moto_does(monkeypatch):
    record = {
        "JobRunState": "SUCCEEDED",
        "StartedOn": "2026-11-29T19:52:34.100000+00:00",
        "CompletedOn": "2026-11-29T19:53:13.720723+00:00",
    }
    _local_runs(monkeypatch, datetime(2026, 11, 29, 19, 52, 34, tzinfo=UTC), record)

    run = status._last_run("gi-local-orders", local=True, now=NOW)

    assert run_history.iso_time(run["CompletedOn"]) == "2026-11-29T19:53:13Z"
    assert (
        run_history.iso_time(datetime(2026, 11, 29, 19, 52, 34, tzinfo=UTC))
        == "2026-11-29T19:52:34Z"
    )
