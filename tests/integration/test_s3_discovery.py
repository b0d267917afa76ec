"""Discovery on S3 (LocalStack): ordered listing, notifications, and the full listing every N runs.

Objects are put with boto3 and S3 stamps them with its own clock, so runs start
on the real clock (``after_last_write``). Planning needs no Spark on S3 (boto3
lists); the notification tests run the real load job (Spark reading through S3A)
and crash it at the commit hooks.
"""

from __future__ import annotations

import json
import time

import pytest
from glue_incremental import aws
from glue_incremental.load.job import LoadConfig
from glue_incremental.sources import discovery
from glue_incremental.sources.discovery import Discovery, DiscoveryState

from tests.harness.faults import Crash, crash_at
from tests.harness.loads import read_parquet
from tests.harness.notifications import messages_in, notified_queue
from tests.harness.s3 import (
    plan_listing,
    put_json_lines,
    runs_after_last_write,
    split_uri,
)

pytestmark = [pytest.mark.s3]


def test_ordered_listing_lists_from_the_recent_partition_and_the_full_listing_finds_old_ones(
    s3_bucket,
):
    root = f"s3://{s3_bucket}/ordered"
    for day in range(1, 6):
        put_json_lines(f"{root}/dt=2024-01-0{day}", [{"id": day}])
    time.sleep(2)
    put_json_lines(f"{root}/dt=2024-01-06", [{"id": 6}])

    first, bookmark, state = plan_listing(root, None, None, every=2)
    assert (first.kind, len(first.plan.files)) == ("full", 6)
    assert state.ordered_start == "dt=2024-01-06"

    late = put_json_lines(f"{root}/dt=2024-01-02", [{"id": 2}])  # an old partition
    time.sleep(2)  # older than the band when the full listing comes
    new = put_json_lines(f"{root}/dt=2024-01-07", [{"id": 7}])
    second, bookmark, state = plan_listing(root, bookmark, state, every=2)
    assert second.kind == "ordered"
    assert [f.uri for f in second.plan.files] == [new]
    assert second.plan.files_listed == 2  # dt=06 and dt=07 only: history is not listed
    assert second.requests == 1

    third, bookmark, state = plan_listing(root, bookmark, state, every=2)
    assert third.kind == "full"
    assert [f.uri for f in third.plan.files] == [late]
    assert third.files_found_by_full_listing == 1
    assert third.plan.late_file_count == 0  # read, so not also reported as skipped

    fourth, _, _ = plan_listing(root, bookmark, state, every=2)
    assert (fourth.kind, fourth.plan.files) == ("ordered", ())


def test_files_outside_key_value_directories_are_always_listed_in_full(s3_bucket):
    root = f"s3://{s3_bucket}/flat"
    put_json_lines(root, [{"id": 1}])
    _, bookmark, state = plan_listing(root, None, None, every=24)
    assert state.ordered_start is None
    put_json_lines(root, [{"id": 2}])
    second, _, _ = plan_listing(root, bookmark, state, every=24)
    assert (second.kind, len(second.plan.files)) == ("full", 1)


def test_bad_discovery_options_fail_naming_the_argument_before_any_listing():
    with pytest.raises(ValueError, match="notification queue URL"):
        Discovery("notifications", 24, None)
    with pytest.raises(ValueError, match="full_listing_every"):
        Discovery("listing", 0)
    with pytest.raises(ValueError, match="needs discovery 'notifications'"):
        Discovery("listing", 24, "http://queue")
    with pytest.raises(discovery.InvalidBookmarkState, match="discovery"):
        DiscoveryState.from_state({"runs_since_full_listing": -1})


# -- notifications: the real load job, crashed at its commit -----------------------------------


@pytest.fixture
def notified_source(s3_bucket, s3_root):
    """(source URI, queue URL): S3 event notifications for the source prefix go to an SQS queue."""
    source = f"{s3_root}/events/"
    return source, notified_queue(s3_bucket, split_uri(source)[1])


def _config(source, queue_url, target, every=24):
    return LoadConfig(
        source=source,
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_path=target,
        discovery="notifications",
        notification_queue_url=queue_url,
        full_listing_every=every,
        notification_visibility_seconds=1,
    )


def test_notifications_survive_crashes_before_and_after_the_commit(
    spark, notified_source, s3_root, store
):
    source, queue_url = notified_source
    config = _config(source, queue_url, f"{s3_root}/target/")
    run = runs_after_last_write(spark, config, store, job_name="events")

    put_json_lines(f"{source}dt=2024-01-01", [{"id": 1, "updated": 1}])
    first = run()  # the first run lists everything and deletes the message after its commit
    assert first["records_read"] == 1 and messages_in(queue_url) == 0

    put_json_lines(f"{source}dt=2024-01-02", [{"id": 2, "updated": 2}])
    with pytest.raises(Crash):
        run(crash_at("commit.before"))  # message received, killed before the commit
    assert messages_in(queue_url) == 1
    again = run()
    assert again["records_read"] == 1 and again["file_plan"]["discovery"] == "notifications"

    put_json_lines(f"{source}dt=2024-01-03", [{"id": 3, "updated": 3}])
    with pytest.raises(Crash):
        run(crash_at("commit.after"))  # committed, killed before the delete
    assert messages_in(queue_url) == 1
    redelivered = run()
    assert redelivered["records_read"] == 0  # the bookmark makes the message a no-op
    assert messages_in(queue_url) == 0

    rows = read_parquet(spark, config.target_path, ["id", "updated"]).collect()
    assert sorted(r["id"] for r in rows) == [1, 2, 3]


def test_a_duplicate_event_is_not_read_twice_and_a_lost_one_is_found_by_the_full_listing(
    spark, notified_source, s3_root, store
):
    source, queue_url = notified_source
    config = _config(source, queue_url, f"{s3_root}/target/", every=2)
    run = runs_after_last_write(spark, config, store, job_name="events2")

    first_file = put_json_lines(f"{source}dt=2024-01-01", [{"id": 1, "updated": 1}])
    assert run()["records_read"] == 1  # full listing (first run)

    bucket, key = split_uri(first_file)
    event = {
        "Records": [
            {
                "eventName": "ObjectCreated:Put",
                "s3": {"bucket": {"name": bucket}, "object": {"key": key}},
            }
        ]
    }
    aws.client("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(event))
    duplicate = run()
    assert duplicate["records_read"] == 0 and duplicate["file_plan"]["notifications"] == 1

    put_json_lines(f"{source}dt=2024-01-02", [{"id": 2, "updated": 2}])
    _lose_events(queue_url, 1)
    reconciled = run()  # the third run lists everything
    assert reconciled["file_plan"]["discovery"] == "full"
    assert reconciled["records_read"] == 1


def _lose_events(queue_url: str, count: int) -> None:
    sqs = aws.client("sqs")
    lost = 0
    for _ in range(20):
        answer = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in answer.get("Messages", []):
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            lost += 1
        if lost >= count:
            return
    raise AssertionError(f"expected {count} events in {queue_url}, got {lost}")
