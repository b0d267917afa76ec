"""Iceberg tables in the local stack's Glue Data Catalog (moto) with metadata on LocalStack's S3.

Made with pyiceberg, as the jobs' Glue catalog would hold them: each ``append_run``
is one snapshot whose summary carries the run properties the library writes
(``targets.iceberg.writer.snapshot_properties``), so the operator tools find runs as on AWS.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from glue_incremental import aws
from glue_incremental.targets.iceberg.writer import snapshot_properties
from glue_incremental_tools import iceberg_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("value", pa.string())])


def create_glue_table(bucket: str, database: str, name: str) -> Any:
    """An empty Iceberg table ``database.name`` in the Glue catalog, its files under ``bucket``."""
    aws.client("s3").create_bucket(Bucket=bucket)
    catalog = iceberg_catalog.open_catalog()
    catalog.create_namespace(database)
    return catalog.create_table(
        (database, name), schema=SCHEMA, location=f"s3://{bucket}/{database}/{name}"
    )


def append_run(table: Any, run_id: str, state_name: str, rows: list[tuple[int, str]]) -> int:
    """Append ``rows`` as run ``run_id``'s one snapshot; returns its id."""
    ids, values = zip(*rows, strict=True)
    table.append(
        pa.table({"id": list(ids), "value": list(values)}, schema=SCHEMA),
        snapshot_properties=snapshot_properties(
            run_id=run_id,
            state_name=state_name,
            state_versions={"default": 1},
            watermarks={"default": {"last_id": max(ids)}},
            commits=True,
        ),
    )
    return int(table.current_snapshot().snapshot_id)


def rows_of(table: Any) -> list[tuple[int, str]]:
    """The table's current rows as the catalog serves them (a fresh load), sorted."""
    fresh = iceberg_catalog.open_catalog().load_table(table.name())
    arrow = fresh.scan().to_arrow()
    return sorted(zip(arrow["id"].to_pylist(), arrow["value"].to_pylist(), strict=True))
