"""docs/bootstrap.md's checklist, every ``sh`` block in order, on the local emulators.

The recommended layout's dev account: the state buckets, ``terraform/ci`` with the committed
backend template and ``example.dev-account.tfvars``, the JDBC pipeline's secret and
connection, the first apply of ``environments/aws`` pinned to the release ``deploy
--print-release`` names, the first ``deploy --env dev``, the on-call subscriptions. Each
block runs as the page shows it, in a checkout whose ``terraform/`` is a copy; only the
placeholders of ``PLACEHOLDERS`` are filled in, and an override file (never the commands)
routes the provider and the S3 backend to the emulators: LocalStack (S3, IAM, KMS, SNS,
Secrets Manager, ...) and moto (Glue, DynamoDB, EC2, Athena, Step Functions), as
``tests/iam/test_iam_evaluation.py`` does. The ``sh github`` blocks are checked against the
workflow in ``tests/unit/test_bootstrap_page.py``; what the emulators do not enforce (IAM)
is evaluated there and in the IAM test.

Then a commit's next apply, as the workflow's own steps run it (``platform.yml``): the plan
pins the new release, the apply job publishes it before ``terraform apply`` moves the jobs
to it, and the deploy verifies it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from tests.harness.bootstrap import ROOT, blocks, workflow_step
from tests.harness.iam import emulator_override
from tests.harness.moto_shim import moto_with_shim
from tests.harness.provider_daemons import reattached
from tests.harness.readme import run_documented
from tests.harness.terraform import TF, copy_tree, terraform_env

# One worker walks the checklist once: the module's tests read what that one walk left.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("bootstrap")]

REGION = "eu-west-1"
# Every placeholder the page's sh blocks use, and the value the test gives it: the dev
# account of one account per environment, dev.tfvars's JDBC pipeline.
PLACEHOLDERS = {
    "<account>": "dev",
    "<layout>": "example.dev-account",
    "<env>": "dev",
    "<db-user>": "glue_reader",
    "<db-password>": "only-on-the-emulator",
    "<subnet-id>": "subnet-0a1b2c3d4e5f60718",
    "<security-group-id>": "sg-0a1b2c3d4e5f60718",
    "<availability-zone>": f"{REGION}a",
}
MOTO_SERVICES = ("GLUE", "DYNAMODB", "EC2", "ATHENA", "SFN")
# The roots' own backend settings (versions.tf), plus what points them at LocalStack.
S3_BACKEND = """backend "s3" {
    use_lockfile                = true
    encrypt                     = true
    use_path_style              = true
    access_key                  = "test"
    secret_key                  = "test"
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
    endpoints = { s3 = "%(url)s", sts = "%(url)s" }
  }"""

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)


def checkout(tmp_path: Path, override: str) -> Path:
    """A checkout whose ``terraform/`` is a copy with the emulators' override in both roots."""
    root = tmp_path / "checkout"
    root.mkdir()
    terraform = copy_tree(root)
    # A copy: a later test changes a script, as a commit would, for a new release.
    shutil.copytree(ROOT / "glue_scripts", root / "glue_scripts")
    for name in ("lib", "build", ".venv"):
        (root / name).symlink_to(ROOT / name)
    for directory in ("ci", "environments/aws"):
        (terraform / directory / "override.tf").write_text(override)
    return root


@pytest.fixture(scope="module")
def walked(endpoint, tmp_path_factory) -> Iterator[tuple[Path, list[str], dict[str, str]]]:
    """Every sh block run in order; the checkout, each block's stdout, the environment."""
    endpoint.reset()
    account = boto3.client(
        "sts", endpoint_url=endpoint.url, region_name=REGION
    ).get_caller_identity()["Account"]
    with moto_with_shim(account, update_job=True) as moto, reattached() as provider:
        override = emulator_override(endpoint.url, moto).replace(
            'backend "local" {}', S3_BACKEND % {"url": endpoint.url}
        )
        root = checkout(tmp_path_factory.mktemp("bootstrap"), override)
        env = {
            **terraform_env(),
            **provider,
            **endpoint.environment(),
            **{f"AWS_ENDPOINT_URL_{service}": moto for service in MOTO_SERVICES},
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            # The administrator answering `yes` to each apply.
            "TF_CLI_ARGS_apply": "-auto-approve",
            "PYTHONPATH": os.pathsep.join([str(root / "lib"), str(root)]),
        }
        env.pop("TF_DATA_DIR", None)
        outputs = [
            run_documented(block.script(PLACEHOLDERS), cwd=root, env=env, page="docs/bootstrap.md")
            for block in blocks()
            if block.kind == "sh"
        ]
        yield root, outputs, env


def _output(outputs: list[str], pattern: str) -> re.Match[str]:
    found = [m for out in outputs if (m := re.search(pattern, out, flags=re.MULTILINE))]
    assert found, f"no block printed {pattern!r}:\n" + "\n".join(outputs)
    return found[0]


def test_the_checklist_runs_in_order_with_only_its_documented_placeholders(walked):
    _, outputs, _ = walked
    assert len(outputs) == len([b for b in blocks() if b.kind == "sh"]) >= 7
    used = {
        name
        for block in blocks()
        if block.kind == "sh"
        for name in PLACEHOLDERS
        if name in block.text
    }
    assert used == set(PLACEHOLDERS), f"placeholders no block uses: {set(PLACEHOLDERS) - used}"


def test_the_state_buckets_are_versioned_encrypted_and_not_public_and_hold_the_states(
    endpoint, walked
):
    s3 = boto3.client("s3", endpoint_url=endpoint.url, region_name=REGION)
    states = {
        "example-terraform-state-ci": "glue-incremental/ci/terraform.tfstate",
        "example-terraform-state-dev": "glue-incremental/dev/terraform.tfstate",
    }
    for bucket, key in states.items():
        assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
        (rule,) = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"][
            "Rules"
        ]
        assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
        block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
        assert all(block.values()) and len(block) == 4, block
        state = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        assert state["resources"], f"s3://{bucket}/{key} holds an empty state"


def test_the_ci_roles_of_the_dev_account_are_the_ones_the_workflow_variables_name(walked):
    _, outputs, _ = walked
    role_arns = json.loads(_output(outputs, r"^\{.*\"dev\".*\}$").group(0))
    assert set(role_arns) == {"dev"}
    assert {kind: arn.rsplit("/", 1)[1] for kind, arn in role_arns["dev"].items()} == {
        "pull_request": "gi-ci-dev-pull-request-plan",
        "plan": "gi-ci-dev-plan",
        "deploy": "gi-ci-dev-deploy",
        "publish": "gi-ci-dev-publish",
    }


def test_the_jdbc_pipelines_secret_and_connection_exist(walked):
    _, outputs, env = walked
    assert _output(outputs, r"^arn:aws:secretsmanager:\S+:secret:gi-dev/shop-db-\S+$")
    glue = boto3.client("glue", endpoint_url=env["AWS_ENDPOINT_URL_GLUE"], region_name=REGION)
    connection = glue.get_connection(Name="gi-dev-shop-db")["Connection"]
    # moto answers without the top-level ConnectionType: the requirements are what Glue
    # places the job's network interfaces by.
    requirements = connection["PhysicalConnectionRequirements"]
    assert requirements["SubnetId"] == PLACEHOLDERS["<subnet-id>"]
    assert requirements["SecurityGroupIdList"] == [PLACEHOLDERS["<security-group-id>"]]


def test_the_first_apply_pins_the_release_the_first_deploy_publishes_and_prints(walked):
    _, outputs, env = walked
    pinned = _output(outputs, r"^release (\w+)$").group(1)
    deployed = [m.group(1) for out in outputs for m in re.finditer(r"^release (\w+)$", out, re.M)]
    assert deployed == [pinned, pinned], "the deploy printed another release than the apply pinned"
    assert re.search(r"verified: \d+ job\(s\) run a complete release", "".join(outputs))
    glue = boto3.client("glue", endpoint_url=env["AWS_ENDPOINT_URL_GLUE"], region_name=REGION)
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=REGION)
    jobs = [job for job in glue.get_jobs()["Jobs"] if job["Name"].startswith("gi-dev-")]
    assert len(jobs) >= 5, [job["Name"] for job in jobs]
    for job in jobs:
        location = job["Command"]["ScriptLocation"]
        assert f"/releases/{pinned}/" in location, (job["Name"], location)
        bucket, _, key = location.removeprefix("s3://").partition("/")
        s3.head_object(Bucket=bucket, Key=key)


def test_the_oncall_subscriptions_are_listed_for_their_confirmation(walked):
    _, outputs, _ = walked
    assert _output(outputs, r"^email\s+data-platform-dev@example\.com\s+\S+$")


def _jobs(env: dict[str, str]) -> list[dict]:
    glue = boto3.client("glue", endpoint_url=env["AWS_ENDPOINT_URL_GLUE"], region_name=REGION)
    return [job for job in glue.get_jobs()["Jobs"] if job["Name"].startswith("gi-dev-")]


def _script_objects(env: dict[str, str], jobs: list[dict]) -> list[str]:
    """Each job's script location; every one must exist."""
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=REGION)
    locations = [job["Command"]["ScriptLocation"] for job in jobs]
    for location in locations:
        bucket, _, key = location.removeprefix("s3://").partition("/")
        s3.head_object(Bucket=bucket, Key=key)
    return locations


def test_a_later_apply_publishes_its_release_before_it_pins_it(walked, tmp_path):
    """A commit changing a script, through the workflow's steps: the plan pins the new
    release; the apply job publishes it (jobs still on the old one), then applies the plan
    (every job on the new one, every object there); the deploy verifies it."""
    root, outputs, env = walked
    before = _output(outputs, r"^release (\w+)$").group(1)
    script = root / "glue_scripts" / "incremental_load.py"
    script.write_text(script.read_text() + "\n# changed by a commit: a new release\n")
    github_env = tmp_path / "github_env"
    env = {
        **env,
        # The workflow's `python` is the job's, with the project installed.
        "PATH": os.pathsep.join([str(root / ".venv" / "bin"), env["PATH"]]),
        "GITHUB_WORKSPACE": str(root),
        "GITHUB_ENV": str(github_env),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "TF_DATA_DIR": str(root / "terraform" / "environments" / "aws" / ".terraform-dev"),
        "IS_PULL_REQUEST": "false",
    }

    def step(job: str, name: str) -> str:
        script, directory = workflow_step(job, name, {"environment": "dev"})
        return run_documented(script, cwd=root / directory, env=env, page=f"{job}: {name}")

    step("plan", "the release this commit builds")
    release = github_env.read_text().split("RELEASE=", 1)[1].split()[0]
    assert release != before
    env["RELEASE"] = release
    step("plan", "terraform plan")

    step("apply-dev", "publish the release before the apply pins it")
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=REGION)
    (bucket,) = {
        loc.removeprefix("s3://").split("/")[0] for loc in _script_objects(env, _jobs(env))
    }
    s3.head_object(Bucket=bucket, Key=f"releases/{release}/manifest.json")
    assert all(f"/releases/{before}/" in loc for loc in _script_objects(env, _jobs(env)))

    step("apply-dev", "terraform apply")
    locations = _script_objects(env, _jobs(env))
    assert all(f"/releases/{release}/" in loc for loc in locations), locations

    deployed = step("deploy-dev", "deploy --env dev")
    assert re.search(rf"^release {release}$", deployed, flags=re.MULTILINE), deployed
