"""The targets the central properties run on: Parquet on a local disk, Parquet on S3A
(LocalStack) and Iceberg (the session's Hadoop catalog). Each gives the load options that
point a job at it, its rows as a reader sees them and its columns' types; the check never
goes through the library's own reads."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.targets.iceberg import writer as iceberg_writer

from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.targets import LocalTarget, S3Target


class ParquetAt:
    """A Parquet target at ``uri``; rows as a listing reader sees them (pyarrow, not the
    library), columns and types as a schema-merging Spark reader sees them."""

    def __init__(self, spark: Any, uri: str, files: LocalTarget | S3Target) -> None:
        self.spark, self.options, self.files = spark, {"target_path": uri}, files

    def rows(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        return self.files.rows(columns)

    def dtypes(self) -> dict[str, str]:
        frame = self.spark.read.option("mergeSchema", "true").parquet(self.files.uri)
        return dict(frame.dtypes)


class IcebergAt:
    def __init__(self, spark: Any, table: str) -> None:
        self.spark = spark
        self.options = {"target_format": "iceberg", "target_table": table, "target_path": ""}
        self.name = iceberg_writer.IcebergTarget(table).name

    def rows(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        return [row.asDict() for row in self.spark.table(self.name).select(*columns).collect()]

    def dtypes(self) -> dict[str, str]:
        return dict(self.spark.table(self.name).dtypes)


def a_target(kind: str, spark: Any, tmp: Path, request: Any) -> ParquetAt | IcebergAt:
    """A fresh, empty target of ``kind`` (one of ``TARGETS``) for one history."""
    if kind == "iceberg":
        return IcebergAt(spark, unique_table("changes"))
    if kind == "parquet_s3a":
        uri = f"{request.getfixturevalue('s3_root')}/{uuid.uuid4().hex[:8]}/target"
        return ParquetAt(spark, uri, S3Target(uri))
    return ParquetAt(spark, (tmp / "target").as_uri(), LocalTarget(tmp / "target"))


# The kinds a central property is parametrized over (``a_target``'s ``kind``).
TARGETS = [
    "parquet_local",
    pytest.param("parquet_s3a", marks=pytest.mark.s3),
    pytest.param("iceberg", marks=requires_iceberg),
]
