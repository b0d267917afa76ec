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


def s3_warehouse_catalog(spark: Any, s3_root: str, name: str = "s3_warehouse") -> str:
    """A Hadoop catalog ``name`` whose warehouse is ``s3_root/warehouse`` (LocalStack's S3,
    read through S3A, as on Glue); its name, for ``LoadConfig(iceberg_catalog=...)``."""
    prefix = f"spark.sql.catalog.{name}"
    spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"{prefix}.type", "hadoop")
    spark.conf.set(f"{prefix}.warehouse", f"{s3_root}/warehouse")
    spark.conf.set(f"{prefix}.cache-enabled", "false")
    return name


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
