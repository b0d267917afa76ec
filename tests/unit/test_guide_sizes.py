"""The guides stay readable: the README short and free of change notes (they go to
CHANGELOG.md), and docs/demo.md numbering exactly the steps `make demo` prints."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from glue_incremental_tools import demo

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_is_at_most_400_lines_and_holds_no_change_notes():
    lines = (ROOT / "README.md").read_text().splitlines()

    assert len(lines) <= 400
    assert not [line for line in lines if re.match(r"^\s*[-*]?\s*\**before:?\**", line, re.I)]


def test_the_demo_page_numbers_each_step_the_demo_prints():
    source = inspect.getsource(demo)
    total = len(demo.STEP_KEYS) - 1  # each step's key, then "end"
    listed = re.findall(r"^(\d+)\. ", (ROOT / "docs" / "demo.md").read_text(), re.MULTILINE)

    assert source.count("steps.step(") == total
    assert listed == [str(number) for number in range(1, total + 1)]
