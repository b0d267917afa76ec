"""The shell commands the README's quick start and local guides show, in order.

They are the ```sh blocks between ``<!-- readme-commands:begin`` and
``<!-- readme-commands:end -->`` (the first-pipeline tutorial's: ``tutorial-commands``);
a line ending in ``\\`` continues on the next; a here-document (``cat > f <<'EOF'``) is one
command with its lines, as written.
Placeholders are written ``<NAME>`` and filled in by the test that runs them.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
CLI = ".venv/bin/python -m glue_incremental "


def readme_commands(text: str | None = None, marker: str = "readme-commands") -> list[str]:
    """Every command of the marked section, continuations joined, comments dropped."""
    text = README.read_text() if text is None else text
    begin, end = f"<!-- {marker}:begin", f"<!-- {marker}:end -->"
    assert begin in text and end in text, f"README lacks the marked {marker} section"
    section = text.split(begin, 1)[1].split(end, 1)[0]
    commands: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL):
        pending, lines = "", iter(block.splitlines())
        for line in lines:
            heredoc = re.search(r"<<'(\w+)'$", line.rstrip())
            if heredoc:  # its body verbatim (a Python file keeps its indentation)
                body = [line.strip()]
                for inner in lines:
                    body.append(inner.rstrip())
                    if inner.strip() == heredoc.group(1):
                        break
                commands.append("\n".join(body))
                continue
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1].rstrip() + " "
                continue
            command = (pending + line.strip()).strip()
            pending = ""
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def marked_section(page: Path, marker: str) -> str:
    """The text between ``<!-- marker:begin`` and ``<!-- marker:end -->`` of ``page``, each
    line without the begin marker's indentation (a section may sit indented in a list item:
    a here-document's lines keep the rest of theirs)."""
    text = page.read_text()
    begin, end = f"<!-- {marker}:begin", f"<!-- {marker}:end -->"
    assert begin in text and end in text, f"{page.name} lacks the marked {marker} section"
    before, section = text.split(begin, 1)
    indent = len(before) - len(before.rstrip(" ")) if before.endswith(" ") else 0
    section = section.split(end, 1)[0]
    return "\n".join(
        line[indent:] if line[:indent].isspace() else line.lstrip() for line in section.splitlines()
    )


def page_commands(page: Path, marker: str) -> list[str]:
    """The commands of a page's marked section, as ``readme_commands`` reads the README's."""
    section = marked_section(page, marker)
    return readme_commands(f"<!-- s:begin -->\n{section}\n<!-- s:end -->", marker="s")


def page_blocks(page: Path, marker: str, language: str) -> list[str]:
    """The ``language`` fenced blocks of a page's marked section."""
    section = marked_section(page, marker)
    return re.findall(rf"^```{language}\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)


def make_targets(command: str) -> list[str]:
    """The targets a ``make a && make b`` line names."""
    return [part.split()[1] for part in command.split("&&") if part.split()[:1] == ["make"]]


def placeholders(command: str) -> list[str]:
    return re.findall(r"<([A-Z_]+)>", command)


def run_local_guide(
    env: dict[str, str], run_id: Callable[[], str], root: Path = README.parent
) -> dict[str, str]:
    """Run every non-``make`` command of the guides, in order, on the stack ``env`` routes to.

    ``make`` lines start and stop stacks (the caller is one already; their targets
    are checked in tests/unit/test_readme_commands.py). ``<RUN_ID>`` is ``run_id()``
    at the time the command runs. Returns each command's stdout; a command that exits
    non-zero fails the test, showing its output.
    """
    outputs: dict[str, str] = {}
    for command in readme_commands():
        if make_targets(command):
            continue
        command = command.replace("<RUN_ID>", run_id())
        outputs[command] = run_documented(command, cwd=root, env=env, page="README")
    return outputs


def run_documented(command: str, *, cwd: Path, env: Mapping[str, str], page: str) -> str:
    """Run one command a page shows, as bash would; its stdout, or the test fails showing
    its output."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, (
        f"{page} command failed ({done.returncode}): {command}\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout
