"""The profiler commands docs/development.md shows parse as the profiler reads them."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.benchmarks.profile import build_parser

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ".venv/bin/python -m tests.benchmarks.profile"


def test_every_profile_command_of_the_development_guide_parses():
    lines = (ROOT / "docs" / "development.md").read_text().splitlines()
    commands = [line for line in lines if line.startswith(PROFILE)]
    assert len(commands) >= 2
    parser = build_parser()
    for command in commands:
        parser.parse_args(shlex.split(command.removeprefix(PROFILE)))


def test_history_rounds_and_keys_below_one_are_refused_in_one_line(capsys):
    for argv in (["--history-keys", "0"], ["--history-keys", "10", "--rounds", "0"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        assert "must be at least 1, not 0" in capsys.readouterr().err


def test_a_profile_of_history_and_of_a_reconcile_at_once_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--history-keys", "10", "--reconcile-rows", "10"])
    assert "not allowed with argument" in capsys.readouterr().err
