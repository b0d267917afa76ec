"""Attacks on S3 discovery (LocalStack S3 and SQS, boto3 listing; planning needs no Spark).

Each test is a way an adversarial layout or timing could make a run lose a file
or read one twice: events for files at the root of a flat source, files
re-read when notification runs list different partitions within one band, and
a file landing in an old partition in the same second as a full listing.
"""

from __future__ import annotations

import pytest
from glue_incremental.sources import discovery
from glue_incremental.sources.discovery import Discovery, plan_discovered_read

from tests.harness.notifications import notified_queue as make_queue
from tests.harness.notifications import wait_for_messages
from tests.harness.s3 import after_last_write, put_json_lines

pytestmark = [pytest.mark.s3]


class NotifiedSource:
    """A source prefix whose events go to a queue; ``run`` plans, then 'commits' (deletes)."""

    def __init__(self, bucket: str, prefix: str, every: int = 24) -> None:
        self.uri = f"s3://{bucket}/{prefix}"
        self.discovery = Discovery("notifications", every, make_queue(bucket, prefix))
        self.bookmark = self.state = None
        self.put = 0

    def land(self, directory: str) -> str:
        self.put += 1
        return put_json_lines(f"{self.uri}{directory}", [{"id": self.put}])

    def run(self) -> discovery.DiscoveredPlan:
        found = plan_discovered_read(
            None,
            self.uri,
            self.bookmark,
            self.state,
            self.discovery,
            run_start_ms=int(after_last_write(1.0) * 1000),
        )
        self.bookmark, self.state = found.plan.next_bookmark, found.next_state
        discovery.delete_notifications(self.discovery, found.receipts)
        return found


def test_a_notified_file_at_the_root_of_a_flat_source_is_read_by_the_next_run(s3_bucket):
    source = NotifiedSource(s3_bucket, "flat/")
    source.land("")
    wait_for_messages(source.discovery.queue_url, 1)
    assert source.run().kind == "full"

    new = source.land("")
    wait_for_messages(source.discovery.queue_url, 1)
    second = source.run()
    assert second.kind == "notifications"
    assert [f.uri for f in second.plan.files] == [new]


def test_notification_runs_listing_other_partitions_do_not_read_a_band_file_twice(s3_bucket):
    source = NotifiedSource(s3_bucket, "events/")  # default band: 15 minutes
    source.land("dt=2024-01-01")
    wait_for_messages(source.discovery.queue_url, 1)
    assert len(source.run().plan.files) == 1

    other = source.land("dt=2024-01-02")  # only dt=2024-01-02 is listed by this run
    wait_for_messages(source.discovery.queue_url, 1)
    assert [f.uri for f in source.run().plan.files] == [other]

    again = source.land("dt=2024-01-01")  # dt=2024-01-01 is listed again, with the first file
    wait_for_messages(source.discovery.queue_url, 1)
    third = source.run()
    assert third.kind == "notifications"
    assert [f.uri for f in third.plan.files] == [again]


def test_a_full_listing_after_notification_runs_reads_no_band_file_twice(s3_bucket):
    source = NotifiedSource(s3_bucket, "events/", every=2)
    source.land("dt=2024-01-01")
    wait_for_messages(source.discovery.queue_url, 1)
    source.run()
    source.land("dt=2024-01-02")
    wait_for_messages(source.discovery.queue_url, 1)
    source.run()
    reconciled = source.run()  # the third run lists everything: nothing new
    assert (reconciled.kind, reconciled.plan.files) == ("full", ())
