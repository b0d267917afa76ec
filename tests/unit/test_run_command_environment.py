"""`run` against the local stack finds the stack's settings however the shell was routed."""

from __future__ import annotations

import argparse
import os

import pytest
from glue_incremental_tools import runner, stack

RECORD = {
    "environment": {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
        "GLUE_INCREMENTAL_S3A_JAR_DIR": "/checkout/build/jars",
    }
}


@pytest.fixture
def started(monkeypatch):
    """The environment each `run` started its job with."""
    seen: list[dict[str, str]] = []

    class Finished:
        succeeded = True
        warnings: list[str] = []

    def run_job(*_args, **_kwargs):
        seen.append(dict(os.environ))
        return Finished()

    monkeypatch.setattr(runner, "run_job", run_job)
    monkeypatch.setattr(runner, "describe", lambda _run, _log: None)
    monkeypatch.setattr(stack, "read_stack", lambda *_: RECORD)
    monkeypatch.delenv("GLUE_INCREMENTAL_S3A_JAR_DIR", raising=False)
    return seen


def _run() -> int:
    arguments = argparse.Namespace(
        job_name="gi-local-orders", arguments=None, quiet=True, log_dir=None
    )
    return runner._cmd_run(arguments)


def test_a_shell_routed_by_env_local_still_gets_the_stacks_jar_directory(started, monkeypatch):
    # `eval "$(python -m glue_incremental env --env local)"` exports the endpoints only.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    assert _run() == 0
    assert started[0]["GLUE_INCREMENTAL_S3A_JAR_DIR"] == "/checkout/build/jars"


def test_a_jar_directory_the_shell_set_is_kept(started, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("GLUE_INCREMENTAL_S3A_JAR_DIR", "/elsewhere/jars")
    assert _run() == 0
    assert started[0]["GLUE_INCREMENTAL_S3A_JAR_DIR"] == "/elsewhere/jars"


def test_an_unrouted_shell_is_routed_to_the_running_stack(started, monkeypatch):
    routed: list[bool] = []
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setattr(runner.aws, "endpoint_url", lambda *_: None)
    monkeypatch.setattr(stack, "use_local_stack", lambda *_: routed.append(True))
    assert _run() == 0
    assert routed == [True]


@pytest.mark.parametrize(
    ("endpoint", "data_dir"),
    [
        # `eval "$(... env --env local)"`: every `--env local` command reads `terraform output`
        # from the stack's data directory.
        pytest.param("http://127.0.0.1:1", "/stack/terraform", id="routed-to-the-stack"),
        pytest.param("http://127.0.0.1:2", None, id="routed-elsewhere-takes-nothing"),
    ],
)
def test_a_routed_shell_takes_the_stacks_settings_only_from_its_own_stack(
    monkeypatch, endpoint, data_dir
):
    record = {"environment": {**RECORD["environment"], "TF_DATA_DIR": "/stack/terraform"}}
    monkeypatch.setattr(stack, "read_stack", lambda *_: record)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.delenv("TF_DATA_DIR", raising=False)
    stack.use_local_stack()
    assert os.environ.get("TF_DATA_DIR") == data_dir
