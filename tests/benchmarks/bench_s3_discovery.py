"""Section 7: discovery on S3 - planning an incremental run of a date-partitioned source.

On the local S3 endpoint (LocalStack), NOT ``file://``: a source of N objects in
``dt=YYYY-MM-DD/`` partitions (``s3_objects_per_partition`` each), then
``s3_delta`` new objects in a new partition. For each N it measures planning the
incremental run (``sources.discovery.plan_discovered_read``: listing or queue,
then the bookmark's plan; no Spark read) three ways - a full listing
(``--full_listing_every 1``), the ordered listing and S3 event notifications
(LocalStack delivers the events to SQS) - counting the S3 and SQS requests with
boto3 ``before-send`` hooks on dedicated clients. At the smallest N one real load
run (Spark reading the new objects through S3A) is timed too.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from typing import Any

import boto3
from glue_incremental import aws
from glue_incremental.sources.discovery import Discovery, plan_discovered_read
from glue_incremental.sources.file_dataset import FileDataset

from tests.benchmarks.common import RequestCounter, Timer, median, quiet

BAND_SECONDS = 1
PUT_THREADS = 32
FIRST_DAY = date(2000, 1, 1)


def _client(service: str) -> Any:
    """A client of its own: the request hooks count this section's requests only."""
    return boto3.session.Session().client(
        service, endpoint_url=aws.endpoint_url(service), region_name=aws.region()
    )


class RequestTime:
    """Seconds a client spent inside its requests (``before-call`` to ``after-call``)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seconds = 0.0
        self._started = 0.0
        service = client.meta.service_model.service_name
        client.meta.events.register(f"before-call.{service}", self._start)
        client.meta.events.register(f"after-call.{service}", self._stop)

    def _start(self, **kwargs: Any) -> None:
        self._started = time.perf_counter()

    def _stop(self, **kwargs: Any) -> None:
        self.seconds += time.perf_counter() - self._started


def _empty_list_seconds(s3: Any, bucket: str) -> float:
    """One ListObjectsV2 matching nothing: the endpoint's own cost per request at this size."""
    timings = []
    for _ in range(3):
        with Timer() as timer:
            s3.list_objects_v2(Bucket=bucket, Prefix="no-such-prefix/", MaxKeys=1)
        timings.append(timer.seconds)
    return median(timings)


def _key(prefix: str, index: int, per_partition: int) -> str:
    day = FIRST_DAY + timedelta(days=index // per_partition)
    return f"{prefix}dt={day.isoformat()}/part-{index:07d}.json"


def _put_many(s3: Any, bucket: str, keys: list[str]) -> float:
    def put(key: str) -> None:
        s3.put_object(Bucket=bucket, Key=key, Body=b'{"id": 1}\n')

    with Timer() as timer, ThreadPoolExecutor(PUT_THREADS) as pool:
        list(pool.map(put, keys))
    return timer.seconds


def _queue_with_notifications(s3: Any, sqs: Any, bucket: str, prefix: str) -> str:
    url = sqs.create_queue(QueueName=f"bench-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    s3.put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": arn["QueueArn"],
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}},
                }
            ]
        },
    )
    return url


def _wait_for_messages(sqs: Any, url: str, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        visible = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]["ApproximateNumberOfMessages"]
        if int(visible) >= count:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{count} S3 events did not reach {url} within {timeout:.0f}s")


def _plan(root: str, previous: Any, discovery: Discovery, s3: Any, sqs: Any) -> Any:
    bookmark, state = previous
    return plan_discovered_read(
        root,
        bookmark,
        state,
        discovery,
        run_start_ms=int(time.time() * 1000),
        band_seconds=BAND_SECONDS,
        s3_client=s3,
        sqs_client=sqs,
    )


def _measure(
    label: str,
    root: str,
    previous: Any,
    discovery: Discovery,
    counters: tuple[RequestCounter, RequestCounter, RequestTime, RequestTime],
    repeats: int,
) -> dict[str, Any]:
    s3_counter, sqs_counter, s3_time, sqs_time = counters
    seconds: list[float] = []
    requests: list[int] = []
    files: list[int] = []
    net: list[float] = []
    kind = ""
    for _ in range(repeats):
        if discovery.mode == "notifications":
            # The previous repeat's messages are visible again.
            time.sleep(discovery.visibility_seconds + 0.2)
        in_requests = s3_time.seconds + sqs_time.seconds
        with s3_counter.measure() as s3_sent, sqs_counter.measure() as sqs_sent, Timer() as timer:
            found = _plan(root, previous, discovery, s3_counter.client, sqs_counter.client)
        seconds.append(timer.seconds)
        net.append(timer.seconds - (s3_time.seconds + sqs_time.seconds - in_requests))
        requests.append(sum(s3_sent.values()) + sum(sqs_sent.values()))
        files.append(len(found.plan.files))
        kind = found.kind
    return {
        "mode": label,
        "kind": kind,
        "plan_seconds_median": median(seconds),
        "plan_seconds": [round(value, 4) for value in seconds],
        # Without the time inside S3/SQS requests (the endpoint's side, and SQS's long poll).
        "plan_seconds_without_requests_median": median(net),
        "requests_median": median(requests),
        "requests": requests,
        "files_planned": files,
        "files_listed": found.plan.files_listed,
    }


def _join_side(
    root: str, previous: Any, discovery: Discovery, counter: RequestCounter
) -> dict[str, Any]:
    """One side of the join planned on this source as an incremental join run plans it."""
    bookmark, state = previous
    with counter.measure() as sent:
        side = FileDataset(root, discovery, BAND_SECONDS, absent_is_empty=True).plan(
            None,
            bookmark,
            state,
            run_start_ms=int(time.time() * 1000),
            upper_bound_ms=None,
            s3_client=counter.client,
        )
    return {
        "kind": side.found.kind,
        "list_requests": sum(sent.values()),
        "files_planned": len(side.found.plan.files),
    }


def _one_point(ctx: Any, history: int, s3: Any, sqs: Any, counters: Any) -> dict[str, Any]:
    scale = ctx.scale
    per_partition = scale.s3_objects_per_partition
    bucket = f"bench-s3-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    prefix = "source/"
    root = f"s3://{bucket}/{prefix}"
    put_seconds = _put_many(s3, bucket, [_key(prefix, i, per_partition) for i in range(history)])
    ctx.log(f"s3_discovery: {history:,} objects put in {put_seconds:.1f}s")
    time.sleep(BAND_SECONDS + 1)
    # The first runs (full listings) give each mode its bookmark; then the events are switched on.
    queue_url = _queue_with_notifications(s3, sqs, bucket, prefix)
    ordered = Discovery("listing", 24)
    notified = Discovery("notifications", 24, queue_url, visibility_seconds=1)
    with Timer() as first_timer:
        first = _plan(root, (None, None), ordered, s3, sqs)
    first_notified = _plan(root, (None, None), notified, s3, sqs)
    sqs.purge_queue(QueueUrl=queue_url)  # events of the history, if any: the first run listed it
    time.sleep(1)
    delta_start = history + per_partition - history % per_partition  # a new partition
    delta_keys = [_key(prefix, delta_start + i, per_partition) for i in range(scale.s3_delta)]
    _put_many(s3, bucket, delta_keys)
    _wait_for_messages(sqs, queue_url, scale.s3_delta)
    time.sleep(1.1)  # the run starts after the new objects' (whole-second) times
    after_ordered = (first.plan.next_bookmark, first.next_state)
    after_notified = (first_notified.plan.next_bookmark, first_notified.next_state)
    repeats = scale.s3_repeats
    modes = [
        _measure("full listing", root, after_ordered, Discovery("listing", 1), counters, repeats),
        _measure("ordered listing", root, after_ordered, ordered, counters, repeats),
        _measure("notifications", root, after_notified, notified, counters, repeats),
    ]
    return {
        "history_objects": history,
        "join_side": _join_side(root, after_ordered, ordered, counters[0]),
        "empty_list_request_seconds": round(_empty_list_seconds(s3, bucket), 4),
        "partitions": -(-history // per_partition),
        "delta_objects": scale.s3_delta,
        "put_seconds": round(put_seconds, 1),
        "first_plan_seconds": round(first_timer.seconds, 3),
        "modes": modes,
        "bucket": bucket,
        "root": root,
    }


def _real_run(ctx: Any, point: dict[str, Any]) -> dict[str, Any]:
    """The load job on the smallest source: a first run, new objects, a timed incremental run."""
    from glue_incremental.load.job import LoadConfig
    from glue_incremental.watermarks import Watermarks

    from tests.harness.loads import FixedClock, run_load_at

    root, bucket = point["root"], point["bucket"]
    config = LoadConfig(
        source=root,
        source_format="json",
        watermark_column="id",
        primary_key=("id",),
        target_path=f"s3://{bucket}/target/",
        partition_moves="ignore",
        lookback=timedelta(seconds=BAND_SECONDS),  # all objects are minutes old: a short band
    )
    store = Watermarks(ctx.watermarks_table)
    job = f"bench-s3-{uuid.uuid4().hex[:6]}"

    def run_now(run_id: str) -> dict[str, Any]:
        clock = FixedClock(time.time())
        return run_load_at(ctx.spark, config, job_name=job, run_id=run_id, clock=clock, store=store)

    with quiet(), Timer() as first:
        run_now("jr_1")
    s3 = _client("s3")
    start = point["history_objects"] + 10 * ctx.scale.s3_objects_per_partition
    keys = [
        _key("source/", start + i, ctx.scale.s3_objects_per_partition)
        for i in range(ctx.scale.s3_delta)
    ]
    _put_many(s3, bucket, keys)
    time.sleep(1.1)
    with quiet(), Timer() as incremental:
        summary = run_now("jr_2")
    return {
        "history_objects": point["history_objects"],
        "first_run_seconds": round(first.seconds, 2),
        "incremental_run_seconds": round(incremental.seconds, 2),
        "files_read": summary["files_read"],
        "discovery": summary["file_plan"]["discovery"],
        "listing_requests": summary["file_plan"]["listing_requests"],
    }


def run(ctx: Any) -> dict[str, Any]:
    s3, sqs = _client("s3"), _client("sqs")
    counters = (RequestCounter(s3), RequestCounter(sqs), RequestTime(s3), RequestTime(sqs))
    points = [_one_point(ctx, history, s3, sqs, counters) for history in ctx.scale.s3_histories]
    real = _real_run(ctx, points[0]) if ctx.scale.s3_real_run else None
    return {
        "description": (
            "Planning an incremental run of a date-partitioned source on the local S3 endpoint "
            f"(LocalStack, not file://): {ctx.scale.s3_objects_per_partition} objects per "
            f"`dt=` partition, {ctx.scale.s3_delta} new objects in a new partition; S3 + SQS "
            "requests counted with boto3 hooks; plan = listing or queue + the bookmark's plan"
        ),
        "points": points,
        "real_run": real,
    }
