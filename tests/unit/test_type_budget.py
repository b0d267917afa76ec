"""The type budget counts ``typing.cast`` calls and ``Any`` in code, not Spark's ``Column.cast``."""

from __future__ import annotations

from pathlib import Path

from scripts import type_budget

MODULE = '''"""Any in a docstring is not code."""
import typing
from typing import Any, cast

value: Any = cast(int, 1)  # Any in a comment is not code
other = typing.cast(str, "x")
column = frame.col("v").cast("int")
converted = value.cast("string")
'''


def test_type_budget_counts_typing_casts_and_not_column_casts(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(MODULE)

    lines, anys, casts = type_budget._counts(module)

    assert (lines, anys, casts) == (8, 1, 2)
