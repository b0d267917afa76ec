"""The watermark store: per-job state in the DynamoDB table ``glue-watermarks``.

Keeps the playbook's API (``get_watermark``, ``create_watermark_item``,
``add_watermark``) and makes it safe: the latest *committed* state is one item read
with one consistent ``GetItem`` (``None`` on the first run); commits are optimistic
(``WatermarkConflict``, nothing written) and write state, history and run pointer
in one transaction; a run lease with a fencing token keeps a second or zombie run
from committing (``LeaseHeld``, ``LeaseLost``). Item layout and design notes:
``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

import getpass
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from glue_incremental import aws
from glue_incremental.encoding import InvalidWatermarkValue, decode, encode

log = logging.getLogger("glue_incremental.watermarks")

DEFAULT_TABLE = "glue-watermarks"
DEFAULT_SLOT = "default"
HASH_KEY = "job_name"
RANGE_KEY = "sk"
# DynamoDB's hard item limit; attribute names and a little slack count too.
MAX_ITEM_BYTES = 400 * 1024
_ITEM_OVERHEAD_BYTES = 1024
_THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "Throttling",
}

ChangeKind = Literal["run", "reset", "rewind", "set"]

__all__ = [
    "DEFAULT_TABLE",
    "InvalidWatermarkValue",
    "Lease",
    "LeaseHeld",
    "LeaseLost",
    "UnknownJob",
    "UnknownRun",
    "WatermarkConflict",
    "WatermarkError",
    "WatermarkItem",
    "WatermarkItemTooLarge",
    "WatermarkStoreUnavailable",
    "WatermarkTableMissing",
    "WatermarkTableSchemaMismatch",
    "Watermarks",
    "create_table",
]


class WatermarkError(Exception):
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
    def __init__(self, table: str, actual: Any) -> None:
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
            f"{MAX_ITEM_BYTES - _ITEM_OVERHEAD_BYTES}-byte budget under DynamoDB's "
            f"{MAX_ITEM_BYTES}-byte item limit: store a cursor, not the data it points to"
        )


class UnknownJob(WatermarkError, LookupError):
    def __init__(self, job_name: str, slot: str = DEFAULT_SLOT) -> None:
        self.job_name, self.slot = job_name, slot
        super().__init__(f"no watermark state for job {job_name!r} (slot {slot!r})")


class UnknownRun(WatermarkError, LookupError):
    def __init__(self, job_name: str, run_id: str, slot: str = DEFAULT_SLOT) -> None:
        self.job_name, self.run_id, self.slot = job_name, run_id, slot
        super().__init__(f"job {job_name!r} (slot {slot!r}) has no committed run {run_id!r}")


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


@dataclass(frozen=True)
class WatermarkItem:
    """A state ready to commit: the values plus the version it was computed from."""

    job_name: str
    job_run_id: str
    watermarks: Mapping[str, Any]
    slot: str = DEFAULT_SLOT
    expected_version: int = 0
    kind: ChangeKind = "run"
    note: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:  # playbook code indexes the item like a dict
        return self.as_dict()[key]

    def as_dict(self) -> dict[str, Any]:
        return {
            "job_name": self.job_name,
            "job_run_id": self.job_run_id,
            "slot": self.slot,
            "watermarks": dict(self.watermarks),
            "expected_version": self.expected_version,
        }


@dataclass
class Lease:
    """A run's exclusive right to a job's state, fenced by a monotonically rising token."""

    store: Watermarks
    job_name: str
    run_id: str
    token: int
    expires_at: float
    seconds: int
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def check(self) -> None:
        """Raise LeaseLost unless this run still holds the lease (one consistent read)."""
        current = self.store._get(self.job_name, "LEASE")
        holder = current.get("owner", {}).get("S") if current else None
        token = int(current["token"]["N"]) if current else None
        expires = float(current["expires_at"]["N"]) if current else 0.0
        if holder != self.run_id or token != self.token or expires <= time.time():
            raise LeaseLost(self.job_name, self.run_id, self.token, holder)

    def renew(self) -> None:
        expires = time.time() + self.seconds
        try:
            self.store._call(
                "update_item",
                Key=self.store._key(self.job_name, "LEASE"),
                UpdateExpression="SET expires_at = :exp",
                ConditionExpression="#owner = :run AND #token = :token AND expires_at > :now",
                ExpressionAttributeNames={"#owner": "owner", "#token": "token"},
                ExpressionAttributeValues={
                    ":exp": {"N": repr(expires)},
                    ":run": {"S": self.run_id},
                    ":token": {"N": str(self.token)},
                    ":now": {"N": repr(time.time())},
                },
            )
        except ClientError as error:
            if _code(error) == "ConditionalCheckFailedException":
                raise LeaseLost(self.job_name, self.run_id, self.token) from None
            raise
        self.expires_at = expires

    def release(self) -> None:
        """Give the lease up early; a lease already taken over is left alone."""
        self.stop_heartbeat()
        try:
            self.store._call(
                "update_item",
                Key=self.store._key(self.job_name, "LEASE"),
                UpdateExpression="SET expires_at = :zero",
                ConditionExpression="#owner = :run AND #token = :token",
                ExpressionAttributeNames={"#owner": "owner", "#token": "token"},
                ExpressionAttributeValues={
                    ":zero": {"N": "0"},
                    ":run": {"S": self.run_id},
                    ":token": {"N": str(self.token)},
                },
            )
        except ClientError as error:
            if _code(error) != "ConditionalCheckFailedException":
                raise

    def start_heartbeat(self, interval: float | None = None) -> None:
        """Renew in the background every third of the lease, until released or lost.

        A failed renewal (throttling, a 500, a network error) is logged and
        retried with exponential backoff, capped so that attempts continue until
        the lease has really expired; only then, or on LeaseLost (another run
        took over), does the heartbeat stop. The commit's fencing check reports
        a lost lease to the run.
        """
        period = interval or max(1.0, self.seconds / 3)
        self._thread = threading.Thread(
            target=self._beat, args=(period,), name=f"lease-{self.job_name}", daemon=True
        )
        self._thread.start()

    def _beat(self, period: float) -> None:
        wait = period
        failures = 0
        while not self._stop.wait(wait):
            try:
                self.renew()
            except LeaseLost:
                log.error("lease of run %s (job %s) was taken over", self.run_id, self.job_name)
                return
            except Exception as error:
                failures += 1
                remaining = self.expires_at - time.time()
                log.warning(
                    "lease renewal %d for run %s (job %s) failed: %s; %.1fs of lease left",
                    failures,
                    self.run_id,
                    self.job_name,
                    str(error).splitlines()[0] if str(error) else type(error).__name__,
                    remaining,
                )
                if remaining <= 0:
                    log.error("lease of run %s (job %s) expired", self.run_id, self.job_name)
                    return
                backoff = min(period, 0.1 * 2 ** min(failures, 10))
                wait = max(0.01, min(backoff, remaining / 2))
                continue
            failures = 0
            wait = period

    def stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


@dataclass(frozen=True)
class HistoryPage:
    items: list[dict[str, Any]]
    next_token: str | None


class Watermarks:
    """Read and commit job watermarks in a DynamoDB table (default ``glue-watermarks``).

    First run: ``get_watermark`` returns None (no exception). The object
    remembers the version it read per job and slot; ``create_watermark_item``
    carries that version so ``add_watermark`` can refuse to overwrite a commit
    made in between. Items are validated before any request: see
    ``glue_incremental.encoding`` for what values can be stored.
    """

    def __init__(self, table_name: str = DEFAULT_TABLE, *, client: Any = None) -> None:
        if not table_name or not isinstance(table_name, str):
            raise ValueError(
                f"watermarks table name must be a non-empty string, got {table_name!r}"
            )
        self.table_name = table_name
        self._client = client
        self._read_versions: dict[tuple[str, str], int] = {}

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = aws.client("dynamodb")
        return self._client

    # -- reading -------------------------------------------------------------------------

    def get_watermark(self, job_name: str, slot: str = DEFAULT_SLOT) -> dict[str, Any] | None:
        """The most recently committed state of ``job_name``, or None.

        None on the first run and after ``reset``. One consistent ``GetItem``.
        The returned dict has ``watermarks`` (the values), ``job_run_id``,
        ``version``, ``committed_at`` and ``kind``.
        """
        _check_names(job_name, slot)
        raw = self._get(job_name, f"STATE#{slot}")
        state = _state_from_item(raw) if raw else None
        self._read_versions[(job_name, slot)] = state["version"] if state else 0
        if state is None or state["watermarks"] is None:
            return None
        return state

    def current_state(self, job_name: str, slot: str = DEFAULT_SLOT) -> dict[str, Any] | None:
        """Like ``get_watermark`` but also returns a reset state (``watermarks`` None)."""
        _check_names(job_name, slot)
        raw = self._get(job_name, f"STATE#{slot}")
        state = _state_from_item(raw) if raw else None
        self._read_versions[(job_name, slot)] = state["version"] if state else 0
        return state

    def read_version(self, job_name: str, slot: str = DEFAULT_SLOT) -> int | None:
        """The version this object last read for the job (0: no state), None if never read."""
        return self._read_versions.get((job_name, slot))

    def state_after_run(
        self, job_name: str, run_id: str, slot: str = DEFAULT_SLOT
    ) -> dict[str, Any]:
        """The values that run ``run_id`` committed (for replays and rewinds)."""
        _check_names(job_name, slot)
        pointer = self._get(job_name, f"RUN#{slot}#{run_id}")
        if not pointer:
            raise UnknownRun(job_name, run_id, slot)
        version = int(pointer["version"]["N"])
        raw = self._get(job_name, f"HIST#{slot}#{version:012d}")
        if not raw:
            raise UnknownRun(job_name, run_id, slot)
        return _state_from_item(raw)

    def history(
        self,
        job_name: str,
        slot: str = DEFAULT_SLOT,
        *,
        limit: int = 50,
        next_token: str | None = None,
    ) -> HistoryPage:
        """Committed changes, newest first, ``limit`` per page (pass ``next_token`` on)."""
        _check_names(job_name, slot)
        if limit < 1:
            raise ValueError(f"history limit must be at least 1, got {limit}")
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#pk": HASH_KEY, "#sk": RANGE_KEY},
            "ExpressionAttributeValues": {
                ":pk": {"S": job_name},
                ":prefix": {"S": f"HIST#{slot}#"},
            },
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": limit,
        }
        if next_token:
            if not next_token.startswith(f"HIST#{slot}#"):
                raise ValueError(
                    f"next_token {next_token!r} is not a history token of job {job_name!r} "
                    f"(slot {slot!r}): pass the next_token of the previous page unchanged"
                )
            params["ExclusiveStartKey"] = self._key(job_name, next_token)
        response = self._call("query", **params)
        items = [_state_from_item(raw) for raw in response.get("Items", [])]
        last = response.get("LastEvaluatedKey")
        return HistoryPage(items, last[RANGE_KEY]["S"] if last else None)

    def iter_history(self, job_name: str, slot: str = DEFAULT_SLOT) -> Iterable[dict[str, Any]]:
        token = None
        while True:
            page = self.history(job_name, slot, limit=100, next_token=token)
            yield from page.items
            if not page.next_token:
                return
            token = page.next_token

    def slots(self, job_name: str) -> list[str]:
        """The slots that have state for ``job_name``."""
        _check_names(job_name, DEFAULT_SLOT)
        response = self._call(
            "query",
            TableName=self.table_name,
            KeyConditionExpression="#pk = :pk AND begins_with(#sk, :prefix)",
            ExpressionAttributeNames={"#pk": HASH_KEY, "#sk": RANGE_KEY},
            ExpressionAttributeValues={":pk": {"S": job_name}, ":prefix": {"S": "STATE#"}},
            ConsistentRead=True,
        )
        return [item[RANGE_KEY]["S"].split("#", 1)[1] for item in response.get("Items", [])]

    # -- committing -------------------------------------------------------------------------

    def create_watermark_item(
        self, job_name: str, job_run_id: str, *, slot: str = DEFAULT_SLOT, **watermarks: Any
    ) -> WatermarkItem:
        """Build the state to commit. Validates values now, before any request.

        The item expects the version this object last read for the job. If the
        job was never read through this object, the current version is read
        now: a concurrent commit after this point is still detected.
        """
        _check_names(job_name, slot)
        if not job_run_id or not isinstance(job_run_id, str):
            raise ValueError(f"job_run_id must be a non-empty string, got {job_run_id!r}")
        encode(watermarks)
        # The size check too, before the read below: an oversized state fails with no request.
        self._state_item(WatermarkItem(job_name, job_run_id, watermarks, slot), 1, _now_iso())
        if (job_name, slot) not in self._read_versions:
            self.current_state(job_name, slot)
        return WatermarkItem(
            job_name=job_name,
            job_run_id=job_run_id,
            watermarks=watermarks,
            slot=slot,
            expected_version=self._read_versions[(job_name, slot)],
        )

    def check_fits(
        self, job_name: str, job_run_id: str, values: Mapping[str, Any], *, slot: str = DEFAULT_SLOT
    ) -> None:
        """Raise WatermarkItemTooLarge (or InvalidWatermarkValue) now, with no request.

        Jobs call it before writing output, so a state that could never be
        committed stops the run before anything is published.
        """
        _check_names(job_name, slot)
        encode(values)
        self._state_item(WatermarkItem(job_name, job_run_id, values, slot), 1, _now_iso())

    def add_watermark(self, item: WatermarkItem, *, lease: Lease | None = None) -> dict[str, Any]:
        """Commit ``item`` if no other commit happened since it was read.

        Raises WatermarkConflict (nothing written) when another run committed
        first, and LeaseLost when ``lease`` is given and no longer held.
        """
        return self.commit_many([item], lease=lease)[0]

    def commit_many(
        self, items: Sequence[WatermarkItem], *, lease: Lease | None = None
    ) -> list[dict[str, Any]]:
        """Commit several states (slots or jobs) in one transaction: all or nothing."""
        if not items:
            raise ValueError("commit_many needs at least one item")
        keys = [(item.job_name, item.slot) for item in items]
        if len(set(keys)) != len(keys):
            raise ValueError(f"commit_many got the same job/slot twice: {keys}")
        now = _now_iso()
        actions: list[dict[str, Any]] = []
        committed = []
        for item in items:
            state_item = self._state_item(item, item.expected_version + 1, now)
            condition: dict[str, Any] = (
                {"ConditionExpression": "attribute_not_exists(#sk)"}
                if item.expected_version == 0
                else {
                    "ConditionExpression": "#version = :expected",
                    "ExpressionAttributeValues": {":expected": {"N": str(item.expected_version)}},
                }
            )
            names = {"#sk": RANGE_KEY} if item.expected_version == 0 else {"#version": "version"}
            actions.append(
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": state_item,
                        "ExpressionAttributeNames": names,
                        **condition,
                    }
                }
            )
            history_item = {
                **state_item,
                RANGE_KEY: {"S": f"HIST#{item.slot}#{item.expected_version + 1:012d}"},
            }
            actions.append({"Put": {"TableName": self.table_name, "Item": history_item}})
            if item.kind == "run":
                pointer = {
                    **self._key(item.job_name, f"RUN#{item.slot}#{item.job_run_id}"),
                    "version": {"N": str(item.expected_version + 1)},
                }
                actions.append({"Put": {"TableName": self.table_name, "Item": pointer}})
            committed.append(_state_from_item(state_item))
        if lease is not None:
            actions.append(
                {
                    "ConditionCheck": {
                        "TableName": self.table_name,
                        "Key": self._key(lease.job_name, "LEASE"),
                        "ConditionExpression": (
                            "#owner = :run AND #token = :token AND expires_at > :now"
                        ),
                        "ExpressionAttributeNames": {"#owner": "owner", "#token": "token"},
                        "ExpressionAttributeValues": {
                            ":run": {"S": lease.run_id},
                            ":token": {"N": str(lease.token)},
                            ":now": {"N": repr(time.time())},
                        },
                    }
                }
            )
        try:
            self._call("transact_write_items", TransactItems=actions)
        except ClientError as error:
            if _code(error) in {"TransactionCanceledException", "ConditionalCheckFailedException"}:
                self._raise_cancellation(error, items, actions, lease)
            raise
        for item, state in zip(items, committed, strict=True):
            self._read_versions[(item.job_name, item.slot)] = state["version"]
        return committed

    def reset(
        self,
        job_name: str,
        slot: str | None = None,
        *,
        who: str | None = None,
        why: str = "",
        note: Mapping[str, str] | None = None,
    ) -> None:
        """Make the next run start from None (a full load). History is kept for audit.

        ``slot`` None resets every slot of the job. ``note`` adds attributes to the history.
        """
        slots = [slot] if slot else self.slots(job_name)
        if not slots:
            raise UnknownJob(job_name)
        for each in slots:
            self._manual_change(job_name, each, None, "reset", who, why, note)

    def rewind(
        self,
        job_name: str,
        run_id: str,
        slot: str = DEFAULT_SLOT,
        *,
        who: str | None = None,
        why: str = "",
        note: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Make the state after ``run_id`` current again (recorded as a new version).

        ``note`` adds attributes to the history entry (an output rollback, for example).
        """
        target = self.state_after_run(job_name, run_id, slot)
        return self._manual_change(
            job_name,
            slot,
            target["watermarks"],
            "rewind",
            who,
            why,
            {"rewound_to_run": run_id, **(note or {})},
        )

    def set(
        self,
        job_name: str,
        slot: str = DEFAULT_SLOT,
        *,
        who: str | None = None,
        why: str = "",
        **attrs: Any,
    ) -> dict[str, Any]:
        """Set values directly (skip-ahead, precise backfills), merged onto the current ones.

        Recorded in history as a manual change with who and why; Glue's own
        bookmarks offer only reset and rewind.
        """
        if not attrs:
            raise ValueError("set needs at least one attribute, e.g. last_modified=...")
        current = self.current_state(job_name, slot)
        values = {**((current or {}).get("watermarks") or {}), **attrs}
        return self._manual_change(job_name, slot, values, "set", who, why, expected=current)

    # -- leases -----------------------------------------------------------------------------

    def acquire_lease(self, job_name: str, run_id: str, *, seconds: int = 900) -> Lease:
        """Take the job's run lease before reading anything.

        Raises LeaseHeld naming the holder when another run holds an unexpired
        lease. An expired lease (a crashed run) is taken over; the token rises
        so the old holder's commit fails.
        """
        _check_names(job_name, DEFAULT_SLOT)
        if seconds < 1:
            raise ValueError(f"lease seconds must be positive, got {seconds}")
        now = time.time()
        try:
            response = self._call(
                "update_item",
                Key=self._key(job_name, "LEASE"),
                UpdateExpression=(
                    "SET #owner = :run, expires_at = :exp, acquired_at = :at ADD #token :one"
                ),
                ConditionExpression=(
                    "attribute_not_exists(#sk) OR expires_at <= :now OR #owner = :run"
                ),
                ExpressionAttributeNames={"#owner": "owner", "#token": "token", "#sk": RANGE_KEY},
                ExpressionAttributeValues={
                    ":run": {"S": run_id},
                    ":exp": {"N": repr(now + seconds)},
                    ":at": {"S": _now_iso()},
                    ":one": {"N": "1"},
                    ":now": {"N": repr(now)},
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if _code(error) == "ConditionalCheckFailedException":
                holder = self._get(job_name, "LEASE") or {}
                raise LeaseHeld(
                    job_name,
                    holder.get("owner", {}).get("S", "?"),
                    float(holder.get("expires_at", {}).get("N", "0")),
                ) from None
            raise
        attributes = response["Attributes"]
        return Lease(self, job_name, run_id, int(attributes["token"]["N"]), now + seconds, seconds)

    # -- internals ----------------------------------------------------------------------------

    def _manual_change(
        self,
        job_name: str,
        slot: str,
        values: Mapping[str, Any] | None,
        kind: ChangeKind,
        who: str | None,
        why: str,
        extra: Mapping[str, str] | None = None,
        expected: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        current = expected if expected is not None else self.current_state(job_name, slot)
        if current is None and kind != "set":
            raise UnknownJob(job_name, slot)
        item = WatermarkItem(
            job_name=job_name,
            job_run_id=f"manual-{kind}",
            watermarks=values,  # type: ignore[arg-type]
            slot=slot,
            expected_version=current["version"] if current else 0,
            kind=kind,
            note={"who": who or _whoami(), "why": why, **(extra or {})},
        )
        return self.commit_many([item])[0]

    def _state_item(self, item: WatermarkItem, version: int, now: str) -> dict[str, Any]:
        encoded = "null" if item.watermarks is None else encode(item.watermarks)
        attributes: dict[str, Any] = {
            **self._key(item.job_name, f"STATE#{item.slot}"),
            "slot": {"S": item.slot},
            "version": {"N": str(version)},
            "job_run_id": {"S": item.job_run_id},
            "watermarks": {"S": encoded},
            "committed_at": {"S": now},
            "kind": {"S": item.kind},
        }
        for key, value in item.note.items():
            attributes[f"note_{key}"] = {"S": str(value)}
        # DynamoDB counts UTF-8 bytes of names and values, not characters.
        size = sum(
            len(name.encode()) + len(next(iter(value.values())).encode())
            for name, value in attributes.items()
        )
        if size + _ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
            raise WatermarkItemTooLarge(item.job_name, size)
        return attributes

    def _raise_cancellation(
        self,
        error: ClientError,
        items: Sequence[WatermarkItem],
        actions: list[dict[str, Any]],
        lease: Lease | None,
    ) -> None:
        reasons = error.response.get("CancellationReasons") or []
        failed = {
            index
            for index, reason in enumerate(reasons)
            if reason.get("Code") not in (None, "None")
        }
        if lease is not None and (not reasons or len(actions) - 1 in failed):
            try:
                lease.check()
            except LeaseLost as lost:
                raise lost from None  # names the new holder
        for item in items:
            state = self._get(item.job_name, f"STATE#{item.slot}")
            actual = int(state["version"]["N"]) if state else 0
            if actual != item.expected_version:
                raise WatermarkConflict(
                    item.job_name, item.slot, item.expected_version, actual
                ) from None
        raise WatermarkStoreUnavailable(
            self.table_name, f"commit cancelled: {reasons or error}"
        ) from None

    def _key(self, job_name: str, sk: str) -> dict[str, Any]:
        return {HASH_KEY: {"S": job_name}, RANGE_KEY: {"S": sk}}

    def _get(self, job_name: str, sk: str) -> dict[str, Any] | None:
        response = self._call("get_item", Key=self._key(job_name, sk), ConsistentRead=True)
        return response.get("Item")

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        if operation != "transact_write_items":
            params.setdefault("TableName", self.table_name)
        try:
            return getattr(self.client, operation)(**params)
        except ClientError as error:
            code = _code(error)
            if code == "ResourceNotFoundException":
                raise WatermarkTableMissing(self.table_name) from None
            if code in _THROTTLING_CODES:
                attempts = error.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) + 1
                raise WatermarkStoreUnavailable(
                    self.table_name,
                    f"DynamoDB throttled the request ({code}) after {attempts} attempts; "
                    "raise the table's capacity or retry later",
                ) from None
            if code == "ValidationException" and "key" in str(error).lower():
                self._raise_schema_mismatch(error)
            raise
        except EndpointConnectionError as error:
            raise WatermarkStoreUnavailable(
                self.table_name, f"cannot reach DynamoDB: {error}"
            ) from None
        except NoCredentialsError:
            raise WatermarkStoreUnavailable(
                self.table_name, "no AWS credentials found (set a profile, role or AWS_* variables)"
            ) from None

    def _raise_schema_mismatch(self, error: ClientError) -> None:
        try:
            table = self.client.describe_table(TableName=self.table_name)["Table"]
        except ClientError:
            raise error from None
        schema = {entry["AttributeName"]: entry["KeyType"] for entry in table["KeySchema"]}
        if schema != {HASH_KEY: "HASH", RANGE_KEY: "RANGE"}:
            raise WatermarkTableSchemaMismatch(self.table_name, schema) from None
        raise error


def create_table(table_name: str = DEFAULT_TABLE, *, client: Any = None) -> None:
    """Create the table with the library's key schema (tests, demo, local use).

    Production tables come from ``terraform/modules/watermarks_table``.
    """
    dynamodb = client or aws.client("dynamodb")
    try:
        dynamodb.create_table(
            TableName=table_name,
            KeySchema=[
                {"AttributeName": HASH_KEY, "KeyType": "HASH"},
                {"AttributeName": RANGE_KEY, "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": HASH_KEY, "AttributeType": "S"},
                {"AttributeName": RANGE_KEY, "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
    except ClientError as error:
        if _code(error) != "ResourceInUseException":
            raise
    dynamodb.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )


def _state_from_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    state = {
        "job_name": raw[HASH_KEY]["S"],
        "slot": raw.get("slot", {}).get("S", DEFAULT_SLOT),
        "job_run_id": raw["job_run_id"]["S"],
        "version": int(raw["version"]["N"]),
        "committed_at": raw["committed_at"]["S"],
        "kind": raw.get("kind", {}).get("S", "run"),
        "watermarks": decode(raw["watermarks"]["S"]),
    }
    for name, value in raw.items():
        if name.startswith("note_"):
            state[name[5:]] = value["S"]
    return state


def _check_names(job_name: str, slot: str) -> None:
    if not isinstance(job_name, str) or not job_name.strip():
        raise ValueError(f"job name must be a non-empty string, got {job_name!r}")
    if len(job_name) > 255:
        raise ValueError(f"job name is {len(job_name)} characters, over 255: {job_name[:40]!r}...")
    if not isinstance(slot, str) or not slot or "#" in slot:
        raise ValueError(f"slot must be a non-empty string without '#', got {slot!r}")


def _code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _whoami() -> str:
    try:
        return os.environ.get("GLUE_INCREMENTAL_ACTOR") or getpass.getuser()
    except Exception:
        return "unknown"
