"""Helpers for Iceberg-target tests: unique tables, reading them, a pure-Python reference."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from glue_incremental.spark import iceberg_jars

_counter = itertools.count()

requires_iceberg = pytest.mark.skipif(
    not iceberg_jars(), reason="Iceberg jars missing: run scripts/setup.sh (build/jars)"
)


def unique_table(prefix: str = "t") -> str:
    """A fresh ``db.table`` name: tests share one warehouse and never one table."""
    return f"tests.{prefix}_{next(_counter)}_{uuid.uuid4().hex[:6]}"


def table_rows(spark: Any, name: str, columns: Sequence[str]) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(name).select(*columns).collect())


def latest_by_key(
    rows: Iterable[Mapping[str, Any]], key: str, order_by: str, columns: Sequence[str]
) -> list[tuple]:
    """The reference: per key, the version with the greatest ``order_by`` (ties identical rows)."""
    best: dict[Any, Mapping[str, Any]] = {}
    for row in rows:
        current = best.get(row[key])
        if current is None or row[order_by] > current[order_by]:
            best[row[key]] = row
    return sorted(tuple(row[name] for name in columns) for row in best.values())
