"""The one place that builds boto3 clients.

Honours the standard ``AWS_ENDPOINT_URL`` (and the per-service
``AWS_ENDPOINT_URL_<SERVICE>``) variables, so the same code talks to AWS or to
local AWS (LocalStack, DynamoDB Local, moto for Glue). ``LOCALSTACK_ENDPOINT`` is accepted
as the localstack-client convention for the same thing.
"""

from __future__ import annotations

import os
from functools import cache

import boto3
from botocore.client import BaseClient
from botocore.config import Config

DEFAULT_REGION = "us-east-1"
LOCALSTACK_DEFAULT_ENDPOINT = "http://localhost:4566"

# Throttling is retried with back-off by botocore's adaptive mode; what is left
# after the attempts surfaces as a domain error in the caller.
RETRY_CONFIG = Config(
    retries={
        # total_max_attempts counts the first request too (max_attempts counts retries).
        "total_max_attempts": int(os.environ.get("GLUE_INCREMENTAL_MAX_ATTEMPTS", "8")),
        "mode": "adaptive",
    },
    connect_timeout=5,
    read_timeout=30,
)


def endpoint_url(service: str | None = None) -> str | None:
    """The endpoint override in force for ``service``, or None for real AWS."""
    if service:
        specific = os.environ.get(f"AWS_ENDPOINT_URL_{service.upper().replace('-', '_')}")
        if specific:
            return specific
    return os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("LOCALSTACK_ENDPOINT") or None


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def client(service: str, *, config: Config | None = None) -> BaseClient:
    """A boto3 client for ``service`` on the configured endpoint and region."""
    return _client(service, endpoint_url(service), region(), config or RETRY_CONFIG)


@cache
def _client(service: str, endpoint: str | None, region_name: str, config: Config) -> BaseClient:
    return boto3.session.Session().client(
        service, endpoint_url=endpoint, region_name=region_name, config=config
    )


def reset_client_cache() -> None:
    """Forget cached clients (after the endpoint or credentials change)."""
    _client.cache_clear()
