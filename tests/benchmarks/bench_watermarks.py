"""4. The watermark store against the endpoint: requests and latency per read and per commit.

``Watermarks(client=...)`` gets a boto3 client whose ``before-send`` hook
counts every HTTP request (retries included). Each history length ``h`` (1 and
10,000 committed versions at full scale) gets its own table:

- ``h == 1``: ``watermark_samples`` jobs, each with one commit made through the
  public API; every timed call uses its own job, so each sees exactly one
  version.
- ``h > 1``: one job. Its first version is committed through the public API;
  versions 2..h are copies of the items that commit wrote (its ``HIST#`` item
  and ``RUN#`` pointer, renumbered as the store's documented layout numbers
  them), written with ``BatchWriteItem``, and its ``STATE#`` item is moved to
  version ``h`` the same way. Why not ``h`` real commits: each is a lease,
  a read and a ``TransactWriteItems`` round trip to DynamoDB Local, so 10,000
  of them would take most of the bench's time budget. The public API then reads
  the result back (``get_watermark`` returns version h).

Timed: ``watermark_samples`` ``get_watermark`` calls, and commits
(``create_watermark_item`` + ``add_watermark``, after the ``get_watermark`` a
run starts with, which is not part of the commit): ``watermark_samples`` with
``h == 1``, ``watermark_long_history_commit_samples`` otherwise. Latencies are
DynamoDB Local's (a local JVM process) on a shared machine: context, not DynamoDB's.
"""

from __future__ import annotations

import uuid
from typing import Any

import boto3
from glue_incremental import aws
from glue_incremental.watermarks import Watermarks, create_table

from tests.benchmarks.common import Context, RequestCounter, Timer, median, percentile

SLOT = "default"


def _client() -> Any:
    return boto3.session.Session().client(
        "dynamodb",
        endpoint_url=aws.endpoint_url("dynamodb"),
        region_name=aws.region(),
        config=aws.RETRY_CONFIG,
    )


def _commit(store: Watermarks, job: str, cursor: int) -> None:
    store.get_watermark(job)
    store.add_watermark(store.create_watermark_item(job, f"jr_{uuid.uuid4().hex}", cursor=cursor))


def _items(client: Any, table: str, job: str) -> list[dict[str, Any]]:
    pages = client.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="job_name = :job",
        ExpressionAttributeValues={":job": {"S": job}},
        ConsistentRead=True,
    )
    return [item for page in pages for item in page["Items"]]


def _count(client: Any, table: str, job: str, prefix: str) -> int:
    pages = client.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="job_name = :job AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={":job": {"S": job}, ":prefix": {"S": prefix}},
        Select="COUNT",
    )
    return sum(page["Count"] for page in pages)


def _batch_write(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        requests = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        while requests:
            requests = client.batch_write_item(RequestItems=requests).get("UnprocessedItems")


def seed_long_history(store: Watermarks, client: Any, table: str, job: str, versions: int) -> None:
    """Give ``job`` ``versions`` committed versions (see the module docstring)."""
    _commit(store, job, 0)
    written = {item["sk"]["S"]: item for item in _items(client, table, job)}
    state = written[f"STATE#{SLOT}"]
    history = written[f"HIST#{SLOT}#{1:012d}"]
    pointer = next(item for sk, item in written.items() if sk.startswith(f"RUN#{SLOT}#"))
    copies, run_id = [], None
    for version in range(2, versions + 1):
        run_id = f"jr_{uuid.uuid4().hex}"
        copies.append(
            {
                **history,
                "sk": {"S": f"HIST#{SLOT}#{version:012d}"},
                "version": {"N": str(version)},
                "job_run_id": {"S": run_id},
            }
        )
        copies.append(
            {**pointer, "sk": {"S": f"RUN#{SLOT}#{run_id}"}, "version": {"N": str(version)}}
        )
    _batch_write(client, table, copies)
    if run_id is not None:
        client.put_item(
            TableName=table,
            Item={**state, "version": {"N": str(versions)}, "job_run_id": {"S": run_id}},
        )


def _stats(latencies: list[float], requests: list[int], operations: set[str]) -> dict[str, Any]:
    return {
        "samples": len(latencies),
        "requests_per_call": sorted(set(requests)),
        "requests_per_call_max": max(requests),
        "operations": sorted(operations),
        "latency_ms_p50": round(percentile(latencies, 0.5) * 1000, 2),
        "latency_ms_p99": round(percentile(latencies, 0.99) * 1000, 2),
        "latency_ms_median": round(median(latencies) * 1000, 2),
    }


def bench_history(ctx: Context, history: int) -> dict[str, Any]:
    scale = ctx.scale
    client = _client()
    table = f"bench-wm-h{history}-{uuid.uuid4().hex[:6]}"
    create_table(table, client=client)
    counter = RequestCounter(client)
    store = Watermarks(table, client=client)
    samples = scale.watermark_samples
    if history == 1:
        jobs = [f"bench_wm_{i}" for i in range(samples)]
        commit_samples = samples
    else:
        jobs = ["bench_wm_long"]
        commit_samples = scale.watermark_long_history_commit_samples
    with Timer() as seeding:
        if history == 1:
            for job in jobs:
                _commit(store, job, 0)
        else:
            seed_long_history(store, client, table, jobs[0], history)
    stored = _count(client, table, jobs[0], f"HIST#{SLOT}#")
    ctx.log(
        f"watermarks: {len(jobs)} job(s) with {stored} history item(s) in {seeding.seconds:.1f}s"
    )

    latencies, requests, operations = [], [], set()
    for index in range(samples):
        job = jobs[index % len(jobs)]
        with counter.measure() as sent, Timer() as timer:
            state = store.get_watermark(job)
        if state is None or state["version"] < history:
            raise AssertionError(f"{job}: expected version >= {history}, got {state}")
        latencies.append(timer.seconds)
        requests.append(sum(sent.values()))
        operations.update(sent)
    gets = _stats(latencies, requests, operations)

    latencies, requests, operations = [], [], set()
    for index in range(commit_samples):
        job = jobs[index % len(jobs)]
        store.get_watermark(job)  # a run reads its state first; not part of the commit
        with counter.measure() as sent, Timer() as timer:
            item = store.create_watermark_item(job, f"jr_{uuid.uuid4().hex}", cursor=index + 1)
            store.add_watermark(item)
        latencies.append(timer.seconds)
        requests.append(sum(sent.values()))
        operations.update(sent)
    commits = _stats(latencies, requests, operations)
    table_items = client.describe_table(TableName=table)["Table"].get("ItemCount")
    client.delete_table(TableName=table)
    return {
        "history_items": history,
        "history_items_stored": stored,
        "jobs": len(jobs),
        "table_items": table_items,
        "seeding_seconds": round(seeding.seconds, 2),
        "get_watermark": gets,
        "commit": commits,
    }


def run(ctx: Context) -> dict[str, Any]:
    return {
        "description": (
            "HTTP requests and latency of Watermarks.get_watermark and of a commit "
            "(create_watermark_item + add_watermark) against the local endpoint, by the "
            "number of committed versions (history items) of the job"
        ),
        "method": (
            "Requests counted with a botocore before-send hook on the client passed to "
            "Watermarks(client=...). Long histories are seeded by copying the items one real "
            "commit wrote (10,000 real commits would take most of the bench's time). "
            "Latencies are DynamoDB Local's (a local JVM process), on a shared machine."
        ),
        "points": [
            bench_history(ctx, history) for history in sorted(ctx.scale.watermark_histories)
        ],
    }
