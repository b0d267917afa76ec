"""Iceberg targets in an environment's Glue Data Catalog, read and rolled back without a JVM.

The operator commands (``watermarks rewind``, ``reset``, ``status``) reach a table where
the jobs write it: the Glue Data Catalog of the account and region ``--env`` routed
boto3 to, the table's metadata on S3. pyiceberg's ``GlueCatalog`` does it in Python,
with the project's own Glue client (so ``--env local`` reaches moto) and pyiceberg's
S3 FileIO pointed at the same S3 endpoint. Rolling back is one metadata commit that
makes an existing snapshot current (``set_current_snapshot``): no data file is
written or removed, and Glue's optimistic ``VersionId`` check refuses it if a run
committed in between. pyiceberg is a tools dependency (extra ``tools``); the library
Glue runs never imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

import boto3
from glue_incremental import aws
from glue_incremental.targets.iceberg.summary import Snapshot

# The Spark catalog name jobs use for the Glue Data Catalog (``--iceberg_catalog``).
JOB_CATALOG = "glue_catalog"


class TableNotFound(LookupError):
    """The Iceberg table is not in the environment's catalog."""


class RollbackRefused(RuntimeError):
    """The catalog refused the rollback: the table changed since it was read."""


@dataclass(frozen=True)
class CatalogTable:
    """``database.table`` as the jobs name it (``glue_catalog.database.table`` also accepted)."""

    database: str
    name: str

    @classmethod
    def parse(cls, text: str) -> CatalogTable:
        parts = str(text).split(".")
        if len(parts) == 3:
            parts = parts[1:]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"Iceberg table {text!r} is not database.table")
        return cls(parts[0], parts[1])

    def __str__(self) -> str:
        return f"{self.database}.{self.name}"


def open_catalog() -> Any:
    """pyiceberg's Glue catalog on boto3's current routing (region, endpoints, credentials)."""
    from pyiceberg.catalog.glue import GlueCatalog

    properties = {"s3.region": aws.region()}
    # The S3 FileIO (pyarrow, AWS SDK for C++) resolves credentials on its own; handing it
    # what boto3 resolved keeps the catalog and the files on one identity (profile, role).
    credentials = boto3.session.Session().get_credentials()
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        properties |= {
            "s3.access-key-id": frozen.access_key,
            "s3.secret-access-key": frozen.secret_key,
        }
        if frozen.token:
            properties["s3.session-token"] = frozen.token
    endpoint = aws.endpoint_url("s3")
    if endpoint:
        # A local S3 (LocalStack) answers path-style on its one endpoint.
        properties |= {"s3.endpoint": endpoint, "s3.force-virtual-addressing": "false"}
    return GlueCatalog(JOB_CATALOG, client=aws.client("glue"), **properties)


def load_table(table: CatalogTable, catalog: Any | None = None) -> Any:
    """The pyiceberg table; TableNotFound naming it (and the catalog's region) if missing."""
    from pyiceberg.exceptions import NoSuchIcebergTableError, NoSuchTableError

    catalog = catalog if catalog is not None else open_catalog()
    try:
        return catalog.load_table((table.database, table.name))
    except (NoSuchTableError, NoSuchIcebergTableError) as error:
        where = aws.endpoint_url("glue") or f"region {aws.region()}"
        detail = " ".join(str(error).split())
        raise TableNotFound(
            f"Iceberg table {table} is not in the Glue Data Catalog ({where}): {detail}"
        ) from None


def snapshots(iceberg_table: Any) -> list[Snapshot]:
    """Every snapshot of the table, oldest first, with the run each one names (None if foreign)."""
    return [
        Snapshot.from_summary(
            snapshot.snapshot_id,
            snapshot.parent_snapshot_id,
            _summary(snapshot),
        )
        for snapshot in iceberg_table.snapshots()  # the metadata's order: commit order
    ]


def current_snapshot(iceberg_table: Any) -> Snapshot | None:
    """The table's current snapshot (None for a table created empty)."""
    current = iceberg_table.current_snapshot()
    if current is None:
        return None
    return Snapshot.from_summary(current.snapshot_id, current.parent_snapshot_id, _summary(current))


def snapshot_of_run(iceberg_table: Any, run_id: str) -> Snapshot | None:
    """The latest snapshot run ``run_id`` committed, or None."""
    matches = [snapshot for snapshot in snapshots(iceberg_table) if snapshot.run_id == run_id]
    return matches[-1] if matches else None


def rollback_to(iceberg_table: Any, snapshot: Snapshot) -> None:
    """Make ``snapshot`` the table's current one: a metadata-only commit, data files untouched.

    Refused (RollbackRefused, nothing changed) when the table moved since it was loaded.
    """
    from pyiceberg.exceptions import CommitFailedException

    try:
        iceberg_table.manage_snapshots().set_current_snapshot(
            snapshot_id=snapshot.snapshot_id
        ).commit()
    except CommitFailedException as error:
        raise RollbackRefused(
            f"Iceberg table {'.'.join(iceberg_table.name())} changed while rolling back to "
            f"snapshot {snapshot.snapshot_id} (a run committed?); the table is unchanged: "
            f"{' '.join(str(error).split())}"
        ) from None


def _summary(snapshot: Any) -> dict[str, str]:
    summary = snapshot.summary
    if summary is None:
        return {}
    return {str(key): str(value) for key, value in summary.additional_properties.items()}


# -- where a job's target lives -------------------------------------------------------------------


class TargetTable(Protocol):
    """An Iceberg target as the operator commands use it, wherever its catalog is."""

    name: str

    def current(self) -> Snapshot | None: ...

    def snapshot_of_run(self, run_id: str) -> Snapshot | None: ...

    def rollback_to(self, snapshot: Snapshot) -> None: ...


@dataclass
class GlueTable:
    """A table of the environment's Glue Data Catalog, through pyiceberg (no JVM)."""

    name: str
    table: Any

    def current(self) -> Snapshot | None:
        return current_snapshot(self.table)

    def snapshot_of_run(self, run_id: str) -> Snapshot | None:
        return snapshot_of_run(self.table, run_id)

    def rollback_to(self, snapshot: Snapshot) -> None:
        rollback_to(self.table, snapshot)


@dataclass
class LocalWarehouseTable:
    """A table a local run wrote to the Hadoop warehouse (``spark.iceberg_conf``), through Spark.

    Local Spark has no Glue catalog client (no iceberg-aws jars), so local runs keep
    their Iceberg targets in a Hadoop catalog under ``build/``; only those need a JVM.
    """

    name: str
    database_table: CatalogTable

    def _spark_target(self) -> tuple[Any, Any]:
        from glue_incremental.spark import local_spark_session
        from glue_incremental.targets.iceberg import writer as iceberg_writer

        spark = local_spark_session(app_name="glue-incremental-operator")
        return spark, iceberg_writer.IcebergTarget(str(self.database_table), JOB_CATALOG)

    def current(self) -> Snapshot | None:
        from glue_incremental.targets.iceberg import writer as iceberg_writer

        spark, target = self._spark_target()
        return iceberg_writer.current_snapshot(spark, target)

    def snapshot_of_run(self, run_id: str) -> Snapshot | None:
        from glue_incremental.targets.iceberg import writer as iceberg_writer

        spark, target = self._spark_target()
        return iceberg_writer.snapshot_of_run(spark, target, run_id)

    def rollback_to(self, snapshot: Snapshot) -> None:
        spark, target = self._spark_target()
        spark.sql(
            f"CALL {target.catalog}.system.set_current_snapshot("
            f"table => '{target.table}', snapshot_id => {snapshot.snapshot_id})"
        )


def open_target(name: str, *, local: bool) -> TargetTable:
    """The target ``name`` (as a job's state records it) in the Glue Data Catalog.

    ``local`` (no ``--env``, or ``--env local``): a table the Glue catalog does not
    hold but the local Hadoop warehouse does is served from there. Otherwise
    TableNotFound, one line naming the table.
    """
    table = CatalogTable.parse(name)
    try:
        return GlueTable(name, load_table(table))
    except TableNotFound:
        if local and _in_local_warehouse(table):
            return LocalWarehouseTable(name, table)
        raise


def _in_local_warehouse(table: CatalogTable) -> bool:
    """Whether the local Hadoop warehouse (a file: location) has the table's metadata."""
    try:
        from glue_incremental.spark import ICEBERG_CATALOG, iceberg_conf

        conf = iceberg_conf()
    except (ImportError, FileNotFoundError):
        return False  # no Spark or no local setup (a tools-only install): only Glue counts
    location = urlparse(conf[f"spark.sql.catalog.{ICEBERG_CATALOG}.warehouse"])
    if location.scheme not in ("", "file"):
        return True  # a warehouse on S3A: only Spark can tell
    return (Path(location.path) / table.database / table.name / "metadata").is_dir()
