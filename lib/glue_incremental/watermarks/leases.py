"""Run leases: one run at a time per job, fenced by a token that rises on every takeover.

A run takes the ``LEASE`` item before reading anything (``LeaseHeld`` names the holder);
an expired lease (a crashed run) is taken over. Every commit re-checks owner, token and
expiry in the same transaction, so a zombie run cannot commit (``LeaseLost``). Expiry is
judged on the store's injected clock. Design: ``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from glue_incremental.watermarks.errors import LeaseHeld, LeaseLost, error_code
from glue_incremental.watermarks.keys import (
    LEASE_KEY,
    RANGE_KEY,
    Item,
    TransactItem,
    item_key,
)

if TYPE_CHECKING:
    from glue_incremental.watermarks.store import Watermarks

log = logging.getLogger("glue_incremental.watermarks")

_HELD = "#owner = :run AND #token = :token"
_NAMES = {"#owner": "owner", "#token": "token"}


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

    def _held(self) -> Item:
        return {":run": {"S": self.run_id}, ":token": {"N": str(self.token)}}

    def check(self) -> None:
        """Raise LeaseLost unless this run still holds the lease (one consistent read)."""
        current = self.store._get(self.job_name, LEASE_KEY)
        holder = current.get("owner", {}).get("S") if current else None
        token = int(current["token"]["N"]) if current else None
        expires = float(current["expires_at"]["N"]) if current else 0.0
        if holder != self.run_id or token != self.token or expires <= self.store.clock():
            raise LeaseLost(self.job_name, self.run_id, self.token, holder)

    def renew(self) -> None:
        now = self.store.clock()
        expires = now + self.seconds
        try:
            self.store._call(
                "update_item",
                Key=item_key(self.job_name, LEASE_KEY),
                UpdateExpression="SET expires_at = :exp",
                ConditionExpression=f"{_HELD} AND expires_at > :now",
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={
                    ":exp": {"N": repr(expires)},
                    ":now": {"N": repr(now)},
                    **self._held(),
                },
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise LeaseLost(self.job_name, self.run_id, self.token) from None
            raise
        self.expires_at = expires

    def release(self) -> None:
        """Give the lease up early; a lease already taken over is left alone."""
        self.stop_heartbeat()
        try:
            self.store._call(
                "update_item",
                Key=item_key(self.job_name, LEASE_KEY),
                UpdateExpression="SET expires_at = :zero",
                ConditionExpression=_HELD,
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={":zero": {"N": "0"}, **self._held()},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def commit_condition(self, table_name: str) -> TransactItem:
        """The transaction item that makes a commit fail unless this lease is still held."""
        return {
            "ConditionCheck": {
                "TableName": table_name,
                "Key": item_key(self.job_name, LEASE_KEY),
                "ConditionExpression": f"{_HELD} AND expires_at > :now",
                "ExpressionAttributeNames": _NAMES,
                "ExpressionAttributeValues": {
                    ":now": {"N": repr(self.store.clock())},
                    **self._held(),
                },
            }
        }

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
                remaining = self._renewal_failed(failures, error)
                if remaining <= 0:
                    log.error("lease of run %s (job %s) expired", self.run_id, self.job_name)
                    return
                backoff = min(period, 0.1 * 2 ** min(failures, 10))
                wait = max(0.01, min(backoff, remaining / 2))
                continue
            failures = 0
            wait = period

    def _renewal_failed(self, failures: int, error: Exception) -> float:
        """Log a failed renewal; return the seconds of lease left."""
        remaining = self.expires_at - self.store.clock()
        log.warning(
            "lease renewal %d for run %s (job %s) failed: %s; %.1fs of lease left",
            failures,
            self.run_id,
            self.job_name,
            str(error).splitlines()[0] if str(error) else type(error).__name__,
            remaining,
        )
        return remaining

    def stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def acquire_lease(store: Watermarks, job_name: str, run_id: str, seconds: int) -> Lease:
    """Take ``job_name``'s lease for ``run_id`` (see ``Watermarks.acquire_lease``)."""
    if seconds < 1:
        raise ValueError(f"lease seconds must be positive, got {seconds}")
    now = store.clock()
    try:
        response = store._call(
            "update_item",
            Key=item_key(job_name, LEASE_KEY),
            UpdateExpression=(
                "SET #owner = :run, expires_at = :exp, acquired_at = :at ADD #token :one"
            ),
            ConditionExpression="attribute_not_exists(#sk) OR expires_at <= :now OR #owner = :run",
            ExpressionAttributeNames={**_NAMES, "#sk": RANGE_KEY},
            ExpressionAttributeValues={
                ":run": {"S": run_id},
                ":exp": {"N": repr(now + seconds)},
                ":at": {"S": store.now_iso()},
                ":one": {"N": "1"},
                ":now": {"N": repr(now)},
            },
            ReturnValues="ALL_NEW",
        )
    except ClientError as error:
        if error_code(error) == "ConditionalCheckFailedException":
            holder = store._get(job_name, LEASE_KEY) or {}
            raise LeaseHeld(
                job_name,
                holder.get("owner", {}).get("S", "?"),
                float(holder.get("expires_at", {}).get("N", "0")),
            ) from None
        raise
    token = int(response["Attributes"]["token"]["N"])
    return Lease(store, job_name, run_id, token, now + seconds, seconds)
