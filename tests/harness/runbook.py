"""docs/runbook.md's steps as commands, and each as it runs on the local stack.

A section's steps are its ``sh`` blocks' lines and the commands in its inline code; an
``aws`` step runs as the local command the runbook's table of equivalents gives it
(``<!-- runbook-local:begin``), the project's commands with ``--env local`` and the
local job; an ``aws s3`` step runs as it is, on the stack (``env --env local``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tests.harness.readme import CLI, readme_commands

RUNBOOK = Path(__file__).resolve().parents[2] / "docs" / "runbook.md"
PROD_JOB = "gi-prod-orders"
COMMAND_START = (CLI, "aws ", "status --env", "watermarks --env")
# The table's local form of an ``aws`` step that runs as it is, on the stack.
ROUTED = f'eval "$({CLI}env --env local)"'


def runbook_sections() -> list[tuple[str, str]]:
    """(anchor, text) of each section; "before-you-start" for the text above the first."""
    parts = re.split(r'<a id="([a-z-]+)"></a>', RUNBOOK.read_text())
    return [("before-you-start", parts[0]), *zip(parts[1::2], parts[2::2], strict=True)]


def section_commands(text: str) -> list[str]:
    """The commands a section shows, in order: its ``sh`` blocks' lines, then the commands in
    its inline code (a command split over two lines is one)."""
    dedented = "\n".join(line.strip() for line in text.splitlines())
    if "<!-- runbook-local:begin" in dedented:  # the table of equivalents: not steps
        before, rest = dedented.split("<!-- runbook-local:begin", 1)
        dedented = before + rest.split("<!-- runbook-local:end -->", 1)[1]
    steps = dedented
    blocks = readme_commands(f"<!-- s:begin -->\n{steps}\n<!-- s:end -->", marker="s")
    without_blocks = re.sub(r"^```.*?^```", "", steps, flags=re.MULTILINE | re.DOTALL)
    spans = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", without_blocks)]
    inline = [
        span
        for span in spans
        if span.startswith(COMMAND_START) and "..." not in span and len(span.split()) >= 3
    ]
    return [command.split("  #", 1)[0].strip() for command in blocks + inline]


def local_equivalents() -> dict[str, str | None]:
    """The runbook's table: each ``aws`` command's start -> its local command (None: none)."""
    text = RUNBOOK.read_text()
    table = text.split("<!-- runbook-local:begin", 1)[1].split("<!-- runbook-local:end -->")[0]
    found: dict[str, str | None] = {}
    for row in re.findall(r"^\s*\| (`aws .*?) \| (.*?) \|$", table, flags=re.MULTILINE):
        local = [
            span for span in re.findall(r"`([^`]+)`", row[1]) if span.startswith((CLI, ROUTED))
        ]
        for start in re.findall(r"`(aws [^`]+)`", row[0]):
            found[start] = local[0] if local else None
    return found


def local_command(
    command: str, job: str, run_id: str, values: Mapping[str, str] | None = None
) -> str | None:
    """A runbook command as it runs on the local stack (None: the runbook says there is none).

    An ``aws`` step the table runs as it is (after the ``env --env local`` line) gets its
    ``<name>`` placeholders from ``values`` (``bucket``: the data bucket; ``file``: a file).
    """
    if command.startswith("aws "):
        equivalents = local_equivalents()
        starts = [start for start in equivalents if command.startswith(start)]
        assert starts, f"the runbook's local table has no row for: {command}"
        local = equivalents[starts[0]]
        if local is not None and local.startswith(ROUTED):
            for name, value in (values or {}).items():
                command = command.replace(f"<{name}>", value)
            return f"{local} && {command}"
        return None if local is None else local.replace("JOB", job)
    if not command.startswith(CLI):
        command = CLI + command
    for old, new in (("--env prod", "--env local"), ("jr_0123...", run_id), ("<run id>", run_id)):
        command = command.replace(old, new)
    return re.sub(rf"\b{PROD_JOB}\b(?!-)", job, command)
