"""moto's server behind a small proxy that answers the calls moto lacks for an apply.

Terraform's AWS provider (>= 5.67) validates a state machine's definition at plan with
Step Functions' ValidateStateMachineDefinition and lists its versions on create, which
moto 5.2 answers with a 500; the proxy answers them (OK, none) (the definition is checked by ``terraform test`` of
modules/glue_event_chain, not here) and forwards every other request unchanged.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.harness.endpoint import free_port

ROOT = Path(__file__).resolve().parents[2]
MOTO_SERVER = ROOT / ".venv" / "bin" / "moto_server"
# Step Functions calls the provider makes that moto 5.2 answers with a 500, and their answer.
ANSWERS = {
    "AWSStepFunctions.ValidateStateMachineDefinition": b'{"result": "OK", "diagnostics": []}',
    "AWSStepFunctions.ListStateMachineVersions": b'{"stateMachineVersions": []}',
}


def _handler(upstream_port: int) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def end_headers(self) -> None:
            # One request per connection: a client never reuses a connection the proxy's
            # thread may be done with (a reused one failed a read, "use of closed network
            # connection", under load).
            self.send_header("Connection", "close")
            self.close_connection = True
            super().end_headers()

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            payload = ANSWERS.get(self.headers.get("X-Amz-Target") or "")
            if payload is not None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in {"transfer-encoding", "connection", "content-length"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

    return Forward


def serve_with_update_job() -> None:
    """moto's server (``moto_server``'s arguments) answering glue:UpdateJob, for a second
    apply that updates jobs in place: the session moto's teaching
    (``glue_incremental_tools.localendpoint``), with the JobUpdate fields moto's jobs do not
    keep (JobMode, JobRunQueuingEnabled, MaintenanceWindow) dropped, as its CreateJob drops them."""
    import inspect
    import sys

    from glue_incremental_tools.localendpoint import _teach_moto_update_job
    from moto.core.utils import camelcase_to_underscores
    from moto.glue.models import GlueBackend
    from moto.glue.responses import GlueResponse
    from moto.server import main

    _teach_moto_update_job()
    taught = GlueResponse.update_job  # type: ignore[attr-defined]
    kept = set(inspect.signature(GlueBackend.create_job).parameters)

    def update_job(self: Any) -> Any:
        get = self._get_param

        def known_fields(name: str, *args: Any, **kwargs: Any) -> Any:
            value = get(name, *args, **kwargs)
            if name == "JobUpdate":
                value = {k: v for k, v in value.items() if camelcase_to_underscores(k) in kept}
            return value

        self._get_param = known_fields
        return taught(self)

    GlueResponse.update_job = update_job  # type: ignore[attr-defined]
    sys.exit(main(sys.argv[1:]))


_WITH_UPDATE_JOB = (
    "from tests.harness.moto_shim import serve_with_update_job; serve_with_update_job()"
)


@contextmanager
def moto_with_shim(account_id: str, update_job: bool = False) -> Iterator[str]:
    """A moto server of its own in ``account_id`` (LocalStack's, so ARNs agree), and the proxy's
    URL; ``update_job`` answers glue:UpdateJob (moto 5.2 alone does not)."""
    port = free_port()
    command = [str(MOTO_SERVER.parent / "python"), "-c", _WITH_UPDATE_JOB]
    server = subprocess.Popen(
        [*(command if update_job else [str(MOTO_SERVER)]), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MOTO_ACCOUNT_ID": account_id},
    )
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _handler(port))
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/moto-api/data.json")
                conn.getresponse().read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{proxy.server_address[1]}"
    finally:
        proxy.shutdown()
        server.terminate()
        server.wait(timeout=10)
