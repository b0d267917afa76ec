"""docs/bootstrap.md's checklist as blocks, and what the workflow reads, for its tests.

A ```` ```sh ```` block runs as one ``bash`` script (``set -euo pipefail``) from the checkout's
root; a ```` ```sh github ```` block can only run against GitHub and is checked instead.
Placeholders are ``<lower-case-words>`` (``<account>``), filled from a test's table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "bootstrap.md"
WORKFLOW = ROOT / ".github" / "workflows" / "platform.yml"
PLACEHOLDER = re.compile(r"<([a-z][a-z-]*)>")


@dataclass(frozen=True)
class Block:
    kind: str  # "sh": run by the test; "github": checked against the workflow
    text: str

    def script(self, values: dict[str, str]) -> str:
        """The block with every placeholder filled in; one left unfilled fails the test."""
        text = self.text
        for name, value in values.items():
            text = text.replace(name, value)
        left = sorted(set(PLACEHOLDER.findall(text)))
        assert not left, f"docs/bootstrap.md: no value for <{'>, <'.join(left)}> in:\n{text}"
        return "set -euo pipefail\n" + text


def blocks(text: str | None = None) -> list[Block]:
    """Every ``sh`` and ``sh github`` block of the page, in order."""
    text = PAGE.read_text() if text is None else text
    found = re.findall(r"^```sh( github)?\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [Block("github" if marker else "sh", body) for marker, body in found]


def hcl_blocks(text: str | None = None) -> list[str]:
    text = PAGE.read_text() if text is None else text
    return re.findall(r"^```hcl\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return loaded


def workflow_variables() -> set[str]:
    """Every ``vars.NAME`` the workflow reads."""
    return set(re.findall(r"\bvars\.([A-Z0-9_]+)", WORKFLOW.read_text()))


def workflow_environments() -> set[str]:
    """The GitHub environments the workflow's jobs run in."""
    return {job["environment"] for job in workflow()["jobs"].values() if "environment" in job}


def workflow_step(job: str, name: str, matrix: dict[str, str] | None = None) -> tuple[str, str]:
    """The ``run`` script of the step of ``job`` whose name starts with ``name``, with its
    ``${{ matrix.* }}`` filled in and ``pip install`` lines dropped (the checkout's virtualenv
    has the project), and the directory it runs in, relative to the checkout."""
    spec = workflow()["jobs"][job]
    (step,) = [s for s in spec["steps"] if s.get("name", "").startswith(name)]
    script = step["run"]
    for key, value in (matrix or {}).items():
        script = script.replace(f"${{{{ matrix.{key} }}}}", value)
    assert "${{" not in script, f"{job}: {name}: an expression the test cannot fill:\n{script}"
    kept = [line for line in script.splitlines() if "pip install" not in line]
    default = spec.get("defaults", {}).get("run", {}).get("working-directory", ".")
    return "set -euo pipefail\n" + "\n".join(kept), step.get("working-directory", default)
