"""The line ``run`` ends on: what the run read and wrote, in words the metrics docs use."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from glue_incremental_tools import runner

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def finished(**summary: int) -> list[str]:
    start = datetime(2024, 5, 1, tzinfo=UTC)
    run = runner.JobRun(
        job_name="gi-local-orders",
        run_id="jr_1",
        state=runner.SUCCEEDED,
        arguments={},
        argv=[],
        exit_code=0,
        started_on=start,
        completed_on=start,
        summary=dict(summary),
    )
    lines: list[str] = []
    runner.describe(run, lines.append)
    return lines


def test_a_run_writing_more_rows_than_it_read_says_what_it_wrote():
    lines = finished(records_read=2, records_new=2, records_written=3)
    assert lines[0].endswith("SUCCEEDED in 0.0 s, read 2 (2 new), wrote 3"), lines
    assert lines[1] == f"  wrote: {runner.WROTE}"
    assert "partition the run rewrote, unchanged ones included" in lines[1]
    # The metrics page says the same of RecordsWritten.
    assert "rows of every partition the run rewrote" in " ".join(OPERATIONS.read_text().split())


def test_a_run_writing_what_it_read_is_one_line():
    assert finished(records_read=60, records_new=60, records_written=60) == [
        "run jr_1 of gi-local-orders: SUCCEEDED in 0.0 s, read 60 (60 new), wrote 60"
    ]


def test_a_run_writing_fewer_rows_than_it_read_is_one_line():
    # A custom job's aggregate: the rewrite explanation would explain nothing.
    assert finished(records_read=4, records_written=3) == [
        "run jr_1 of gi-local-orders: SUCCEEDED in 0.0 s, read 4, wrote 3"
    ]


def test_a_history_run_says_how_many_versions_it_opened_and_closed():
    assert finished(
        records_read=1, records_new=1, records_written=1, versions_opened=1, versions_closed=1
    ) == [
        "run jr_1 of gi-local-orders: SUCCEEDED in 0.0 s, read 1 (1 new), wrote 1; "
        "versions opened 1, closed 1"
    ]


def test_a_history_run_that_changed_no_version_says_so():
    line = finished(records_read=0, records_written=0, versions_opened=0, versions_closed=0)
    assert line == [
        "run jr_1 of gi-local-orders: SUCCEEDED in 0.0 s, read 0, wrote 0; "
        "versions opened 0, closed 0"
    ]


def test_the_version_counts_come_from_the_summary_and_only_a_history_run_has_them():
    assert runner.version_counts({"versions_opened": 2, "versions_closed": 0}) == (
        "; versions opened 2, closed 0"
    )
    assert runner.version_counts({"records_read": 5, "records_written": 5}) == ""
