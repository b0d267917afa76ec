"""Terraform's AWS provider started once per worker and reattached by every terraform command.

Each plan or apply otherwise starts the provider two or three times (schema, validate, plan,
apply), and every start builds the provider's whole schema: most of a plan's time on these
machines (`terraform test` of modules/glue_job: 48 s, reattached 8 s). Terraform's own
debug mechanism, ``TF_REATTACH_PROVIDERS`` (what terraform-plugin-testing runs its
acceptance tests on), points a command at a provider that is already running. The same
binary from the same mirror serves the same real plans and applies.

A provider keeps the configuration of the last command that configured it, so a command
leases a provider of its own for its duration: commands that run at the same time (the
suites' threads) get one each, commands that follow each other share one.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MIRROR = Path(os.environ.get("TF_PROVIDER_MIRROR", "/opt/tf-plugins"))
STARTUP_TIMEOUT = 180.0
_REATTACH = re.compile(r"TF_REATTACH_PROVIDERS='([^']+)'")
# The provider logs every RPC at trace level in debug mode: silenced, it stays fast.
_QUIET = {
    name: "off"
    for name in (
        "TF_LOG_PROVIDER",
        "TF_LOG_SDK",
        "TF_LOG_SDK_PROTO",
        "TF_LOG_SDK_MUX",
        "TF_LOG_SDK_FRAMEWORK",
        "TF_LOG_SDK_HELPER_SCHEMA",
        "TF_LOG_SDK_HELPER_RESOURCE",
    )
}


def provider_binary() -> Path | None:
    """The AWS provider of the local mirror, or None (then commands start their own)."""
    found = sorted(MIRROR.glob("registry.terraform.io/hashicorp/aws/*/*/terraform-provider-aws_*"))
    return found[-1] if found and os.access(found[-1], os.X_OK) else None


# The provider runs under a shell that waits on a pipe from this process and stops it when
# the pipe closes: when the worker ends, however it ends (prctl's parent-death signal fires
# when the *thread* that started the child ends, and the suites start terraform from threads).
_WATCHED = 'exec 3<&0; "$0" -debug </dev/null & provider=$!; read -r _ <&3; kill "$provider"; wait'


def _provider_env() -> dict[str, str]:
    # A reattached provider is configured once per command phase (plan, then apply) in one
    # process, and the AWS SDK fails the second configuration when AWS_CA_BUNDLE is set
    # ("unable to add custom RootCAs HTTPClient"). The tests' endpoints are plain HTTP.
    kept = {name: value for name, value in os.environ.items() if name != "AWS_CA_BUNDLE"}
    return {**kept, **_QUIET}


class _Provider:
    def __init__(self, binary: Path) -> None:
        descriptor, name = tempfile.mkstemp(prefix="tf-provider-", suffix=".log")
        self.log = Path(name)
        with os.fdopen(descriptor, "wb") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", _WATCHED, str(binary)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_provider_env(),
            )
        self.reattach = self._wait_for_address()

    def _wait_for_address(self) -> str:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            found = _REATTACH.search(self.log.read_text(errors="replace"))
            if found:
                json.loads(found.group(1))  # a whole line, not half of one
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        if self.process.stdin is not None:
            self.process.stdin.close()
        raise RuntimeError(f"the AWS provider did not start in debug mode (log {self.log})")

    def alive(self) -> bool:
        pid = next(iter(json.loads(self.reattach).values()))["Pid"]
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the shell stops the provider, then ends
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.unlink(missing_ok=True)


_lock = threading.Lock()
_idle: list[_Provider] = []
_started: list[_Provider] = []


@contextmanager
def reattached() -> Iterator[dict[str, str]]:
    """Environment for one terraform command: a running provider of its own, or nothing."""
    binary = provider_binary()
    if binary is None or os.environ.get("GLUE_INCREMENTAL_TF_REATTACH") == "0":
        yield {}
        return
    with _lock:
        provider = _idle.pop() if _idle else None
    if provider is None or not provider.alive():
        provider = _Provider(binary)
        with _lock:
            _started.append(provider)
    try:
        yield {"TF_REATTACH_PROVIDERS": provider.reattach}
    finally:
        with _lock:
            if provider.alive():
                _idle.append(provider)


def stop_all() -> None:
    """Stop every provider this process started (the session's end)."""
    with _lock:
        providers, _started[:], _idle[:] = list(_started), [], []
    for provider in providers:
        provider.stop()


atexit.register(stop_all)
