"""Running Terraform in tests: the CLI on a copy of ``terraform/``, and reading plans.

Every command runs on a copy of the tree in a temporary directory, so the repository never
gains ``.terraform/`` or state files and parallel workers do not share a working directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

# A change that is only DynamoDB Local not describing SSE back: the rule `make apply` uses.
from glue_incremental_tools.stack_process import DYNAMODB_LOCAL_GAPS, local_gap  # noqa: F401

from tests.harness.provider_daemons import reattached

ROOT = Path(__file__).resolve().parents[2]
TERRAFORM = ROOT / "terraform"
TF = shutil.which("terraform") or "/usr/local/bin/terraform"
# A hang, not a slow machine: `terraform test` of incremental_pipeline (50+ runs) takes
# 2-3 minutes alone and more than 5 beside the other workers on two cores.
TIMEOUT = 900


def terraform_env() -> dict[str, str]:
    rc = ROOT / "build" / "terraformrc"
    if not rc.exists():
        subprocess.run([str(ROOT / "scripts" / "terraformrc.sh")], check=True, capture_output=True)
    return {
        **os.environ,
        "TF_CLI_CONFIG_FILE": str(rc),
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
        "CHECKPOINT_DISABLE": "1",
    }


def tf(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    with reattached() as provider:
        result = subprocess.run(
            [TF, *args],
            cwd=cwd,
            env={**terraform_env(), **provider},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    if check and result.returncode != 0:
        raise AssertionError(
            f"terraform {' '.join(args)} in {cwd} exited {result.returncode}:\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    return result


def copy_tree(destination: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".terraform", "*.tfstate", "*.tfstate.*", ".terraform.tfstate.lock.info"
    )
    return Path(shutil.copytree(TERRAFORM, destination / "terraform", ignore=ignore))


# DynamoDB Local accepts SSESpecification but never describes it back: the one
# difference a second plan may show (terraform/environments/local/README.md).


def changed_attributes(shown_plan: dict[str, Any]) -> dict[str, set[str]]:
    changes = {}
    for change in shown_plan.get("resource_changes") or []:
        if change["change"]["actions"] in (["no-op"], ["read"]):
            continue
        before = change["change"].get("before") or {}
        after = change["change"].get("after") or {}
        unknown = change["change"].get("after_unknown") or {}
        changes[change["address"]] = {
            key
            for key in set(before) | set(after)
            if before.get(key) != after.get(key) or unknown.get(key)
        }
    return changes
