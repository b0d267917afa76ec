"""The README's quick start, local guide and first-pipeline tutorial name real make targets
and valid commands.

tests/e2e/test_platform_end_to_end.py runs the quick start's and local guide's commands on
the local stack; this checks, without any AWS, that each command of all three parses.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from glue_incremental_tools import cli

from tests.harness.readme import CLI, make_targets, placeholders, readme_commands

ROOT = Path(__file__).resolve().parents[2]


def documented_targets() -> set[str]:
    """Makefile targets with a ``## `` line: the ones ``make help`` lists."""
    return set(re.findall(r"^([a-z-]+):.*## ", (ROOT / "Makefile").read_text(), re.MULTILINE))


def test_the_guides_start_with_setup_and_demo_and_bring_the_stack_up_and_down():
    commands = readme_commands()
    assert commands[0] == "make setup && make demo"
    assert "make up" in commands and commands[-1] == "make down"
    assert commands.index("make up") < min(
        i for i, command in enumerate(commands) if command.startswith(CLI)
    )


def test_every_make_target_the_guides_use_is_listed_by_make_help():
    commands = readme_commands() + readme_commands(marker="tutorial-commands")
    used = {target for command in commands for target in make_targets(command)}
    assert used and used - documented_targets() == set()


@pytest.mark.parametrize(("marker", "least"), [("readme-commands", 5), ("tutorial-commands", 4)])
def test_every_cli_command_of_the_guides_parses(marker, least):
    commands = [command for command in readme_commands(marker=marker) if command.startswith(CLI)]
    assert len(commands) >= least
    parser = cli.build_parser()
    for command in commands:
        argv = shlex.split(
            command.removeprefix(CLI).replace("<", "").replace(">", ""), comments=True
        )
        args, extras = parser.parse_known_args(argv)
        assert (extras, args.handler is not None) == ([], True), command


def test_the_only_placeholder_is_the_run_id_the_history_gives():
    assert {name for command in readme_commands() for name in placeholders(command)} == {"RUN_ID"}


def test_continuation_lines_join_and_comments_are_dropped():
    text = (
        "<!-- readme-commands:begin -->\n```sh\n# a comment\nmake up\n"
        "a \\\n  b\n```\n<!-- readme-commands:end -->"
    )
    assert readme_commands(text) == ["make up", "a b"]


def test_a_here_document_is_one_command_with_its_lines_as_written():
    text = (
        "<!-- readme-commands:begin -->\n```sh\ncat > f.py <<'EOF'\ndef f():\n    return 1\n"
        "EOF\nmake up\n```\n<!-- readme-commands:end -->"
    )
    assert readme_commands(text) == ["cat > f.py <<'EOF'\ndef f():\n    return 1\nEOF", "make up"]
