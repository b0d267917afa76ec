"""The environment contract: every pipeline Terraform defines can actually run.

For every pipeline of every environment (dev, prod, local), the arguments its
Glue job receives from the job definition parse with that job's own parser,
and every S3 path in them is covered by the URIs its role is granted: sources
and sides readable, the target writable.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from glue_incremental import join
from glue_incremental.load import job as load_job
from glue_incremental.args import resolve_options
from glue_incremental.custom import JdbcReference
from glue_incremental.custom.jdbc_arguments import connection_arguments
from glue_incremental.sources.jdbc import redact_url

from tests.harness.environments import ENVIRONMENTS, PlannedPipeline, planned_pipelines

# One worker runs the module: its fixture plans every environment once.
pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("environment_contract")]

PARSERS: dict[str, tuple[Any, Any, Callable[[Mapping[str, str | None]], Any]]] = {
    "incremental_load": (load_job.REQUIRED_ARGS, load_job.OPTIONAL_ARGS, load_job.LoadConfig.from_args),
    "incremental_join": (join.REQUIRED_ARGS, join.OPTIONAL_ARGS, join.JoinJobConfig.from_args),
}
READ_ARGUMENTS = ("--source", "--left_path", "--right_path")
WRITE_ARGUMENTS = ("--target_path",)


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory) -> dict[str, list[PlannedPipeline]]:
    workdir = tmp_path_factory.mktemp("contract")
    return {env: planned_pipelines(env, workdir) for env in ENVIRONMENTS}


def _covered(path: str, uris: tuple[str, ...]) -> bool:
    folder = path.rstrip("/") + "/"
    return any(folder.startswith(uri.rstrip("/") + "/") for uri in uris)


SCRIPTS = Path(__file__).resolve().parents[2] / "glue_scripts"


def _custom_parser(script: str) -> Callable[[list[str]], Any]:
    """A custom pipeline's script parses its arguments itself: its ``parse_arguments(argv)``."""
    spec = importlib.util.spec_from_file_location(f"contract_{script}", SCRIPTS / f"{script}.py")
    assert spec is not None and spec.loader is not None, f"glue_scripts/{script}.py is missing"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.parse_arguments


def _parse(pipeline: PlannedPipeline) -> Any:
    if pipeline.script not in PARSERS:
        return _custom_parser(pipeline.script)(pipeline.argv())
    required, optional, from_args = PARSERS[pipeline.script]
    return from_args(resolve_options(pipeline.argv(), required, optional))


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_every_pipeline_argument_parses_with_its_jobs_parser(pipelines, env):
    assert len(pipelines[env]) >= 3, f"{env} defines fewer than three pipelines"
    failures = []
    for pipeline in pipelines[env]:
        try:
            _parse(pipeline)
        except ValueError as error:
            failures.append(f"{env}.{pipeline.name} ({pipeline.script}): {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_the_role_grants_cover_every_path_in_the_arguments(pipelines, env):
    gaps = []
    for pipeline in pipelines[env]:
        arguments = pipeline.run_arguments
        # A custom script's sources arrive as --<source>_path.
        sources = [n for n in arguments if n.endswith("_path") and n not in WRITE_ARGUMENTS]
        for name in sorted({*READ_ARGUMENTS, *sources}):
            path = arguments.get(name, "")
            readable = pipeline.read_s3_uris + pipeline.write_s3_uris
            if path.startswith("s3://") and not _covered(path, readable):
                gaps.append(f"{env}.{pipeline.name}: {name} {path} is not readable")
        for name in WRITE_ARGUMENTS:
            # An Iceberg target has no --target_path: its warehouse is the pipeline's path.
            iceberg = arguments.get("--target_format") == "iceberg"
            path = pipeline.target_path if iceberg else arguments.get(name, "")
            if not _covered(path, pipeline.write_s3_uris):
                gaps.append(f"{env}.{pipeline.name}: {name} {path!r} is not writable")
    assert not gaps, "\n".join(gaps)


def test_a_join_reads_the_committed_state_of_the_loads_it_joins(pipelines):
    for env, planned in pipelines.items():
        jobs = {p.name: p for p in planned}
        joins = [p for p in planned if p.script == "incremental_join"]
        assert joins, f"{env} has no join"
        for pipeline in joins:
            config = _parse(pipeline)
            targets = {p.job_name: p.run_arguments.get("--target_path") for p in jobs.values()}
            for side, job in config.upstream_jobs.items():
                assert targets[job] == config.path(side), (env, pipeline.name, side)


def _jdbc_urls(pipeline: PlannedPipeline) -> dict[str, str]:
    """The JDBC URLs a pipeline reads: a load's ``--source``, a custom script's ``--<name>_url``."""
    return {
        name: value
        for name, value in pipeline.run_arguments.items()
        if (name == "--source" or name.endswith("_url")) and value.startswith("jdbc:")
    }


def _credentials(parsed: Any) -> tuple[str | None, str | None]:
    """(secret, connection) from a generic job's config or a custom script's parsed values."""
    if isinstance(parsed, Mapping):
        return parsed.get("source_secret_id"), parsed.get("connection_name")
    return parsed.source_secret_id, parsed.connection_name


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_a_jdbc_pipeline_reads_its_credentials_from_exactly_its_declared_secret(pipelines, env):
    jdbc = [p for p in pipelines[env] if _jdbc_urls(p)]
    problems = []
    for pipeline in jdbc:
        secret, connection = _credentials(_parse(pipeline))
        if pipeline.secret_arn is not None:
            if secret != pipeline.secret_arn:
                problems.append(f"{pipeline.name}: reads {secret!r}")
        elif connection not in pipeline.connections:
            problems.append(f"{pipeline.name}: no secret, connection {connection!r}")
        for name, url in _jdbc_urls(pipeline).items():
            if redact_url(url) != url:
                problems.append(f"{pipeline.name}: a password in {name}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_every_jdbc_source_of_a_custom_pipeline_declares_with_its_scripts_arguments(pipelines, env):
    problems = []
    for pipeline in pipelines[env]:
        if pipeline.script in PARSERS:
            continue
        parsed = _parse(pipeline)
        for name in _jdbc_urls(pipeline):
            source = name.removeprefix("--").removesuffix("_url")
            try:
                JdbcReference(**connection_arguments(parsed, source))
            except (KeyError, ValueError) as error:
                problems.append(f"{env}.{pipeline.name}.{source}: {error!r}")
    assert not problems, "\n".join(problems)


def test_dev_declares_a_jdbc_pipeline_with_a_secret_and_a_connection(pipelines):
    jdbc = [
        p
        for p in pipelines["dev"]
        if p.run_arguments.get("--source", "").startswith("jdbc:")
        and p.secret_arn
        and p.connections
    ]
    assert jdbc, "dev declares no JDBC pipeline with secret_arn and connections"


def test_dev_declares_a_custom_pipeline_reading_a_jdbc_source(pipelines):
    custom = [p for p in pipelines["dev"] if p.script not in PARSERS and _jdbc_urls(p)]
    assert custom, "dev declares no custom pipeline with a JDBC source"
