"""The table's item layout: one key builder per item kind, and the name checks.

Every item of a job shares its partition key (``job_name``); the sort key says what it is:
``STATE#<slot>`` (the current state), ``HIST#<slot>#<version:012d>`` (one per committed
change), ``RUN#<slot>#<run_id>`` (a run's version, for rewinds) and ``LEASE`` (the run lease).
Layout and design: ``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

from typing import TypedDict

from glue_incremental.errors import InvalidName

DEFAULT_TABLE = "glue-watermarks"
DEFAULT_SLOT = "default"
HASH_KEY = "job_name"
RANGE_KEY = "sk"
# DynamoDB's hard item limit; attribute names and a little slack count too.
MAX_ITEM_BYTES = 400 * 1024
ITEM_OVERHEAD_BYTES = 1024

# History (``HIST#``) and run pointers (``RUN#``) carry an expiry (epoch seconds)
# that the table's TTL (terraform/modules/watermarks_table) deletes them by; the
# current state and the lease never expire. Rewinds reach back this far.
EXPIRES_ATTRIBUTE = "expires_at"
HISTORY_RETENTION_DAYS = 400

STATE_PREFIX = "STATE#"
LEASE_KEY = "LEASE"


class AttributeValue(TypedDict, total=False):
    """One DynamoDB attribute as the table holds them: every one is a string or a number."""

    S: str
    N: str


# One item (or a key, or expression values): attribute name -> value.
Item = dict[str, AttributeValue]


class Request(TypedDict, total=False):
    """The request fields the store sends (a query, a put, a condition check, an update)."""

    TableName: str
    Key: Item
    Item: Item
    KeyConditionExpression: str
    ConditionExpression: str
    UpdateExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: Item
    ConsistentRead: bool
    ScanIndexForward: bool
    Limit: int
    ExclusiveStartKey: Item
    ReturnValues: str


class TransactItem(TypedDict, total=False):
    """One action of a ``TransactWriteItems`` request."""

    Put: Request
    ConditionCheck: Request


def item_key(job_name: str, sort_key: str) -> Item:
    """The DynamoDB primary key of one item."""
    return {HASH_KEY: {"S": job_name}, RANGE_KEY: {"S": sort_key}}


def state_key(slot: str) -> str:
    return f"{STATE_PREFIX}{slot}"


def slot_of_state_key(sort_key: str) -> str:
    return sort_key.removeprefix(STATE_PREFIX)


def history_prefix(slot: str) -> str:
    return f"HIST#{slot}#"


def history_key(slot: str, version: int) -> str:
    # Zero-padded so that sort-key order is version order.
    return f"{history_prefix(slot)}{version:012d}"


def run_key(slot: str, run_id: str) -> str:
    return f"RUN#{slot}#{run_id}"


def check_names(job_name: str, slot: str) -> None:
    """Raise InvalidName (a ValueError) naming the value when a job name or slot cannot be a
    key part."""
    if not isinstance(job_name, str) or not job_name.strip():
        raise InvalidName(
            "job name", job_name, f"job name must be a non-empty string, got {job_name!r}"
        )
    if len(job_name) > 255:
        raise InvalidName(
            "job name",
            job_name,
            f"job name is {len(job_name)} characters, over 255: {job_name[:40]!r}...",
        )
    if not isinstance(slot, str) or not slot or "#" in slot:
        raise InvalidName(
            "slot", slot, f"slot must be a non-empty string without '#', got {slot!r}"
        )
