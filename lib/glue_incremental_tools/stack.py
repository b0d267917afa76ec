"""``make up`` / ``make down``: the local environment, left running for commands to try.

``python -m glue_incremental up`` starts a background process that runs local AWS
(LocalStack, DynamoDB Local, moto for Glue, as ``make demo`` does), applies
``terraform/environments/local``, deploys, and lands the demo's source files
(orders and customers, JSON) in the data bucket; it returns once all of that is
ready and writes ``.local-stack/stack.json`` (the process id and the endpoint
variables). Commands given ``--env local`` (``status``, ``watermarks``, ``deploy``)
and ``run`` then find the stack by themselves, unless ``AWS_ENDPOINT_URL`` is set.
``down`` stops the process (its servers die with it) and removes the directory.
Nothing outlives ``down``: the servers keep their state in memory and temp dirs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from glue_incremental import aws

from glue_incremental_tools import deploy

ENVIRONMENT = "local"
STACK_DIR = ".local-stack"
STACK_FILE = "stack.json"
START_TIMEOUT_SECONDS = 900.0

# The background process `up` starts (its own module: it drives the demo's steps).
PROCESS_MODULE = "glue_incremental_tools.stack_process"


def stack_dir(root: Path | None = None) -> Path:
    return (root or deploy.project_root()) / STACK_DIR


def read_stack(root: Path | None = None) -> dict[str, Any] | None:
    """The running stack's record, or None when no stack is up (or its process is gone)."""
    path = stack_dir(root) / STACK_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if _alive(int(record.get("pid") or 0)) else None


def use_local_stack(root: Path | None = None) -> None:
    """Route this process to the running local stack, unless endpoints are set already.

    A shell routed to this very stack by ``eval "$(... env --env local)"`` has its
    endpoints only: the stack's other settings (its Terraform data directory, where the
    jars are) fill in what that shell lacks, so every ``--env local`` command still works.
    """
    record = read_stack(root)
    if aws.endpoint_url():
        # the demo, the tests, or a shell that exported the variables itself
        if record is not None and record["environment"].get("AWS_ENDPOINT_URL") == (
            aws.endpoint_url()
        ):
            for name, value in record["environment"].items():
                os.environ.setdefault(name, value)
        return
    if record is None:
        raise deploy.UnresolvedEnvironment(
            "the local stack is not running: start it with `make up` (stop it with `make down`)"
        )
    os.environ.update(record["environment"])
    aws.reset_client_cache()


def up(root: Path | None = None, out: Any = print) -> int:
    """Start the stack in the background and wait until it is ready."""
    workdir = stack_dir(root)
    running = read_stack(root)
    if running is not None:
        out(f"the local stack is already running (pid {running['pid']}); `make down` stops it")
        return 0
    if workdir.exists():
        _remove(workdir)
    workdir.mkdir(parents=True)
    log_path = workdir / "stack.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", PROCESS_MODULE, "serve", str(workdir)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    out(f"starting the local stack (pid {process.pid}, log {log_path}): local AWS, ")
    out("terraform apply of environments/local, deploy, the demo's source files ...")
    started = time.monotonic()
    while read_stack(root) is None:
        if process.poll() is not None:
            last = (log_path.read_text(errors="replace").strip().splitlines() or [""])[-1]
            raise deploy.DeployError(
                f"the local stack stopped while starting (exit {process.returncode}): "
                f"{last.strip()} (whole log: {log_path})"
            )
        if time.monotonic() - started > START_TIMEOUT_SECONDS:
            _stop(process.pid)
            raise deploy.DeployError(
                f"the local stack was not ready within {START_TIMEOUT_SECONDS:.0f} s; see {log_path}"
            )
        time.sleep(1)
    record = read_stack(root) or {}
    out(f"the local stack is up in {time.monotonic() - started:.0f} s (pid {record.get('pid')})")
    out(f"jobs: {', '.join(sorted(record.get('jobs', {}).values()))}")
    out("try:  .venv/bin/python -m glue_incremental status --env local")
    out("stop: make down")
    return 0


def down(root: Path | None = None, out: Any = print) -> int:
    """Stop the stack's process (its servers die with it) and remove its directory."""
    workdir = stack_dir(root)
    record = read_stack(root)
    if record is not None:
        _stop(int(record["pid"]))
        out(f"stopped the local stack (pid {record['pid']})")
    elif not workdir.exists():
        out("the local stack is not running")
        return 0
    _remove(workdir)
    return 0


def _stop(pid: int, timeout: float = 60.0) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own child, not yet reaped) is not running.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def _remove(workdir: Path) -> None:
    import shutil

    shutil.rmtree(workdir, ignore_errors=True)


# -- command line ---------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add ``up`` and ``down``."""
    up_parser = subparsers.add_parser(
        "up",
        help="start the local environment in the background (make up)",
        description=(
            "Start local AWS, apply terraform/environments/local, deploy and land the demo's "
            "source files; return when ready. Commands with --env local use it."
        ),
    )
    up_parser.set_defaults(handler=_cmd_up)
    down_parser = subparsers.add_parser(
        "down",
        help="stop the local environment (make down)",
        description="Stop the local environment that `up` started and remove its directory.",
    )
    down_parser.set_defaults(handler=_cmd_down)


def _cmd_up(_args: argparse.Namespace) -> int:
    from glue_incremental_tools.errors import CommandError

    try:
        return up()
    except deploy.DeployError as error:
        raise CommandError(str(error)) from None


def _cmd_down(_args: argparse.Namespace) -> int:
    return down()
