"""Every error the watermark store raises, each carrying the offending job, run or value."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from botocore.exceptions import ClientError

from glue_incremental import aws
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.watermarks.keys import (
    DEFAULT_SLOT,
    HASH_KEY,
    HISTORY_RETENTION_DAYS,
    ITEM_OVERHEAD_BYTES,
    MAX_ITEM_BYTES,
    RANGE_KEY,
)


class WatermarkError(GlueIncrementalError):
    """Base class of every watermark store error."""


class WatermarkConflict(WatermarkError):
    """Another run committed after this one read the state; nothing was written."""

    def __init__(self, job_name: str, slot: str, expected_version: int, actual_version: int | None):
        self.job_name, self.slot = job_name, slot
        self.expected_version, self.actual_version = expected_version, actual_version
        super().__init__(
            f"watermark conflict for job {job_name!r} (slot {slot!r}): read version "
            f"{expected_version}, but version {actual_version} was committed meanwhile; "
            "nothing was written: rerun to process from the new state"
        )


class WatermarkTableMissing(WatermarkError):
    def __init__(self, table: str) -> None:
        self.table = table
        super().__init__(
            f"DynamoDB table {table!r} does not exist at {aws.endpoint_url('dynamodb') or 'AWS'}: "
            "create it with terraform/modules/watermarks_table, or for local use "
            f"`python -m glue_incremental watermarks create-table --table {table}`"
        )


class WatermarkTableSchemaMismatch(WatermarkError):
    def __init__(self, table: str, actual: Mapping[str, str]) -> None:
        self.table, self.actual = table, actual
        super().__init__(
            f"DynamoDB table {table!r} has key schema {actual}, expected "
            f"{HASH_KEY} (S, HASH) + {RANGE_KEY} (S, RANGE): it is not a watermarks table"
        )


class WatermarkStoreUnavailable(WatermarkError):
    def __init__(self, table: str, cause: str) -> None:
        self.table = table
        super().__init__(f"watermark table {table!r} unavailable: {cause}")


class WatermarkItemTooLarge(WatermarkError, ValueError):
    def __init__(self, job_name: str, size: int) -> None:
        self.job_name, self.size = job_name, size
        super().__init__(
            f"watermark for job {job_name!r} would be {size} bytes, over the "
            f"{MAX_ITEM_BYTES - ITEM_OVERHEAD_BYTES}-byte budget under DynamoDB's "
            f"{MAX_ITEM_BYTES}-byte item limit: store a cursor, not the data it points to"
        )


class UnknownJob(WatermarkError, LookupError):
    def __init__(self, job_name: str, slot: str = DEFAULT_SLOT) -> None:
        self.job_name, self.slot = job_name, slot
        super().__init__(f"no watermark state for job {job_name!r} (slot {slot!r})")


class UnknownRun(WatermarkError, LookupError):
    def __init__(self, job_name: str, run_id: str, slot: str = DEFAULT_SLOT) -> None:
        self.job_name, self.run_id, self.slot = job_name, run_id, slot
        super().__init__(
            f"job {job_name!r} (slot {slot!r}) has no committed run {run_id!r} within the "
            f"{HISTORY_RETENTION_DAYS}-day history retention (older runs expire)"
        )


class LeaseHeld(WatermarkError):
    def __init__(self, job_name: str, holder: str, expires_at: float) -> None:
        self.job_name, self.holder, self.expires_at = job_name, holder, expires_at
        until = datetime.fromtimestamp(expires_at, UTC).isoformat(timespec="seconds")
        super().__init__(
            f"job {job_name!r} is already running: run {holder!r} holds its lease until {until}; "
            "this run stopped before reading or writing anything"
        )


class LeaseLost(WatermarkError):
    def __init__(self, job_name: str, run_id: str, token: int, holder: str | None = None):
        self.job_name, self.run_id, self.token, self.holder = job_name, run_id, token, holder
        super().__init__(
            f"run {run_id!r} of job {job_name!r} lost its lease (token {token}"
            + (f", now held by {holder!r}" if holder else "")
            + "): it must not write output or move the watermark"
        )


def error_code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


class RewindAcrossLayoutChange(WatermarkError, ValueError):
    """A rewind to a run written under another target layout than the current state's."""

    def __init__(
        self, job_name: str, run_id: str, then: Mapping[str, object], now: Mapping[str, object]
    ) -> None:
        self.job_name, self.run_id, self.then, self.now = job_name, run_id, then, now
        super().__init__(
            f"job {job_name!r}: run {run_id!r} wrote its output under another layout ({then}) "
            f"than the current state ({now}); the target on disk is in the current one, so "
            "nothing was rewound: rewind to a run after the change, or reset (a full reload)"
        )
