"""The profiler commands docs/development.md shows parse as the profiler reads them."""

from __future__ import annotations

import shlex
from pathlib import Path

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


def test_history_keys_chooses_the_history_profile_with_its_rounds():
    args = build_parser().parse_args(["--history-keys", "1000", "--rounds", "2"])
    assert (args.history_keys, args.rounds) == (1000, 2)
    assert build_parser().parse_args([]).history_keys == 0
