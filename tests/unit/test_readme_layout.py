"""The README's layout section names every module of both packages, and nothing that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lib/glue_incremental", "lib/glue_incremental_tools")


def layout_block() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]


def named_paths() -> set[str]:
    """Each entry's first word, resolved against the package it is listed under."""
    paths: set[str] = set()
    package = ""
    for line in layout_block().splitlines():
        entry = line.strip().split(" ", 1)[0]
        if not entry:
            continue
        if not line.startswith(" "):
            package = entry.rstrip("/")
            paths.add(package)
        elif entry.endswith(".py"):
            paths.add(f"{package}/{entry}")
    return paths


def test_every_module_of_both_packages_is_in_the_layout():
    modules = {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not re.fullmatch(r"__(init|main)__\.py", path.name)
    }
    assert modules - named_paths() == set()


def test_everything_the_layout_names_exists():
    missing = sorted(path for path in named_paths() if not (ROOT / path).exists())
    assert missing == []
