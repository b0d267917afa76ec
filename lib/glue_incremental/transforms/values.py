"""The transform contract by value: every output row's protected columns are an input row's.

A transform may filter rows, add or drop other columns and change other values; the key,
watermark, partition, delete-marker and delivery columns of each row it returns must equal
(null-safe) those of a row it was given. Otherwise the cursor could pass source rows never
loaded, or a reconcile find every stored key gone. Checked with one left-anti join before
anything is written; the input is cached for it, so both sides see the same read.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from glue_incremental.errors import INTERNAL_PREFIX


def stray_row(before: DataFrame, after: DataFrame, protected: Sequence[str]) -> dict | None:
    """The protected values of one ``after`` row that no ``before`` row has, or ``None``."""
    names = [name for name in protected if name in before.columns and name in after.columns]
    if not names:
        return None
    given = [f"{INTERNAL_PREFIX}given_{index}" for index in range(len(names))]
    returned = [f"{INTERNAL_PREFIX}returned_{index}" for index in range(len(names))]
    inputs = before.select(
        *(F.col(f"`{name}`").alias(alias) for name, alias in zip(names, given, strict=True))
    ).distinct()
    outputs = after.select(
        *(F.col(f"`{name}`").alias(alias) for name, alias in zip(names, returned, strict=True))
    )
    same = reduce(
        lambda left, right: left & right,
        (F.col(out).eqNullSafe(F.col(inp)) for out, inp in zip(returned, given, strict=True)),
    )
    found = outputs.join(inputs, same, "left_anti").limit(1).collect()
    if not found:
        return None
    return {name: found[0][alias] for name, alias in zip(names, returned, strict=True)}
