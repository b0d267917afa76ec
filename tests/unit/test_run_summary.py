"""The run's summary line has one definition: fixed fields, the counts, the job's details."""

from __future__ import annotations

from datetime import UTC, date, datetime

from glue_incremental.run.summary import RunCounts, RunSummary, jsonable

FIXED = {
    "job_name": "orders",
    "state_name": "orders",
    "run_id": "jr_1",
    "status": "SUCCEEDED",
    "bookmark_option": "job-bookmark-enable",
    "dry_run": False,
    "old_watermark": {},
    "committed": True,
    "duration_seconds": 1.5,
}


def test_a_run_that_recorded_no_counts_has_only_the_fixed_fields_and_details():
    summary = RunSummary(**FIXED, details={"commit_skipped": "dry run"})  # type: ignore[arg-type]
    assert summary.line() == {**FIXED, "commit_skipped": "dry run"}


def test_counts_are_named_as_on_calls_queries_read_them_without_the_watermark_time():
    counts = RunCounts(
        records_read=3,
        records_written=2,
        records_new=1,
        watermark_time=datetime(2024, 1, 1, tzinfo=UTC),
    )
    line = RunSummary(**FIXED, counts=counts, error="SchemaError: x").line()  # type: ignore[arg-type]
    assert line == {
        **FIXED,
        "records_read": 3,
        "records_new": 1,
        "records_written": 2,
        "late_files_skipped": 0,
        "null_watermark_rows": 0,
        "future_watermark_rows": 0,
        "state_bytes": None,
        "records_deleted": 0,
        "error": "SchemaError: x",
    }
    assert counts.metrics("orders", 5.0).records_new == 1


def test_details_become_json_data():
    assert jsonable({"a": (1, date(2024, 1, 2)), 3: {"b": object}}) == {
        "a": [1, "2024-01-02"],
        "3": {"b": "<class 'object'>"},
    }


def test_the_release_a_run_ran_is_on_its_summary_line_and_in_its_runs_metric():
    from glue_incremental.run.metrics import RunMetrics, metric_data

    summary = RunSummary(
        job_name="j",
        state_name="j",
        run_id="jr_1",
        status="SUCCEEDED",
        bookmark_option="job-bookmark-enable",
        dry_run=False,
        old_watermark={},
        committed=True,
        duration_seconds=1.0,
        release="0123456789abcdef",
    )
    data = metric_data(RunMetrics("j", 1, 1, release="0123456789abcdef"))

    assert summary.line()["release"] == "0123456789abcdef"
    (runs,) = [datum for datum in data if datum["MetricName"] == "Runs"]
    assert runs["Dimensions"] == [
        {"Name": "JobName", "Value": "j"},
        {"Name": "Release", "Value": "0123456789abcdef"},
    ]
    # The alarmed metrics keep their one JobName dimension, whatever the release.
    assert all(len(d["Dimensions"]) == 1 for d in data if d["MetricName"] != "Runs")


def test_a_run_without_a_release_argument_keeps_the_line_and_metrics_as_they_were():
    from glue_incremental.run.metrics import RunMetrics, metric_data

    assert "Runs" not in {d["MetricName"] for d in metric_data(RunMetrics("j", 1, 1))}


def test_a_history_run_publishes_the_versions_it_opened_and_closed_even_when_none():
    from glue_incremental.run.metrics import RunMetrics, metric_data, version_count

    details = {"versions_opened": 3, "versions_closed": 0}
    data = metric_data(
        RunMetrics(
            "j",
            1,
            1,
            versions_opened=version_count(details, "versions_opened"),
            versions_closed=version_count(details, "versions_closed"),
        )
    )

    assert {
        d["MetricName"]: d["Value"] for d in data if d["MetricName"].startswith("Versions")
    } == {
        "VersionsOpened": 3.0,
        "VersionsClosed": 0.0,
    }


def test_a_latest_version_run_publishes_no_version_metrics():
    from glue_incremental.run.metrics import RunMetrics, metric_data, version_count

    assert version_count({}, "versions_opened") is None
    names = {d["MetricName"] for d in metric_data(RunMetrics("j", 1, 1))}
    assert not names & {"VersionsOpened", "VersionsClosed"}
