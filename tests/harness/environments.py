"""Every environment's pipelines as Terraform computes them, without applying anything.

Each environment's root is copied to a temporary directory with a local
backend override, initialised against the provider mirror, and asked through
``terraform console`` (with the environment's var file) for each pipeline's
script, job name, run arguments and declared S3 grants. Everything asked for
is derived from variables, so it is known before apply and no credentials or
endpoint are needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.harness.provider_daemons import reattached

ROOT = Path(__file__).resolve().parents[2]
TERRAFORM = ROOT / "terraform"

# environment -> (root directory under terraform/environments, var file or None)
ENVIRONMENTS: dict[str, tuple[str, str | None]] = {
    "dev": ("aws", "dev.tfvars"),
    "prod": ("aws", "prod.tfvars"),
    "local": ("local", None),
}

# ``--conf`` is left out: an Iceberg target's catalog settings name the account id, which a
# data source knows only after apply; the job's parser ignores it (Glue's own parameter).
QUERY = (
    "jsonencode({ for k, p in module.pipeline.pipelines : k => { script = p.script, "
    "job_name = p.job_name, "
    'run_arguments = { for n, v in p.run_arguments : n => v if n != "--conf" }, '
    "target_path = p.target_path, "
    "read_s3_uris = p.read_s3_uris, write_s3_uris = p.write_s3_uris, "
    "secret_arn = p.secret_arn, connections = p.connections } })"
)


@dataclass(frozen=True)
class PlannedPipeline:
    environment: str
    name: str
    script: str
    job_name: str
    run_arguments: dict[str, str]
    target_path: str
    read_s3_uris: tuple[str, ...]
    write_s3_uris: tuple[str, ...]
    secret_arn: str | None = None
    connections: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        """What Glue hands the script: its path, --JOB_NAME, then the job's arguments."""
        argv = [f"{self.script}.py", "--JOB_NAME", self.job_name]
        for name, value in sorted(self.run_arguments.items()):
            argv += [name, value]
        return argv


def terraform_env() -> dict[str, str]:
    rc = ROOT / "build" / "terraformrc"
    return {
        **os.environ,
        "TF_CLI_CONFIG_FILE": str(rc),
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
        "CHECKPOINT_DISABLE": "1",
    }


def planned_pipelines(
    environment: str, workdir: Path, variables: tuple[str, ...] = ()
) -> list[PlannedPipeline]:
    """The pipelines of ``environment`` (dev, prod, local) as its Terraform configuration defines them.

    ``variables`` are further ``-var=name=value`` arguments (the local root's ``jdbc_source``).
    """
    root, var_file = ENVIRONMENTS[environment]
    tree = Path(
        shutil.copytree(
            TERRAFORM,
            workdir / f"terraform-{environment}",
            ignore=shutil.ignore_patterns(".terraform", "*.tfstate", "*.tfstate.*", "*.tfplan"),
            dirs_exist_ok=True,
        )
    )
    directory = tree / "environments" / root
    (directory / "backend_override.tf").write_text('terraform {\n  backend "local" {}\n}\n')
    terraform = shutil.which("terraform") or "/usr/local/bin/terraform"
    with reattached() as provider:
        env = {**terraform_env(), **provider}
        subprocess.run(
            [terraform, "init", "-no-color"],
            cwd=directory,
            env=env,
            check=True,
            capture_output=True,
        )
        command = [terraform, "console", "-no-color", *variables]
        if var_file:
            command.append(f"-var-file={var_file}")
        completed = subprocess.run(
            command,
            cwd=directory,
            env=env,
            input=QUERY + "\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
        if completed.returncode != 0:
            raise AssertionError(f"terraform console of {environment} failed:\n{completed.stderr}")
        pipelines = json.loads(json.loads(completed.stdout.strip().splitlines()[-1]))
        return [
            PlannedPipeline(
                environment=environment,
                name=name,
                script=p["script"],
                job_name=p["job_name"],
                run_arguments=dict(p["run_arguments"]),
                target_path=p["target_path"],
                read_s3_uris=tuple(p["read_s3_uris"]),
                write_s3_uris=tuple(p["write_s3_uris"]),
                secret_arn=p["secret_arn"],
                connections=tuple(p["connections"]),
            )
            for name, p in sorted(pipelines.items())
        ]


# Credentials and endpoints for planning a real-AWS root offline: every service
# the plan reads (only STS, for the account id) is the given moto server.
_PROVIDER_OVERRIDE = """provider "aws" {{
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  endpoints {{
    sts = "{endpoint}"
  }}
}}
"""


def planned_environment(environment: str, workdir: Path, endpoint: str) -> dict:
    """``terraform show -json`` of a fresh plan of ``environment`` (dev, prod, local).

    ``endpoint`` is a moto server: the aws root's provider reads its account id
    there, and the local root points every service at it. Nothing is applied.
    """
    root, var_file = ENVIRONMENTS[environment]
    tree = Path(
        shutil.copytree(
            TERRAFORM,
            workdir / f"terraform-plan-{environment}",
            ignore=shutil.ignore_patterns(".terraform", "*.tfstate", "*.tfstate.*", "*.tfplan"),
        )
    )
    directory = tree / "environments" / root
    (directory / "backend_override.tf").write_text('terraform {\n  backend "local" {}\n}\n')
    command = ["plan", "-no-color", "-input=false", "-out=limits.tfplan"]
    if var_file:
        (directory / "provider_override.tf").write_text(
            _PROVIDER_OVERRIDE.format(endpoint=endpoint)
        )
        command.append(f"-var-file={var_file}")
    else:
        command += [f"-var=aws_endpoint_url={endpoint}"]
    terraform = shutil.which("terraform") or "/usr/local/bin/terraform"
    with reattached() as provider:
        env = {**terraform_env(), **provider}
        for args in (["init", "-no-color"], command):
            completed = subprocess.run(
                [terraform, *args],
                cwd=directory,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if completed.returncode != 0:
                raise AssertionError(
                    f"terraform {args[0]} of {environment} failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"
                )
        shown = subprocess.run(
            [terraform, "show", "-json", "limits.tfplan"],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return json.loads(shown.stdout)
