"""One environment as the commands see it: its Terraform outputs, region and job names.

``open_environment("prod")`` reads ``terraform output`` of the environment (through
``deploy.terraform_outputs``), points boto3 at the environment's region (from
``<env>.tfvars``), and for ``local`` at the running local stack (``make up``).
``state_name`` turns what a person types (the job name ``gi-prod-orders``, the
pipeline ``orders``, or the state name) into the watermark state name, and an unknown
name into a one-line error with a did-you-mean.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glue_incremental import aws

from glue_incremental_tools import deploy, stack


class UnknownName(LookupError):
    """A job or pipeline name the environment does not have."""


@dataclass(frozen=True)
class Environment:
    """An environment's published outputs (``terraform output``), flattened."""

    name: str
    outputs: Mapping[str, Any]

    @property
    def pipelines(self) -> Mapping[str, Mapping[str, Any]]:
        return self.outputs.get("pipelines") or {}

    @property
    def watermarks_table(self) -> str:
        return str(self.outputs.get("watermarks_table_name") or "glue-watermarks")

    @property
    def job_names(self) -> list[str]:
        return sorted(str(p["job_name"]) for p in self.pipelines.values())

    def state_name(self, name: str) -> str:
        """The state name of job ``name`` (or of pipeline ``name``), as the jobs commit it."""
        for key, pipeline in self.pipelines.items():
            if name in (pipeline["job_name"], key, pipeline["state_name"]):
                return str(pipeline["state_name"])
        close = difflib.get_close_matches(name, [*self.job_names, *self.pipelines], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownName(
            f"environment {self.name!r} has no job {name!r}{hint}: its jobs are "
            + (", ".join(self.job_names) or "none")
        )


def open_environment(name: str, root: Path | None = None) -> Environment:
    """Route boto3 to ``name``'s endpoints and region, and read its outputs."""
    if name == stack.ENVIRONMENT:
        stack.use_local_stack(root)
    else:
        region = environment_region(name, root)
        if region and aws.region() != region:
            os.environ["AWS_REGION"] = region
            aws.reset_client_cache()
    return Environment(name, deploy.terraform_outputs(name, root=root))


_REGION = re.compile(r'^\s*region\s*=\s*"([a-z0-9-]+)"', re.MULTILINE)


def environment_region(name: str, root: Path | None = None) -> str | None:
    """``region`` of ``terraform/environments/aws/<name>.tfvars``, if it says one."""
    tfvars = (
        (root or deploy.project_root())
        / "terraform"
        / "environments"
        / deploy.SHARED_ROOT
        / f"{name}.tfvars"
    )
    if not tfvars.is_file():
        return None
    found = _REGION.search(tfvars.read_text())
    return found.group(1) if found else None
