"""The layouts name what exists: README.md one line per package and folder, docs/layout.md
every module of both packages; neither names anything that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lib/glue_incremental", "lib/glue_incremental_tools")


def layout_block(page: Path, heading: str) -> str:
    """The first ```text block after ``heading``."""
    return page.read_text().split(heading, 1)[1].split("```text", 1)[1].split("```", 1)[0]


def named_paths(block: str) -> set[str]:
    """Each entry's first word, an indented one resolved against the entry above it."""
    paths: set[str] = set()
    parent = ""
    for line in block.splitlines():
        entry = line.strip().split(" ", 1)[0]
        if not entry:
            continue
        if not line.startswith(" "):
            parent = entry.rstrip("/")
            paths.add(parent)
        elif entry.endswith((".py", "/")):
            paths.add(f"{parent}/{entry.rstrip('/')}")
    return paths


def full_layout() -> set[str]:
    return named_paths(layout_block(ROOT / "docs" / "layout.md", "# Layout"))


def readme_layout() -> set[str]:
    return named_paths(layout_block(ROOT / "README.md", "## Layout"))


def test_every_module_of_both_packages_is_in_the_full_layout():
    modules = {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not re.fullmatch(r"__(init|main)__\.py", path.name)
    }
    assert modules - full_layout() == set()


def test_every_package_of_both_packages_is_in_the_readme_layout():
    packages = {
        path.parent.relative_to(ROOT).as_posix()
        for root in PACKAGES
        for path in (ROOT / root).rglob("__init__.py")
    }
    assert packages - readme_layout() == set()


def test_the_readme_layout_names_no_module():
    assert [path for path in readme_layout() if path.endswith(".py")] == []


def test_everything_either_layout_names_exists():
    missing = sorted(path for path in full_layout() | readme_layout() if not (ROOT / path).exists())
    assert missing == []


def test_an_indented_folder_or_module_resolves_against_the_entry_above_it():
    block = "lib/pkg/   the package\n  sub/     a subpackage\n  mod.py   a module\ndocs/  pages\n"
    assert named_paths(block) == {"lib/pkg", "lib/pkg/sub", "lib/pkg/mod.py", "docs"}
