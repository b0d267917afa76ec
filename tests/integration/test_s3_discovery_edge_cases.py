"""S3 discovery (LocalStack S3 and SQS, boto3 listing; planning needs no Spark).

Each test is a way an adversarial layout or timing could make a run lose a file
or read one twice: events for files at the root of a flat source, files
re-read when notification runs list different partitions within one band, and
a file landing in an old partition in the same second as a full listing.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from glue_incremental import aws
from glue_incremental.load.job import LoadConfig
from glue_incremental.sources import discovery
from glue_incremental.sources.discovery import Discovery, plan_discovered_read

from tests.harness.loads import FixedClock, read_parquet, run_load_at
from tests.harness.notifications import notified_queue as make_queue
from tests.harness.notifications import wait_for_messages
from tests.harness.s3 import (
    after_last_write,
    plan_listing,
    put_json_lines,
    runs_after_last_write,
    split_uri,
)

pytestmark = [pytest.mark.s3]


class NotifiedSource:
    """A source prefix whose events go to a queue; ``run`` plans, then 'commits' (deletes)."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        every: int = 24,
        band_seconds: int = 900,
        visibility_seconds: int = 900,
    ) -> None:
        self.uri = f"s3://{bucket}/{prefix}"
        self.band_seconds = band_seconds
        queue_url = make_queue(bucket, prefix)
        self.discovery = Discovery("notifications", every, queue_url, visibility_seconds)
        self.bookmark = self.state = None
        self.put = 0

    def land(self, directory: str) -> str:
        self.put += 1
        return put_json_lines(f"{self.uri}{directory}", [{"id": self.put}])

    def killed_run(self) -> discovery.DiscoveredPlan:
        """A run SIGKILLed after receiving: it commits nothing and cannot release its messages."""
        return self._plan()

    def run(self) -> discovery.DiscoveredPlan:
        found = self._plan()
        self.bookmark, self.state = found.plan.next_bookmark, found.next_state
        discovery.delete_notifications(self.discovery, found.receipts)
        return found

    def _plan(self) -> discovery.DiscoveredPlan:
        return plan_discovered_read(
            self.uri,
            self.bookmark,
            self.state,
            self.discovery,
            run_start_ms=int(after_last_write(1.0) * 1000),
            band_seconds=self.band_seconds,
        )


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


def test_a_notified_file_whose_key_needs_url_encoding_in_the_event_is_read(s3_bucket):
    source = NotifiedSource(s3_bucket, "odd/")
    source.land("p=plain")
    wait_for_messages(source.discovery.queue_url, 1)
    source.run()

    new = source.land("p=a%3Db c+d ü")  # Hive-escaped '=', a space, a plus, unicode
    wait_for_messages(source.discovery.queue_url, 1)
    second = source.run()

    assert second.kind == "notifications"
    assert [f.uri for f in second.plan.files] == [new]


def test_an_ordered_listing_of_more_than_one_page_after_the_start_reads_every_file(s3_bucket):
    root = f"s3://{s3_bucket}/paged"
    put_json_lines(f"{root}/dt=2024-01-01", [{"id": 0}])
    _, bookmark, state = plan_listing(root, None, None, 24, run_start=after_last_write(2.1))
    with ThreadPoolExecutor(8) as pool:
        new = set(
            pool.map(lambda n: put_json_lines(f"{root}/dt=2024-01-02", [{"id": n}]), range(1005))
        )

    second, _, _ = plan_listing(root, bookmark, state, 24, run_start=after_last_write(1.0))

    assert second.kind == "ordered" and state.ordered_start == "dt=2024-01-01"
    assert {f.uri for f in second.plan.files} == new
    assert second.requests == 2  # 1,000 keys a page: the first page starts after the start key


def test_a_file_read_in_its_band_is_not_reported_late_when_its_directory_is_listed_again(
    s3_bucket,
):
    source = NotifiedSource(s3_bucket, "late/", band_seconds=1)
    source.land("dt=2024-01-01")
    wait_for_messages(source.discovery.queue_url, 1)
    assert len(source.run().plan.files) == 1  # read in the band: not late, ever

    time.sleep(2)  # the band moves past it while dt=2024-01-01 is not listed
    source.land("dt=2024-01-02")
    wait_for_messages(source.discovery.queue_url, 1)
    source.run()
    time.sleep(2)
    new = source.land("dt=2024-01-01")
    wait_for_messages(source.discovery.queue_url, 1)
    third = source.run()

    assert [f.uri for f in third.plan.files] == [new]
    assert third.plan.late_file_count == 0


def test_a_file_whose_message_a_killed_run_held_is_read_when_it_returns_after_the_band_moved(
    s3_bucket,
):
    """The killed run received F's message and could not release it; meanwhile a later run
    read G and moved the band past F. F was new when its message was sent: it is read, not
    judged late, when the message comes back after its visibility timeout."""
    source = NotifiedSource(s3_bucket, "held/", band_seconds=3, visibility_seconds=8)
    source.land("dt=2024-01-01")
    wait_for_messages(source.discovery.queue_url, 1)
    source.run()
    held = source.land("dt=2024-01-02")
    wait_for_messages(source.discovery.queue_url, 1)
    killed_at = time.monotonic()
    assert [f.uri for f in source.killed_run().plan.files] == [held]

    time.sleep(4)  # more than the band
    source.land("dt=2024-01-03")
    wait_for_messages(source.discovery.queue_url, 2)  # G's, and F's still in flight
    moved = source.run()
    assert moved.plan.next_bookmark.band_start_ms > _modified_ms(held)
    time.sleep(max(0.0, killed_at + 8.5 - time.monotonic()))  # F's message is visible again

    returned = source.run()

    assert [f.uri for f in returned.plan.files] == [held]
    assert returned.plan.late_file_count == 0


def _modified_ms(uri: str) -> int:
    bucket, key = split_uri(uri)
    head = aws.client("s3").head_object(Bucket=bucket, Key=key)
    return int(head["LastModified"].timestamp() * 1000)


def test_a_file_landing_in_an_old_partition_in_the_second_of_a_full_listing_is_read_later(
    s3_bucket,
):
    """S3 times have one-second resolution: a file put into an old partition just after a full
    listing, in the same second as its newest file, has the listing's high mark as its time."""
    for attempt in range(5):  # the race needs three requests within one clock second
        root = f"s3://{s3_bucket}/race{attempt}"
        put_json_lines(f"{root}/dt=2024-01-01", [{"id": 1}])
        time.sleep(2.1 - time.time() % 1)  # > the band, and early in a second
        newest = put_json_lines(f"{root}/dt=2024-01-05", [{"id": 5}])
        first, bookmark, state = plan_listing(root, None, None, 2, run_start=time.time())
        racer = put_json_lines(f"{root}/dt=2024-01-01", [{"id": 2}])
        if _modified_ms(racer) == _modified_ms(newest):
            break
    else:
        pytest.skip("could not put three objects within one S3 clock second")
    assert first.kind == "full" and state.ordered_start == "dt=2024-01-05"
    assert racer not in [f.uri for f in first.plan.files]

    time.sleep(2.1)  # the band moves past the racer's second
    new = put_json_lines(f"{root}/dt=2024-01-06", [{"id": 6}])
    second, bookmark, state = plan_listing(
        root, bookmark, state, 2, run_start=after_last_write(1.0)
    )
    assert second.kind == "ordered" and [f.uri for f in second.plan.files] == [new]

    third, _, _ = plan_listing(root, bookmark, state, 2, run_start=after_last_write(1.0))
    assert third.kind == "full"
    assert [f.uri for f in third.plan.files] == [racer]


# -- the real load job (Spark through S3A) ------------------------------------------------------


@pytest.mark.spark
def test_after_a_rewind_a_notification_run_reads_again_what_came_after_the_rewound_run(
    spark, s3_bucket, s3_root, store
):
    """The events of the files after the rewound run were deleted when their run committed:
    only a listing can find those files again."""
    source = f"{s3_root}/rewound/"
    queue_url = make_queue(s3_bucket, split_uri(source)[1])
    config = LoadConfig(
        source=source,
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_path=f"{s3_root}/target/",
        discovery="notifications",
        notification_queue_url=queue_url,
        full_listing_every=24,
    )
    run = runs_after_last_write(spark, config, store, job_name="rewound")

    put_json_lines(f"{source}dt=2024-01-01", [{"id": 1, "updated": 1}])
    wait_for_messages(queue_url, 1)
    assert run()["records_read"] == 1
    put_json_lines(f"{source}dt=2024-01-02", [{"id": 2, "updated": 2}])
    wait_for_messages(queue_url, 1)
    assert run()["file_plan"]["discovery"] == "notifications"

    store.rewind("rewound", "jr_0", why="reprocess what came after the first run")
    again = run()

    assert again["records_read"] == 1


@pytest.mark.spark
def test_files_whose_names_look_like_globs_or_escapes_are_read_once_each_through_s3a(
    spark, s3_bucket, s3_root, store
):
    """More than 32 paths: Spark looks them up in a parallel listing job (``sources.bulk``)."""
    source = f"{s3_root}/globby/"
    odd = ["p=x/a[1].json", "p=x/b{c,d}.json", "p=x/e*.json", "p=x/f?g.json", "p=x/h%20i j.json"]
    odd += ["p=a%3Db/k.json", "p=%C3%BC ü/l.json", "p=__HIVE_DEFAULT_PARTITION__/m.json"]
    names = odd + [f"p=x/plain-{n:02d}.json" for n in range(40)]
    bucket, prefix = split_uri(source)
    s3 = aws.client("s3")
    for key, name in enumerate(names):
        body = json.dumps({"id": key, "updated": 1}) + "\n"
        s3.put_object(Bucket=bucket, Key=prefix + name, Body=body.encode())
    config = LoadConfig(
        source=source,
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_path=f"{s3_root}/globby-target/",
    )

    summary = run_load_at(
        spark,
        config,
        job_name="globby",
        run_id="jr_1",
        clock=FixedClock(after_last_write(1.5)),
        store=store,
    )

    assert summary["records_read"] == len(names)
    ids = [r["id"] for r in read_parquet(spark, config.target_path, ["id"]).collect()]
    assert sorted(ids) == list(range(len(names)))
