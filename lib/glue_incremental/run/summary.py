"""What a run did, typed: its counts (metrics and summary) and the one summary line.

``RunSummary.line`` is the only definition of the JSON line a run ends with (keys read
by on-call, ``status``, the runner and the tests): fixed fields, then the counts, then
the job's details (plan, snapshot ids, errors after the commit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TypeAlias

from glue_incremental.run.metrics import RunMetrics

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"


def jsonable(value: object) -> JsonValue:
    """``value`` as JSON data: mappings and sequences recursively, dates as ISO text."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


@dataclass(frozen=True)
class RunCounts:
    """The run's figures; ``records_new`` (rows not already loaded) is what the zero-record
    alarm watches."""

    records_read: int = 0
    records_written: int = 0
    records_new: int = 0
    watermark_time: datetime | None = None
    late_files_skipped: int = 0
    null_watermark_rows: int = 0
    future_watermark_rows: int = 0
    state_bytes: int | None = None
    records_deleted: int = 0
    # A batched run (``--max_batch_*``): the batches it committed; None when not batched.
    batches: int | None = None
    schema_changes: tuple[str, ...] = ()

    def line_fields(self) -> dict[str, JsonValue]:
        """The counts as the summary line names them (the watermark time becomes the lag)."""
        return {
            "records_read": self.records_read,
            "records_new": self.records_new,
            "records_written": self.records_written,
            "late_files_skipped": self.late_files_skipped,
            "null_watermark_rows": self.null_watermark_rows,
            "future_watermark_rows": self.future_watermark_rows,
            "state_bytes": self.state_bytes,
            "records_deleted": self.records_deleted,
            **({"batches": self.batches} if self.batches is not None else {}),
            # Only when the run changed the target's schema: one phrase per change.
            **({"schema_changes": list(self.schema_changes)} if self.schema_changes else {}),
        }

    def metrics(self, job_name: str, lag: float | None) -> RunMetrics:
        return RunMetrics(
            job_name=job_name,
            records_read=self.records_read,
            records_written=self.records_written,
            watermark_lag_seconds=lag,
            late_files_skipped=self.late_files_skipped,
            null_watermark_rows=self.null_watermark_rows,
            records_new=self.records_new,
            future_watermark_rows=self.future_watermark_rows,
            state_bytes=self.state_bytes,
            records_deleted=self.records_deleted,
            batches=self.batches,
            schema_changes=len(self.schema_changes),
        )


@dataclass(frozen=True)
class RunSummary:
    """The summary line's content; ``counts`` None when the run recorded none."""

    job_name: str
    state_name: str
    run_id: str
    status: str
    bookmark_option: str
    dry_run: bool
    old_watermark: dict[str, JsonValue]
    committed: bool
    duration_seconds: float
    counts: RunCounts | None = None
    details: Mapping[str, JsonValue] = field(default_factory=dict)
    error: str | None = None
    release: str | None = None  # the job's --release; absent from the line when unset

    def line(self) -> dict[str, JsonValue]:
        """The JSON object logged as ``run_summary`` (same keys as ever)."""
        fields: dict[str, JsonValue] = {
            "job_name": self.job_name,
            "state_name": self.state_name,
            "run_id": self.run_id,
            "status": self.status,
            "bookmark_option": self.bookmark_option,
            "dry_run": self.dry_run,
            "old_watermark": self.old_watermark,
            "committed": self.committed,
            "duration_seconds": self.duration_seconds,
            **(self.counts.line_fields() if self.counts else {}),
            **self.details,
        }
        if self.error is not None:
            fields["error"] = self.error
        if self.release is not None:
            fields["release"] = self.release
        return fields
