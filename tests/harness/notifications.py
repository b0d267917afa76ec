"""S3 event notifications to a real SQS queue (LocalStack) for discovery tests.

``notified_queue`` wires the bucket's ``ObjectCreated`` events under a prefix to a
fresh queue, as ``terraform/modules/s3_notifications`` does in AWS;
``wait_for_messages`` waits until LocalStack has delivered them (delivery is
asynchronous), so a run plans with every event of the files put before it.
"""

from __future__ import annotations

import time
import uuid

from glue_incremental import aws


def notified_queue(bucket: str, prefix: str) -> str:
    """The URL of a new queue receiving ``s3:ObjectCreated:*`` events for ``prefix``."""
    sqs = aws.client("sqs")
    queue_url = sqs.create_queue(QueueName=f"events-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    aws.client("s3").put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": arn["Attributes"]["QueueArn"],
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}},
                }
            ]
        },
    )
    return queue_url


def messages_in(queue_url: str) -> int:
    """Messages in the queue, visible or in flight."""
    attributes = aws.client("sqs").get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def wait_for_messages(queue_url: str, count: int, timeout: float = 20.0) -> None:
    """Wait until the queue holds ``count`` messages (LocalStack delivers events asynchronously)."""
    deadline = time.monotonic() + timeout
    while messages_in(queue_url) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {count} messages in {queue_url}")
        time.sleep(0.2)
