"""Helpers for tests whose data lives in LocalStack's S3 (``s3_root`` fixture).

Objects are put with boto3 (as an upstream producer would) and read back by Spark
through S3A. S3 sets modification times itself, so tests on S3 run on the real
clock instead of stamping files.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from glue_incremental import aws

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
