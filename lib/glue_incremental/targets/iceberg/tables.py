"""An Iceberg table's name and its creation: what the table and its side tables share.

``iceberg`` (the target's publish) and ``iceberg_deliveries``/``iceberg_tombstones``
(its side tables) all name tables and create them empty; this module holds that
below all three, so none of them imports another in a cycle.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from py4j.java_gateway import JavaObject, JVMView
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from glue_incremental.args import ArgumentError

DEFAULT_CATALOG = "glue_catalog"
# Set on the table at creation: a concurrent commit fails ours instead of being rebased onto it.
TABLE_PROPERTIES = {"commit.retry.num-retries": "0", "format-version": "2"}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class IcebergTarget:
    """``--target_table db.table`` in ``--iceberg_catalog`` (default ``glue_catalog``)."""

    table: str
    catalog: str = DEFAULT_CATALOG

    def __post_init__(self) -> None:
        parts = self.table.split(".")
        if len(parts) != 2 or not all(_IDENTIFIER.match(part) for part in parts):
            raise ArgumentError(
                "target_table", f"--target_table {self.table!r} must be database.table"
            )
        if not _IDENTIFIER.match(self.catalog):
            raise ArgumentError(
                "iceberg_catalog", f"--iceberg_catalog {self.catalog!r} is not an identifier"
            )

    @property
    def name(self) -> str:
        return f"{self.catalog}.{self.table}"

    @property
    def quoted(self) -> str:
        return ".".join(f"`{part}`" for part in self.name.split("."))


def table_exists(spark: SparkSession, target: IcebergTarget) -> bool:
    return bool(spark.catalog.tableExists(target.name))


def create_table(
    spark: SparkSession, target: IcebergTarget, schema: StructType, partition_by: Sequence[str]
) -> None:
    """Create the table empty (a metadata commit, no snapshot) if it does not exist."""
    columns = ", ".join(f"`{field.name}` {field.dataType.simpleString()}" for field in schema)
    partitioned = (
        f" PARTITIONED BY ({', '.join(f'`{name}`' for name in partition_by)})"
        if partition_by
        else ""
    )
    properties = ", ".join(f"'{key}'='{value}'" for key, value in TABLE_PROPERTIES.items())
    spark.sql(
        f"CREATE TABLE IF NOT EXISTS {target.quoted} ({columns}) USING iceberg"
        f"{partitioned} TBLPROPERTIES ({properties})"
    )


def jvm(spark: SparkSession) -> JVMView:
    """The session's view of its JVM (every live session has one)."""
    view = spark._jvm
    assert view is not None, "the SparkSession has no JVM: it was stopped"
    return view


def java_session(spark: SparkSession) -> JavaObject:
    """The JVM's ``SparkSession`` behind ``spark`` (Iceberg's Java API takes it)."""
    return spark._jsparkSession


def read_pinned(spark: SparkSession, target: IcebergTarget) -> DataFrame | None:
    """The table as of its current snapshot, pinned: a frame built on it reads the same
    rows after the run writes the table (a temporary view of a frame reading the table
    unpinned is refreshed by that write, and no longer matches the frame's cache). None
    when the table has no snapshot yet (no rows)."""
    table = jvm(spark).org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        java_session(spark), target.name
    )
    table.refresh()
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return None
    return spark.read.option("snapshot-id", str(snapshot.snapshotId())).table(target.name)
