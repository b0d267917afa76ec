"""The background process of ``make up`` and ``make apply``'s re-apply to it.

``stack.up`` starts ``python -m glue_incremental_tools.stack_process serve WORKDIR``
and waits for its ``stack.json``; it lives apart from ``stack`` because it drives
the demo's steps, while the demo and the commands read the stack record.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glue_incremental_tools import deploy, stack
from glue_incremental_tools.demo import Demo
from glue_incremental_tools.errors import CommandError
from glue_incremental_tools.localendpoint import DUMMY_ENV, running_local_aws
from glue_incremental_tools.stack import STACK_FILE


def serve(workdir: Path) -> None:
    """Run the stack until SIGTERM: local AWS, terraform apply, deploy, the source files."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with running_local_aws() as endpoint:
        demo = Demo(workdir, endpoint)
        outputs = demo.terraform_apply()
        demo.deploy()
        demo.generate_source()
        record = {
            "pid": os.getpid(),
            # `apply` re-applies Terraform to these same endpoints from another process.
            "terraform_vars": endpoint.terraform_vars(),
            "environment": {**DUMMY_ENV, **endpoint.environment(), **demo.terraform_env},
            "jobs": outputs["job_names"],
            "data_bucket": outputs.get("data_bucket_name"),
            "watermarks_table": outputs["watermarks_table_name"],
        }
        _write_record(workdir, record)
        print("stack ready", flush=True)
        while True:
            signal.pause()


# DynamoDB Local does not describe a table's server-side encryption back, so every plan
# wants to update it, and it refuses that update ("Nothing to update").
DYNAMODB_LOCAL_GAPS = frozenset({"server_side_encryption"})


def local_gap(address: str, changed: set[str]) -> bool:
    """A planned change that is only DynamoDB Local not describing SSE back."""
    return address.endswith("aws_dynamodb_table.this") and changed <= DYNAMODB_LOCAL_GAPS


@dataclass(frozen=True)
class RecordedEndpoint:
    """The running stack's endpoints, as ``serve`` recorded them for Terraform."""

    variables: list[str]

    def terraform_vars(self) -> list[str]:
        return list(self.variables)


def apply(root: Path | None = None, out: Callable[[str], Any] = print) -> dict[str, Any]:
    """Re-apply environments/local to the running stack, then deploy; returns the outputs.

    Same Terraform state and endpoints as ``up``: what the change adds or edits is
    applied in place, and the watermarks, targets and source files stay as they are.
    """
    record = stack.read_stack(root)
    if record is None:
        raise deploy.UnresolvedEnvironment(
            "the local stack is not running: start it with `make up` (stop it with `make down`)"
        )
    stack.use_local_stack(root)
    workdir = stack.stack_dir(root)
    demo = Demo(
        workdir,
        RecordedEndpoint(record["terraform_vars"]),
        log=lambda line: out(f"  {line}"),
        root=root or deploy.project_root(),
    )
    out("applying terraform/environments/local to the running stack ...")
    changes = demo.planned_changes()
    targets = [
        address for address, (_, changed) in changes.items() if not local_gap(address, changed)
    ]
    if not targets:
        # Nothing but the emulator's gap to change: applying would only fail on it.
        outputs = demo.read_outputs()
    elif len(targets) == len(changes):
        # The plan just made, applied as it is: no second refresh, the outputs updated.
        outputs = demo.apply_planned()
    else:
        demo.terraform_apply(targets)
        # A targeted apply leaves the root outputs as they were: a pipeline it added would be
        # missing from `pipelines`, which every `--env local` command reads.
        outputs = demo.refresh_outputs()
    out(f"{len(targets)} resource(s) changed")
    demo.deploy()
    record.update(jobs=outputs["job_names"], data_bucket=outputs.get("data_bucket_name"))
    _write_record(workdir, record)
    out(f"applied; jobs: {', '.join(sorted(outputs['job_names'].values()))}")
    return outputs


def _write_record(workdir: Path, record: dict[str, Any]) -> None:
    partial = workdir / f"{STACK_FILE}.tmp"
    partial.write_text(json.dumps(record, indent=2))
    partial.replace(workdir / STACK_FILE)


def register(subparsers: Any) -> None:
    """Add the ``apply`` command."""
    parser = subparsers.add_parser(
        "apply",
        help="re-apply Terraform to the running local stack (make apply), keeping its data",
        description="Apply terraform/environments/local again to the stack `up` started, and "
        "deploy: pipelines added or changed take effect; watermarks, targets and source files "
        "stay.",
    )
    parser.set_defaults(handler=_cmd_apply)


def _cmd_apply(_args: argparse.Namespace) -> int:
    try:
        apply()
    except deploy.DeployError as error:
        raise CommandError(str(error)) from None
    return 0


if __name__ == "__main__":  # the background process `up` starts
    if sys.argv[1:2] == ["serve"] and len(sys.argv) == 3:
        serve(Path(sys.argv[2]))
    else:
        sys.exit("usage: python -m glue_incremental_tools.stack_process serve WORKDIR")
