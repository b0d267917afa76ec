"""4. The watermark store against the endpoint: requests and latency per read and per commit.

``Watermarks(client=...)`` gets a boto3 client whose ``before-send`` hook
counts every HTTP request (retries included). For each history length ``h``
(1 and 10,000 committed versions at full scale) ``watermark_samples`` reads
(``get_watermark``) and as many commits (``create_watermark_item`` +
``add_watermark``) are timed one by one. With ``h == 1`` every sample has its
own job holding exactly one version; otherwise one job is given ``h`` versions
through the public API first (each a real commit), and the timed commits add
to it (the history ends ``samples`` longer).

Latencies are those of moto's server running in this process, on a shared
machine: context, not DynamoDB's.
"""

from __future__ import annotations

import uuid
from typing import Any

import boto3
from glue_incremental import aws
from glue_incremental.watermarks import Watermarks

from tests.benchmarks.common import Context, RequestCounter, Timer, median, percentile


def _client() -> Any:
    return boto3.session.Session().client(
        "dynamodb",
        endpoint_url=aws.endpoint_url("dynamodb"),
        region_name=aws.region(),
        config=aws.RETRY_CONFIG,
    )


def _commit(store: Watermarks, job: str, cursor: int) -> None:
    store.get_watermark(job)
    item = store.create_watermark_item(job, f"jr_{uuid.uuid4().hex}", cursor=cursor)
    store.add_watermark(item)


def _history_items(client: Any, table: str, job: str) -> int:
    """Committed versions of ``job`` (its ``HIST#`` items), counted with paginated COUNT queries."""
    paginator = client.get_paginator("query")
    pages = paginator.paginate(
        TableName=table,
        KeyConditionExpression="job_name = :job AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={":job": {"S": job}, ":prefix": {"S": "HIST#default#"}},
        Select="COUNT",
    )
    return sum(page["Count"] for page in pages)


def _stats(latencies: list[float], requests: list[int]) -> dict[str, Any]:
    return {
        "samples": len(latencies),
        "requests_per_call": sorted(set(requests)),
        "requests_per_call_max": max(requests),
        "latency_ms_p50": round(percentile(latencies, 0.5) * 1000, 2),
        "latency_ms_p99": round(percentile(latencies, 0.99) * 1000, 2),
        "latency_ms_median": round(median(latencies) * 1000, 2),
    }


def bench_history(ctx: Context, history: int, samples: int) -> dict[str, Any]:
    client = _client()
    counter = RequestCounter(client)
    store = Watermarks(ctx.watermarks_table, client=client)
    prefix = f"bench_wm_{history}_{uuid.uuid4().hex[:6]}"
    jobs = [f"{prefix}_{i}" for i in range(samples)] if history == 1 else [prefix]
    with Timer() as seeding:
        for job in jobs:
            for version in range(history):
                _commit(store, job, version)
    ctx.log(f"watermarks: {history} history item(s) seeded in {seeding.seconds:.1f}s")
    stored = _history_items(client, ctx.watermarks_table, jobs[0])

    get_latency, get_requests, get_operations = [], [], set()
    for index in range(samples):
        job = jobs[index % len(jobs)]
        with counter.measure() as sent, Timer() as timer:
            state = store.get_watermark(job)
        assert state is not None and state["version"] >= history
        get_latency.append(timer.seconds)
        get_requests.append(sum(sent.values()))
        get_operations.update(sent)

    commit_latency, commit_requests, commit_operations = [], [], set()
    for index in range(samples):
        job = jobs[index % len(jobs)]
        store.get_watermark(job)  # a run reads its state first; not part of the commit
        with counter.measure() as sent, Timer() as timer:
            item = store.create_watermark_item(job, f"jr_{uuid.uuid4().hex}", cursor=-index)
            store.add_watermark(item)
        commit_latency.append(timer.seconds)
        commit_requests.append(sum(sent.values()))
        commit_operations.update(sent)
    return {
        "history_items": history,
        "history_items_stored": stored,
        "jobs": len(jobs),
        "seeding_seconds": round(seeding.seconds, 2),
        "seeding_commits_per_second": round(len(jobs) * history / seeding.seconds, 1),
        "get_watermark": {**_stats(get_latency, get_requests), "operations": sorted(get_operations)},
        "commit": {
            **_stats(commit_latency, commit_requests),
            "operations": sorted(commit_operations),
        },
    }


def run(ctx: Context) -> dict[str, Any]:
    samples = ctx.scale.watermark_samples
    return {
        "description": (
            "Requests and latency of Watermarks.get_watermark and of a commit "
            "(create_watermark_item + add_watermark) against the local endpoint, "
            f"{samples} timed calls each, by history length"
        ),
        "points": [
            bench_history(ctx, history, samples)
            for history in sorted(ctx.scale.watermark_histories)
        ],
    }
