"""Helpers for tests whose data lives in LocalStack's S3 (``s3_root`` fixture).

Objects are put with boto3 (as an upstream producer would) and read back by Spark
through S3A. S3 sets modification times itself, so tests on S3 run on the real
clock instead of stamping files.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from glue_incremental import aws
from glue_incremental.load.job import LoadConfig
from glue_incremental.sources.discovery import (
    DiscoveredPlan,
    Discovery,
    DiscoveryState,
    plan_discovered_read,
)
from glue_incremental.sources.files import FileBookmark
from glue_incremental.watermarks import Watermarks

from tests.harness.loads import FixedClock, run_load_at

_objects = itertools.count()


def split_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> (bucket, key); ``s3a://`` too."""
    scheme, _, rest = uri.partition("://")
    if scheme not in {"s3", "s3a"} or "/" not in rest:
        raise ValueError(f"{uri!r} is not an s3://bucket/key URI")
    bucket, _, key = rest.partition("/")
    return bucket, key


def put_json_lines(directory_uri: str, rows: Iterable[Mapping[str, Any]]) -> str:
    """One JSON-lines object under ``directory_uri``; returns its URI."""
    bucket, prefix = split_uri(directory_uri.rstrip("/") + "/")
    key = f"{prefix}batch-{next(_objects):06d}.json"
    body = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    aws.client("s3").put_object(Bucket=bucket, Key=key, Body=body.encode())
    return f"s3://{bucket}/{key}"


def keys_under(uri: str) -> list[str]:
    """Every object key under ``uri`` (sorted)."""
    bucket, prefix = split_uri(uri.rstrip("/") + "/")
    pages = aws.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def after_last_write(margin: float = 1.0) -> float:
    """A run start strictly after everything put so far (S3 times have one-second resolution)."""
    time.sleep(margin)
    return time.time()


def runs_after_last_write(
    spark: Any, config: LoadConfig, store: Watermarks, job_name: str, margin: float = 1.5
) -> Callable[..., dict[str, Any]]:
    """A function running the job once per call (run ids ``jr_0``, ``jr_1``, ...), each
    starting ``margin`` seconds after the newest object S3 stamped (S3 times are whole
    seconds; 1.5 s is also past a 1 s message visibility, so unread messages are back)."""
    run_ids = itertools.count()

    def run(hook: Any = None) -> dict[str, Any]:
        return run_load_at(
            spark,
            config,
            job_name=job_name,
            run_id=f"jr_{next(run_ids)}",
            clock=FixedClock(after_last_write(margin)),
            store=store,
            hook=hook,
        )

    return run


# S3 times have one-second resolution: a band of one second, history >= 2 s older than new files.
BAND_SECONDS = 1


def plan_listing(
    root: str,
    bookmark: FileBookmark | None,
    state: DiscoveryState | None,
    every: int,
    *,
    run_start: float | None = None,
    **options: Any,
) -> tuple[DiscoveredPlan, FileBookmark, DiscoveryState]:
    """One ordered-listing plan of ``root`` starting at ``run_start`` (default: just after the
    newest object): (the plan, the next bookmark, the next discovery state)."""
    start = after_last_write() if run_start is None else run_start
    found = plan_discovered_read(
        root,
        bookmark,
        state,
        Discovery("listing", every),
        run_start_ms=int(start * 1000),
        band_seconds=BAND_SECONDS,
        **options,
    )
    return found, found.plan.next_bookmark, found.next_state
