"""The type budget counts ``typing.cast`` calls and ``Any`` names in code, nothing else."""

from __future__ import annotations

from scripts import type_budget

MODULE = '''
from typing import Any, cast

from pyspark.sql import functions as F


def widen(name: str, value: Any) -> int:
    """Any in a docstring is not code."""
    column = F.col(name).cast("long")  # Spark's Column.cast: not a typing cast
    return cast(int, value)
'''


def test_a_typing_cast_counts_and_spark_column_cast_does_not(tmp_path):
    path = tmp_path / "module.py"
    path.write_text(MODULE)
    lines, anys, casts = type_budget._counts(path)
    assert (anys, casts) == (1, 1)
    assert lines == len(MODULE.splitlines())
