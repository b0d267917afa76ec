"""The run's summary line has one definition: fixed fields, the counts, the job's details."""

from __future__ import annotations

from datetime import UTC, date, datetime

from glue_incremental.run_summary import RunCounts, RunSummary, jsonable

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
