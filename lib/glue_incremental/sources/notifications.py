"""S3 event notifications from an SQS queue: candidate objects for event-driven discovery.

The job receives every message the queue holds (S3 ``ObjectCreated:*`` events, direct
or via SNS), keeps the receipt handles and deletes the messages only after the
watermark commit; a run that will not commit releases them. A run killed before its
commit deletes nothing: they come back after their visibility timeout. Files already
in the band are not read twice; past it, a re-read is an upsert of the same rows.
Each message's ``SentTimestamp`` is kept: a file announced while new is never judged
late against a band that moved after the message was sent (ReceiveMessage,
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html).
A message that is not an S3 event is left in the queue for its dead-letter queue.
Terraform: ``terraform/modules/s3_notifications``; design: ``docs/file-bookmarks.md``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict
from urllib.parse import unquote_plus

from glue_incremental import aws
from glue_incremental.errors import GlueIncrementalError

DEFAULT_VISIBILITY_SECONDS = 900
DEFAULT_MAX_MESSAGES = 100_000
_BATCH = 10  # SQS's limit for ReceiveMessage and DeleteMessageBatch


class Message(TypedDict, total=False):
    """The parts of an SQS message read here."""

    MessageId: str
    ReceiptHandle: str
    Body: str
    Attributes: dict[str, str]


class Received(TypedDict, total=False):
    Messages: list[Message]


class BatchAnswer(TypedDict, total=False):
    # Each failed entry: Id, SenderFault, Code, Message (only counted here).
    Failed: list[dict[str, object]]


class QueueClient(Protocol):
    """The SQS calls a notification source makes (a boto3 ``sqs`` client)."""

    def receive_message(
        self,
        *,
        QueueUrl: str,
        MaxNumberOfMessages: int,
        VisibilityTimeout: int,
        WaitTimeSeconds: int,
        MessageSystemAttributeNames: list[str],
    ) -> Received: ...

    def delete_message_batch(
        self, *, QueueUrl: str, Entries: list[dict[str, str]]
    ) -> BatchAnswer: ...

    def change_message_visibility_batch(
        self, *, QueueUrl: str, Entries: list[dict[str, str | int]]
    ) -> BatchAnswer: ...


log = logging.getLogger("glue_incremental.notifications")

__all__ = [
    "Candidates",
    "NotificationQueueError",
    "delete_after_commit",
    "keys_in",
    "receive_all",
    "release",
]


class NotificationQueueError(GlueIncrementalError, RuntimeError):
    """The queue cannot be read; ``queue_url`` names it."""

    def __init__(self, queue_url: str, reason: str) -> None:
        self.queue_url = queue_url
        super().__init__(f"notification queue {queue_url!r}: {reason}")


@dataclass(frozen=True)
class Candidates:
    """What the queue held: (bucket, key) of created objects, and the messages to delete later.

    ``receipts`` are the messages that were understood (deleted after the commit);
    ``unreadable`` counts the others (left in the queue for its dead-letter queue).
    ``sent_ms``: for each object, when SQS accepted the newest message naming it
    (``SentTimestamp``, epoch ms): the file is not judged late against a band that
    moved after that (``files.select_files_to_read``).
    """

    objects: tuple[tuple[str, str], ...]
    receipts: tuple[str, ...]
    unreadable: int = 0
    requests: int = 0
    sent_ms: tuple[tuple[tuple[str, str], int], ...] = ()


def keys_in(body: str) -> list[tuple[str, str]] | None:
    """(bucket, key) of each ``ObjectCreated`` record in a message body; None if it is no S3 event.

    Accepts S3's own event JSON and an SNS envelope around it. ``s3:TestEvent``
    (sent when the notification is configured) is an event with no objects.
    """
    try:
        event = json.loads(body)
        if isinstance(event, dict) and event.get("Type") == "Notification" and "Message" in event:
            event = json.loads(event["Message"])  # delivered through SNS
    except (TypeError, ValueError):
        return None
    if not isinstance(event, dict):
        return None
    if event.get("Event") == "s3:TestEvent":
        return []
    records = event.get("Records")
    if not isinstance(records, list):
        return None
    found: list[tuple[str, str]] = []
    for record in records:
        try:
            name = str(record["eventName"])
            bucket = str(record["s3"]["bucket"]["name"])
            key = unquote_plus(str(record["s3"]["object"]["key"]))  # S3 URL-encodes keys here
        except (KeyError, TypeError):
            return None
        if name.startswith("ObjectCreated:"):
            found.append((bucket, key))
    return found


def receive_all(
    queue_url: str,
    *,
    visibility_seconds: int = DEFAULT_VISIBILITY_SECONDS,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    client: QueueClient | None = None,
) -> Candidates:
    """Receive until the queue answers empty (or ``max_messages``); nothing is deleted here.

    ``visibility_seconds`` should outlast the run: a message that becomes
    visible again mid-run is received again by the next run, which is harmless.
    """
    sqs = client or aws.client("sqs")
    objects: list[tuple[str, str]] = []
    sent: dict[tuple[str, str], int] = {}
    receipts: list[str] = []
    unreadable = requests = 0
    seen: set[str] = set()
    while len(seen) < max_messages:
        requests += 1
        try:
            answer = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=_BATCH,
                VisibilityTimeout=visibility_seconds,
                WaitTimeSeconds=1,  # a long poll asks every SQS server: empty means empty
                MessageSystemAttributeNames=["SentTimestamp"],
            )
        except Exception as error:
            raise NotificationQueueError(queue_url, f"cannot receive: {error}") from error
        messages = answer.get("Messages") or []
        if not messages:
            break
        for message in messages:
            if message["MessageId"] in seen:
                continue
            seen.add(message["MessageId"])
            keys = keys_in(message.get("Body", ""))
            if keys is None:
                unreadable += 1
                log.warning(
                    "notification %s is not an S3 event; left for the DLQ", message["MessageId"]
                )
                continue
            objects.extend(keys)
            receipts.append(message["ReceiptHandle"])
            sent_at = sent_timestamp_ms(message)
            if sent_at is not None:
                for key in keys:
                    sent[key] = max(sent.get(key, sent_at), sent_at)
    return Candidates(
        tuple(dict.fromkeys(objects)),
        tuple(receipts),
        unreadable,
        requests,
        tuple(sorted(sent.items())),
    )


def sent_timestamp_ms(message: Message) -> int | None:
    """The message's ``SentTimestamp`` attribute (epoch ms, a string in SQS's answer), or None."""
    value = (message.get("Attributes") or {}).get("SentTimestamp")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def delete_after_commit(
    queue_url: str, receipts: Sequence[str], *, client: QueueClient | None = None
) -> int:
    """Delete the messages of a committed run; returns how many could not be deleted.

    Call only after the watermark commit. A message that is not deleted comes
    back and is a no-op for the bookmark, so failures are logged, not raised.
    """
    sqs = client or aws.client("sqs")
    failed = 0
    for batch in _batches(receipts, _BATCH):
        entries = [
            {"Id": str(index), "ReceiptHandle": handle} for index, handle in enumerate(batch)
        ]
        try:
            answer = sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries)
        except Exception:
            log.exception("could not delete %d notifications of a committed run", len(batch))
            failed += len(batch)
            continue
        failed += len(answer.get("Failed") or [])
    return failed


def release(queue_url: str, receipts: Sequence[str], *, client: QueueClient | None = None) -> int:
    """Make a run's messages visible again now: a run that will not commit (it failed, or is
    a dry run or a replay) leaves the queue as it found it, instead of hiding its files'
    events for the visibility timeout while later runs move the band past them. Returns how
    many could not be released (logged: they come back after their timeout anyway)."""
    sqs = client or aws.client("sqs")
    failed = 0
    for batch in _batches(receipts, _BATCH):
        entries: list[dict[str, str | int]] = [
            {"Id": str(index), "ReceiptHandle": handle, "VisibilityTimeout": 0}
            for index, handle in enumerate(batch)
        ]
        try:
            answer = sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)
        except Exception:
            log.exception(
                "could not release %d notifications of a run that did not commit", len(batch)
            )
            failed += len(batch)
            continue
        failed += len(answer.get("Failed") or [])
    return failed


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
