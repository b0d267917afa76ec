"""Every command-line mistake is one line naming the wrong thing, with a did-you-mean where one exists.

Nothing here talks to AWS: the checks run before any connection (an unreachable
endpoint proves it), and the one test about an unreachable service points at a
closed port.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental.args import COMMON_OPTIONS, markdown_table, resolve_options
from glue_incremental.load import config as load_config
from glue_incremental_tools import cli
from glue_incremental_tools.environments import Environment, UnknownName

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing answers there


@pytest.fixture
def unreachable_aws(monkeypatch):
    """Every service routed to a closed port, dummy credentials: a connection would fail loudly."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", CLOSED)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    aws.reset_client_cache()
    yield
    aws.reset_client_cache()


def one_line_error(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == cli.EXIT_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_a_misspelt_option_names_it_and_the_option_meant(capsys):
    err = one_line_error(capsys, "watermarks", "show", "x", "--jsn")
    assert "watermarks show: unknown option '--jsn' (did you mean '--json'?)" in err


def test_a_misspelt_command_names_it_and_the_command_meant(capsys):
    err = one_line_error(capsys, "watermarks", "shwo", "x")
    assert "unknown command 'shwo' (did you mean 'show'?)" in err


def test_an_unknown_environment_lists_the_environments_and_no_flags_status_lacks(capsys):
    err = one_line_error(capsys, "status", "--env", "nosuchenv")
    assert "unknown environment 'nosuchenv'" in err and "dev, local, prod" in err
    assert "--bucket" not in err and "--jobs" not in err
    assert "did you mean 'prod'?" in one_line_error(
        capsys, "watermarks", "--env", "prd", "show", "x"
    )


def test_deploy_still_offers_its_own_flags_for_an_unknown_environment(capsys):
    err = one_line_error(capsys, "deploy", "--env", "nowhere")
    assert "unknown environment 'nowhere'" in err and "--bucket and --jobs" in err


def test_a_datetime_without_timezone_fails_before_connecting(capsys, unreachable_aws):
    err = one_line_error(
        capsys,
        "watermarks",
        "set",
        "orders",
        "--datetime",
        "cursor=2024-05-01T00:00:00",
        "--why",
        "x",
    )
    assert "cursor=2024-05-01T00:00:00" in err and "no timezone" in err
    assert "cannot reach" not in err


def test_an_unreachable_endpoint_names_the_service(capsys, monkeypatch, unreachable_aws):
    monkeypatch.setenv("AWS_ENDPOINT_URL_GLUE", CLOSED)
    err = one_line_error(capsys, "run", "nosuchjob")
    assert f"cannot reach the Glue API at {CLOSED}" in err and "AWS_ENDPOINT_URL_GLUE" in err


def test_an_unknown_job_of_an_environment_names_its_jobs():
    environment = Environment(
        "prod",
        {"pipelines": {"orders": {"job_name": "gi-prod-orders", "state_name": "gi-prod-orders"}}},
    )
    assert environment.state_name("orders") == "gi-prod-orders"
    assert environment.state_name("gi-prod-orders") == "gi-prod-orders"
    with pytest.raises(
        UnknownName, match=r"no job 'gi-prod-order' \(did you mean 'gi-prod-orders'\?\)"
    ):
        environment.state_name("gi-prod-order")


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_no_help_text_shows_restructuredtext_markup():
    parser = cli.build_parser()
    texts = [p.format_help() for p in _parsers(parser)]
    assert len(texts) > 10
    assert [text.splitlines()[0] for text in texts if "``" in text] == []


def test_a_job_script_answers_help_with_its_argument_table(capsys):
    with pytest.raises(SystemExit) as exit_:
        resolve_options(
            ["incremental_load.py", "--help"], load_config.REQUIRED_ARGS, load_config.OPTIONAL_ARGS
        )
    assert exit_.value.code == 0
    assert markdown_table([*load_config.LOAD_OPTIONS, *COMMON_OPTIONS]) in capsys.readouterr().out


def test_the_job_scripts_exit_zero_on_help():
    for script in ("incremental_load.py", "incremental_join.py"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "glue_scripts" / script), "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "| `--JOB_RUN_ID` |" in done.stdout and "unknown argument" not in done.stderr
