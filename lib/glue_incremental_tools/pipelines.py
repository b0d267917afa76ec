"""One pipeline of an environment, as the inspection commands name it.

``open_pipeline("local", "orders")`` routes boto3 to the environment (``--env``) and
returns the pipeline's published outputs (``pipelines`` of ``terraform output``): its
job, state name, kind, target and run arguments. A pipeline is named by its key
(``orders``), its job name (``gi-prod-orders``) or its state name; anything else is a
one-line error listing the environment's jobs (``Environment.state_name``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glue_incremental_tools.errors import CommandError


@dataclass(frozen=True)
class Pipeline:
    """A pipeline's outputs, with the environment's own outputs beside them."""

    env: str
    name: str
    outputs: Mapping[str, Any]
    environment_outputs: Mapping[str, Any]

    @property
    def job_name(self) -> str:
        return str(self.outputs["job_name"])

    @property
    def state_name(self) -> str:
        return str(self.outputs.get("state_name") or self.job_name)

    @property
    def run_arguments(self) -> Mapping[str, str]:
        return self.outputs.get("run_arguments") or self.outputs.get("arguments") or {}


def open_pipeline(env: str, name: str) -> Pipeline:
    """The pipeline ``name`` of ``env`` (boto3 routed there); CommandError when unknown."""
    from glue_incremental_tools import deploy, environments

    try:
        environment = environments.open_environment(env)
        for key, pipeline in environment.pipelines.items():
            if name in (key, pipeline.get("job_name"), pipeline.get("state_name")):
                return Pipeline(env, key, pipeline, environment.outputs)
        environment.state_name(name)  # raises UnknownName with the did-you-mean
    except (deploy.DeployError, environments.UnknownName) as error:
        raise CommandError(str(error)) from None
    raise CommandError(f"environment {env!r} has no pipeline {name!r}")  # pragma: no cover


def open_outputs(env: str) -> Mapping[str, Any]:
    """The environment's outputs (boto3 routed there); CommandError when it cannot be read."""
    from glue_incremental_tools import deploy, environments

    try:
        return environments.open_environment(env).outputs
    except deploy.DeployError as error:
        raise CommandError(str(error)) from None
