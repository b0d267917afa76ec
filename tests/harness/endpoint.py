"""A LocalStack-compatible AWS endpoint for tests and the demo.

LocalStack is used when it answers at ``LOCALSTACK_ENDPOINT`` (default
``http://localhost:4566``); otherwise moto's standalone server is started on a
free loopback port and stopped afterwards. Dummy credentials are always set so
that nothing is ever read from a real profile.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_SESSION_TOKEN": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}


def use_dummy_credentials() -> None:
    os.environ.update(DUMMY_ENV)
    os.environ.pop("AWS_PROFILE", None)


@dataclass(frozen=True)
class Endpoint:
    url: str
    kind: str  # "localstack" | "moto"

    def reset(self) -> None:
        """Drop every resource on the endpoint (between tests)."""
        path = "/_localstack/state/reset" if self.kind == "localstack" else "/moto-api/reset"
        request = urllib.request.Request(self.url + path, data=b"", method="POST")
        urllib.request.urlopen(request, timeout=30).read()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def localstack_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_localstack/health", timeout=1.5) as response:
            return "services" in json.loads(response.read() or b"{}")
    except (OSError, ValueError):
        return False


@contextmanager
def running_endpoint() -> Iterator[Endpoint]:
    """Yield an endpoint and export it as ``AWS_ENDPOINT_URL`` for the duration."""
    use_dummy_credentials()
    previous = os.environ.get("AWS_ENDPOINT_URL")
    localstack_url = os.environ.get("LOCALSTACK_ENDPOINT", "http://localhost:4566")
    server = None
    if os.environ.get("GLUE_INCREMENTAL_FORCE_MOTO") != "1" and localstack_answers(localstack_url):
        endpoint = Endpoint(localstack_url, "localstack")
    else:
        from moto.server import ThreadedMotoServer

        # moto's server logs every request through werkzeug; tests only want failures.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

        port = free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        endpoint = Endpoint(f"http://127.0.0.1:{port}", "moto")
    os.environ["AWS_ENDPOINT_URL"] = endpoint.url
    from glue_incremental import aws

    aws.reset_client_cache()
    try:
        yield endpoint
    finally:
        if server is not None:
            server.stop()
        if previous is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = previous
        aws.reset_client_cache()
