"""The watermark store: per-job state in the DynamoDB table ``glue-watermarks``.

Keeps the playbook's API (``get_watermark``, ``create_watermark_item``,
``add_watermark``) and makes it safe: the latest *committed* state is one item read
with one consistent ``GetItem`` (``None`` on the first run); commits are optimistic
(``WatermarkConflict``, nothing written) and write state, history and run pointer
in one transaction; a run lease fences out a second or zombie run. Design notes:
``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

import getpass
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol, TypedDict

from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from glue_incremental import aws
from glue_incremental.errors import InvalidName
from glue_incremental.watermarks.encoding import encode
from glue_incremental.watermarks.errors import (
    LeaseLost,
    RewindAcrossLayoutChange,
    UnknownJob,
    UnknownRun,
    WatermarkConflict,
    WatermarkStoreUnavailable,
    WatermarkTableMissing,
    WatermarkTableSchemaMismatch,
    error_code,
)
from glue_incremental.watermarks.items import (
    ChangeKind,
    CommittedState,
    HistoryPage,
    WatermarkItem,
    state_attributes,
    state_from_item,
)
from glue_incremental.watermarks.keys import (
    DEFAULT_SLOT,
    DEFAULT_TABLE,
    EXPIRES_ATTRIBUTE,
    HASH_KEY,
    HISTORY_RETENTION_DAYS,
    RANGE_KEY,
    STATE_PREFIX,
    Item,
    Request,
    TransactItem,
    check_names,
    history_key,
    history_prefix,
    item_key,
    run_key,
    slot_of_state_key,
    state_key,
)
from glue_incremental.watermarks.leases import Lease, acquire_lease

_THROTTLING_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "Throttling",
}
_CANCELLED = {"TransactionCanceledException", "ConditionalCheckFailedException"}


class KeySchemaElement(TypedDict):
    AttributeName: str
    KeyType: str


class TableDescription(TypedDict):
    KeySchema: list[KeySchemaElement]


class Response(TypedDict, total=False):
    """What the store reads of DynamoDB's responses."""

    Item: Item
    Items: list[Item]
    LastEvaluatedKey: Item
    Attributes: Item
    Table: TableDescription


class Waiter(Protocol):
    def wait(self, **params: object) -> None: ...


class DynamoDBClient(Protocol):
    """The calls the store makes of a DynamoDB client (boto3's ``client("dynamodb")``)."""

    def get_item(self, **params: object) -> Response: ...
    def query(self, **params: object) -> Response: ...
    def update_item(self, **params: object) -> Response: ...
    def transact_write_items(self, **params: object) -> Response: ...
    def describe_table(self, **params: object) -> Response: ...
    def create_table(self, **params: object) -> Response: ...
    def get_waiter(self, name: str) -> Waiter: ...


class Watermarks:
    """Read and commit job watermarks in a DynamoDB table (default ``glue-watermarks``).

    First run: ``get_watermark`` returns None (no exception). The object
    remembers the version it read per job and slot; ``create_watermark_item``
    carries that version so ``add_watermark`` can refuse to overwrite a commit
    made in between. Items are validated before any request: see
    ``glue_incremental.watermarks.encoding`` for what values can be stored. ``clock`` (seconds
    since the epoch) stamps commits and judges lease expiry.
    """

    def __init__(
        self,
        table_name: str = DEFAULT_TABLE,
        *,
        client: DynamoDBClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not table_name or not isinstance(table_name, str):
            raise InvalidName(
                "watermarks table",
                table_name,
                f"watermarks table name must be a non-empty string, got {table_name!r}",
            )
        self.table_name = table_name
        self.clock = clock
        self._client = client
        self._read_versions: dict[tuple[str, str], int] = {}

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            self._client = aws.client("dynamodb")
        return self._client

    def now_iso(self) -> str:
        return datetime.fromtimestamp(self.clock(), UTC).isoformat(timespec="microseconds")

    # -- reading -------------------------------------------------------------------------

    def get_watermark(self, job_name: str, slot: str = DEFAULT_SLOT) -> CommittedState | None:
        """The most recently committed state of ``job_name``, or None.

        None on the first run and after ``reset``. One consistent ``GetItem``.
        The returned dict has ``watermarks`` (the values), ``job_run_id``,
        ``version``, ``committed_at`` and ``kind``.
        """
        state = self.current_state(job_name, slot)
        if state is None or state["watermarks"] is None:
            return None
        return state

    def current_state(self, job_name: str, slot: str = DEFAULT_SLOT) -> CommittedState | None:
        """Like ``get_watermark`` but also returns a reset state (``watermarks`` None)."""
        check_names(job_name, slot)
        raw = self._get(job_name, state_key(slot))
        state = state_from_item(raw) if raw else None
        self._read_versions[(job_name, slot)] = state["version"] if state else 0
        return state

    def read_version(self, job_name: str, slot: str = DEFAULT_SLOT) -> int | None:
        """The version this object last read for the job (0: no state), None if never read."""
        return self._read_versions.get((job_name, slot))

    def state_after_run(
        self, job_name: str, run_id: str, slot: str = DEFAULT_SLOT
    ) -> CommittedState:
        """The values that run ``run_id`` committed (for replays and rewinds)."""
        check_names(job_name, slot)
        pointer = self._get(job_name, run_key(slot, run_id))
        if not pointer or self._expired(pointer):
            raise UnknownRun(job_name, run_id, slot)
        raw = self._get(job_name, history_key(slot, int(pointer["version"]["N"])))
        if not raw or self._expired(raw):
            raise UnknownRun(job_name, run_id, slot)
        return state_from_item(raw)

    def _history_expiry(self) -> int:
        return int(self.clock()) + HISTORY_RETENTION_DAYS * 86_400

    def _expired(self, raw: Item) -> bool:
        # TTL deletes expired items within days, not at once: past retention is gone already.
        expires = raw.get(EXPIRES_ATTRIBUTE)
        return expires is not None and int(expires["N"]) <= self.clock()

    def history(
        self,
        job_name: str,
        slot: str = DEFAULT_SLOT,
        *,
        limit: int = 50,
        next_token: str | None = None,
    ) -> HistoryPage:
        """Committed changes, newest first, ``limit`` per page (pass ``next_token`` on)."""
        check_names(job_name, slot)
        if limit < 1:
            raise ValueError(f"history limit must be at least 1, got {limit}")
        params = self._prefix_query(job_name, history_prefix(slot))
        params["ScanIndexForward"] = False
        params["Limit"] = limit
        if next_token:
            if not next_token.startswith(history_prefix(slot)):
                raise ValueError(
                    f"next_token {next_token!r} is not a history token of job {job_name!r} "
                    f"(slot {slot!r}): pass the next_token of the previous page unchanged"
                )
            params["ExclusiveStartKey"] = item_key(job_name, next_token)
        response = self._call("query", **params)
        items = [state_from_item(raw) for raw in response.get("Items", [])]
        last = response.get("LastEvaluatedKey")
        return HistoryPage(items, last[RANGE_KEY]["S"] if last else None)

    def iter_history(self, job_name: str, slot: str = DEFAULT_SLOT) -> Iterable[CommittedState]:
        token = None
        while True:
            page = self.history(job_name, slot, limit=100, next_token=token)
            yield from page.items
            if not page.next_token:
                return
            token = page.next_token

    def slots(self, job_name: str) -> list[str]:
        """The slots that have state for ``job_name``."""
        check_names(job_name, DEFAULT_SLOT)
        response = self._call("query", **self._prefix_query(job_name, STATE_PREFIX))
        return [slot_of_state_key(item[RANGE_KEY]["S"]) for item in response.get("Items", [])]

    def _prefix_query(self, job_name: str, prefix: str) -> Request:
        return {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#pk": HASH_KEY, "#sk": RANGE_KEY},
            "ExpressionAttributeValues": {":pk": {"S": job_name}, ":prefix": {"S": prefix}},
            "ConsistentRead": True,
        }

    # -- committing -------------------------------------------------------------------------

    def create_watermark_item(
        self, job_name: str, job_run_id: str, *, slot: str = DEFAULT_SLOT, **watermarks: object
    ) -> WatermarkItem:
        """Build the state to commit. Validates values now, before any request.

        The item expects the version this object last read for the job. If the
        job was never read through this object, the current version is read
        now: a concurrent commit after this point is still detected.
        """
        check_names(job_name, slot)
        if not job_run_id or not isinstance(job_run_id, str):
            raise ValueError(f"job_run_id must be a non-empty string, got {job_run_id!r}")
        # The size check too, before the read below: an oversized state fails with no request.
        self.check_fits(job_name, job_run_id, watermarks, slot=slot)
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
        self,
        job_name: str,
        job_run_id: str,
        values: Mapping[str, object],
        *,
        slot: str = DEFAULT_SLOT,
    ) -> None:
        """Raise WatermarkItemTooLarge (or InvalidWatermarkValue) now, with no request.

        Jobs call it before writing output, so a state that could never be
        committed stops the run before anything is published.
        """
        check_names(job_name, slot)
        encode(values)
        state_attributes(WatermarkItem(job_name, job_run_id, values, slot), 1, self.now_iso())

    def add_watermark(self, item: WatermarkItem, *, lease: Lease | None = None) -> CommittedState:
        """Commit ``item`` if no other commit happened since it was read.

        Raises WatermarkConflict (nothing written) when another run committed
        first, and LeaseLost when ``lease`` is given and no longer held.
        """
        return self.commit_many([item], lease=lease)[0]

    def commit_many(
        self, items: Sequence[WatermarkItem], *, lease: Lease | None = None
    ) -> list[CommittedState]:
        """Commit several states (slots or jobs) in one transaction: all or nothing."""
        if not items:
            raise ValueError("commit_many needs at least one item")
        keys = [(item.job_name, item.slot) for item in items]
        if len(set(keys)) != len(keys):
            raise ValueError(f"commit_many got the same job/slot twice: {keys}")
        now = self.now_iso()
        states = [state_attributes(item, item.expected_version + 1, now) for item in items]
        actions = [
            action
            for item, state in zip(items, states, strict=True)
            for action in self._commit_actions(item, state)
        ]
        if lease is not None:
            actions.append(lease.commit_condition(self.table_name))
        try:
            self._call("transact_write_items", TransactItems=actions)
        except ClientError as error:
            if error_code(error) in _CANCELLED:
                self._raise_cancellation(error, items, actions, lease)
            raise
        committed = [state_from_item(state) for state in states]
        for item, state in zip(items, committed, strict=True):
            self._read_versions[(item.job_name, item.slot)] = state["version"]
        return committed

    def _commit_actions(self, item: WatermarkItem, state: Item) -> list[TransactItem]:
        """The new ``STATE#`` (if still at the version read), its ``HIST#`` copy, a ``RUN#``."""
        version = item.expected_version + 1
        if item.expected_version == 0:
            condition: Request = {
                "ConditionExpression": "attribute_not_exists(#sk)",
                "ExpressionAttributeNames": {"#sk": RANGE_KEY},
            }
        else:
            condition = {
                "ConditionExpression": "#version = :expected",
                "ExpressionAttributeNames": {"#version": "version"},
                "ExpressionAttributeValues": {":expected": {"N": str(item.expected_version)}},
            }
        expires: Item = {EXPIRES_ATTRIBUTE: {"N": str(self._history_expiry())}}
        history: Item = {**state, RANGE_KEY: {"S": history_key(item.slot, version)}, **expires}
        puts: list[Request] = [{"Item": state, **condition}, {"Item": history}]
        if item.kind == "run":
            pointer: Item = {
                **item_key(item.job_name, run_key(item.slot, item.job_run_id)),
                "version": {"N": str(version)},
                **expires,
            }
            puts.append({"Item": pointer})
        return [{"Put": {"TableName": self.table_name, **put}} for put in puts]

    # -- manual changes -----------------------------------------------------------------------

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
    ) -> CommittedState:
        """Make the state after ``run_id`` current again (recorded as a new version).

        ``note`` adds attributes to the history entry (an output rollback, for example).
        """
        target = self.state_after_run(job_name, run_id, slot)
        current = self.get_watermark(job_name, slot)
        then = (target["watermarks"] or {}).get("layout")
        now = (current["watermarks"] or {}).get("layout") if current else None
        if (
            isinstance(then, Mapping)
            and isinstance(now, Mapping)
            and any(then[name] != now[name] for name in set(then) & set(now))
        ):
            # Merging under the rewound layout into a target written under another one
            # would keep both (or hide rows): the output cannot follow this rewind.
            raise RewindAcrossLayoutChange(job_name, run_id, then, now)
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
        **attrs: object,
    ) -> CommittedState:
        """Set values directly (skip-ahead, precise backfills), merged onto the current ones.

        Recorded in history as a manual change with who and why; Glue's own
        bookmarks offer only reset and rewind.
        """
        if not attrs:
            raise ValueError("set needs at least one attribute, e.g. last_modified=...")
        current = self.current_state(job_name, slot)
        values = {**((current["watermarks"] if current else None) or {}), **attrs}
        return self._manual_change(job_name, slot, values, "set", who, why, expected=current)

    def _manual_change(
        self,
        job_name: str,
        slot: str,
        values: Mapping[str, object] | None,
        kind: ChangeKind,
        who: str | None,
        why: str,
        extra: Mapping[str, str] | None = None,
        expected: CommittedState | None = None,
    ) -> CommittedState:
        current = expected if expected is not None else self.current_state(job_name, slot)
        if current is None and kind != "set":
            raise UnknownJob(job_name, slot)
        item = WatermarkItem(
            job_name=job_name,
            job_run_id=f"manual-{kind}",
            watermarks=values,
            slot=slot,
            expected_version=current["version"] if current else 0,
            kind=kind,
            note={"who": who or _whoami(), "why": why, **(extra or {})},
        )
        return self.commit_many([item])[0]

    # -- leases -----------------------------------------------------------------------------

    def acquire_lease(self, job_name: str, run_id: str, *, seconds: int = 900) -> Lease:
        """Take the job's run lease before reading anything.

        Raises LeaseHeld naming the holder when another run holds an unexpired
        lease. An expired lease (a crashed run) is taken over; the token rises
        so the old holder's commit fails.
        """
        check_names(job_name, DEFAULT_SLOT)
        return acquire_lease(self, job_name, run_id, seconds)

    # -- requests ---------------------------------------------------------------------------

    def _raise_cancellation(
        self,
        error: ClientError,
        items: Sequence[WatermarkItem],
        actions: list[TransactItem],
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
            state = self._get(item.job_name, state_key(item.slot))
            actual = int(state["version"]["N"]) if state else 0
            if actual != item.expected_version:
                raise WatermarkConflict(
                    item.job_name, item.slot, item.expected_version, actual
                ) from None
        raise WatermarkStoreUnavailable(
            self.table_name, f"commit cancelled: {reasons or error}"
        ) from None

    def _get(self, job_name: str, sort_key: str) -> Item | None:
        response = self._call("get_item", Key=item_key(job_name, sort_key), ConsistentRead=True)
        return response.get("Item")

    def _call(self, operation: str, **params: object) -> Response:
        if operation != "transact_write_items":
            params.setdefault("TableName", self.table_name)
        try:
            return getattr(self.client, operation)(**params)
        except ClientError as error:
            self._translate(error)
            raise
        except EndpointConnectionError as error:
            raise WatermarkStoreUnavailable(
                self.table_name, f"cannot reach DynamoDB: {error}"
            ) from None
        except NoCredentialsError:
            raise WatermarkStoreUnavailable(
                self.table_name, "no AWS credentials found (set a profile, role or AWS_* variables)"
            ) from None

    def _translate(self, error: ClientError) -> None:
        """Raise the store's own error for a missing table, throttling or a foreign table."""
        code = error_code(error)
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

    def _raise_schema_mismatch(self, error: ClientError) -> None:
        try:
            table = self.client.describe_table(TableName=self.table_name)["Table"]
        except ClientError:
            raise error from None
        schema = {entry["AttributeName"]: entry["KeyType"] for entry in table["KeySchema"]}
        if schema != {HASH_KEY: "HASH", RANGE_KEY: "RANGE"}:
            raise WatermarkTableSchemaMismatch(self.table_name, schema) from None
        raise error


def create_table(table_name: str = DEFAULT_TABLE, *, client: DynamoDBClient | None = None) -> None:
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
        if error_code(error) != "ResourceInUseException":
            raise
    dynamodb.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )


def _whoami() -> str:
    try:
        return os.environ.get("GLUE_INCREMENTAL_ACTOR") or getpass.getuser()
    except Exception:
        return "unknown"
