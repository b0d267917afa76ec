"""Every AWS call of an apply, evaluated against the IAM policies Terraform renders.

dev and prod (environments/aws with dev.tfvars and prod.tfvars) are applied into one
emulated account, side by side, with the provider's calls recorded from its debug log
(``TF_LOG_PROVIDER=debug``: service, operation, request parameters). Each call becomes
the IAM requests AWS authorizes it by (``tests/harness/iam.py``), evaluated offline by
@cloud-copilot/iam-simulate, the exact version ``tools/iam-eval/package-lock.json`` pins,
against the CI deploy role's identity policy (terraform/ci's plan) and the resource's own
policy (the key policies, bucket policy, topic and queue policies of the applied state).
A pull-request plan refreshes what an apply reads: the read calls are evaluated for the
pull-request plan role.

The emulators enforce none of this (LocalStack, moto): they only make the calls real.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from tests.harness.iam import (
    EVALUATOR,
    EVALUATOR_PACKAGE,
    Account,
    Principal,
    RecordedApply,
    Request,
    Verdict,
    apply_recorded,
    apply_requests,
    emulator_override,
    evaluate,
    evaluator_version,
    role_policies,
)
from tests.harness.moto_shim import moto_with_shim
from tests.harness.terraform import TF, copy_tree, terraform_env, tf

pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("iam_evaluation")]

# The evaluator and the version this test was written against (package-lock.json pins it).
EVALUATOR_VERSION = "0.1.173"
REGION = "eu-west-1"
ENVIRONMENTS = ("dev", "prod")
READ_PREFIXES = ("Get", "List", "Describe", "Head", "ValidateStateMachineDefinition")

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)
if not (EVALUATOR / "node_modules" / EVALUATOR_PACKAGE).exists() or not shutil.which("node"):
    pytest.skip("the IAM evaluator is not installed; run scripts/setup.sh", allow_module_level=True)


@dataclass
class Recorded:
    account: str
    applies: dict[str, RecordedApply]
    ci_roles: dict[str, list[tuple[str, dict[str, Any]]]]

    def role(self, name: str) -> Principal:
        return Principal(f"arn:aws:iam::{self.account}:role/{name}", tuple(self.ci_roles[name]))

    def requests(self, environment: str) -> list[Request]:
        applied = self.applies[environment]
        return apply_requests(applied.calls, Account("aws", REGION, self.account), applied.state)


@pytest.fixture(scope="module")
def recorded(endpoint, tmp_path_factory) -> Iterator[Recorded]:
    endpoint.reset()
    account = boto3.client(
        "sts", endpoint_url=endpoint.url, region_name=REGION
    ).get_caller_identity()["Account"]
    with moto_with_shim(account) as moto:
        override = emulator_override(endpoint.url, moto)
        env = {**terraform_env(), "AWS_REGION": REGION}
        ci = copy_tree(tmp_path_factory.mktemp("ci")) / "ci"
        (ci / "override.tf").write_text(override)
        trees = {}
        for environment in ENVIRONMENTS:
            trees[environment] = (
                copy_tree(tmp_path_factory.mktemp(environment)) / "environments" / "aws"
            )
            (trees[environment] / "override.tf").write_text(override)
        # Both environments in one account at once: their names must not collide.
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {
                e: pool.submit(apply_recorded, d, f"{e}.tfvars", e, env, TF)
                for e, d in trees.items()
            }
            tf(ci, "init", "-no-color")
            tf(ci, "plan", "-no-color", "-var-file=example.tfvars", "-out=ci.tfplan")
            plan = json.loads(tf(ci, "show", "-json", "ci.tfplan").stdout)
            applies = {e: f.result() for e, f in futures.items()}
        yield Recorded(account, applies, role_policies(plan))


def _refused(verdicts: list[Verdict]) -> list[str]:
    seen: dict[str, None] = {}
    for v in verdicts:
        if v.result != "Allowed":
            seen[f"{v.result}: {v.request.describe()} [{v.reason}]"] = None
    return list(seen)


def test_the_evaluator_is_the_pinned_iam_simulate():
    lock = json.loads((EVALUATOR / "package-lock.json").read_text())
    pinned = lock["packages"][f"node_modules/{EVALUATOR_PACKAGE}"]
    assert pinned["version"] == EVALUATOR_VERSION == evaluator_version()
    assert pinned["integrity"].startswith("sha512-")


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_an_apply_is_allowed_for_the_deploy_role(recorded, environment):
    requests = recorded.requests(environment)
    assert len(requests) > 300, "the apply recorded too few calls to be the whole apply"
    verdicts = evaluate(recorded.role(f"gi-ci-{environment}-deploy"), requests, recorded.account)
    refused = _refused(verdicts)
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)
