"""Iceberg targets in an environment's Glue Data Catalog, read and rolled back without a JVM.

The operator commands (``watermarks rewind``, ``reset``, ``status``, ``target``) reach a
table where the jobs write it: the Glue Data Catalog of the account and region ``--env``
routed boto3 to, the table's metadata on S3 (a local run's table: the Hadoop warehouse its
job's ``--conf`` names, ``open_target``). pyiceberg's ``GlueCatalog`` does it in Python,
with the project's own Glue client (so ``--env local`` reaches moto) and pyiceberg's
S3 FileIO pointed at the same S3 endpoint. Rolling back is one metadata commit that
makes an existing snapshot current (``set_current_snapshot``): no data file is
written or removed, and Glue's optimistic ``VersionId`` check refuses it if a run
committed in between. pyiceberg is a tools dependency (extra ``tools``); the library
Glue runs never imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

import boto3
from botocore.exceptions import BotoCoreError, ClientError
from glue_incremental import aws
from glue_incremental.targets.iceberg.summary import Snapshot

# The Spark catalog name jobs use for the Glue Data Catalog (``--iceberg_catalog``).
JOB_CATALOG = "glue_catalog"
# The job's --conf setting naming that catalog's warehouse (terraform/modules/glue_job).
WAREHOUSE_CONF = f"spark.sql.catalog.{JOB_CATALOG}.warehouse"


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

    return GlueCatalog(JOB_CATALOG, client=aws.client("glue"), **file_io_properties())


def file_io_properties() -> dict[str, str]:
    """pyiceberg's S3 FileIO settings for boto3's current routing (region, endpoint, identity)."""
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
    return properties


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

    @property
    def table(self) -> Any: ...  # the pyiceberg table, to read

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
    """A table a local run wrote to a Hadoop-catalog warehouse (``local_metadata``).

    Local Spark has no Glue catalog client (no iceberg-aws jars), so local runs keep
    their Iceberg targets in a Hadoop catalog on the warehouse their job's ``--conf``
    names. Its metadata is read through pyiceberg; only a rollback (a Hadoop catalog
    commit) needs a JVM.
    """

    name: str
    database_table: CatalogTable
    warehouse: str | None  # None: the local default (``spark.iceberg_conf``)

    @property
    def table(self) -> Any:
        """The table's current metadata, read afresh (a run may have committed since)."""
        from pyiceberg.table import StaticTable

        metadata = local_metadata(self.database_table, self.warehouse)
        if metadata is None:
            raise TableNotFound(f"Iceberg table {self.name} left the local warehouse")
        return StaticTable.from_metadata(metadata, properties=file_io_properties())

    def current(self) -> Snapshot | None:
        return current_snapshot(self.table)

    def snapshot_of_run(self, run_id: str) -> Snapshot | None:
        return snapshot_of_run(self.table, run_id)

    def rollback_to(self, snapshot: Snapshot) -> None:
        from glue_incremental.spark import iceberg_conf, local_spark_session
        from glue_incremental.targets.iceberg.writer import IcebergTarget

        spark = local_spark_session(
            app_name="glue-incremental-operator", extra_conf=iceberg_conf(self.warehouse)
        )
        target = IcebergTarget(str(self.database_table), JOB_CATALOG)
        spark.sql(
            f"CALL {target.catalog}.system.set_current_snapshot("
            f"table => '{target.table}', snapshot_id => {snapshot.snapshot_id})"
        )


def open_target(name: str, *, local: bool, job: str | None = None) -> TargetTable:
    """The target ``name`` (as a job's state records it) in the Glue Data Catalog.

    ``local`` (no ``--env``, or ``--env local``): a table the Glue catalog does not
    hold is looked for where a local run of ``job`` wrote it, the warehouse the job's
    definition names (``deployed_warehouse``: the one the local runner hands it), so
    no variable needs setting. Otherwise TableNotFound, one line naming the table.
    """
    table = CatalogTable.parse(name)
    try:
        return GlueTable(name, load_table(table))
    except TableNotFound:
        if local:
            warehouse = deployed_warehouse(job) if job else None
            if local_metadata(table, warehouse) is not None:
                return LocalWarehouseTable(name, table, warehouse)
        raise


# -- a local run's warehouse ----------------------------------------------------------------------


def conf_warehouse(arguments: Mapping[str, str]) -> str | None:
    """The warehouse a job's ``--conf`` names for its Iceberg catalog, or None.

    Glue takes one ``--conf`` argument: further settings ride in its value, each after
    `` --conf `` (``terraform/modules/glue_job``).
    """
    for setting in arguments.get("--conf", "").split(" --conf "):
        name, _, value = setting.strip().partition("=")
        if name == WAREHOUSE_CONF and value:
            return value
    return None


def job_warehouse(job: Mapping[str, Any]) -> str | None:
    """The warehouse a job definition (GetJob's ``Job``) gives every run: its default
    ``--conf``, or a non-overridable one, which a run cannot replace."""
    arguments = {
        **(job.get("DefaultArguments") or {}),
        **(job.get("NonOverridableArguments") or {}),
    }
    return conf_warehouse(arguments)


def deployed_warehouse(job_name: str) -> str | None:
    """``job_warehouse`` of deployed job ``job_name`` (GetJob); None when Glue has no such job."""
    try:
        return job_warehouse(aws.client("glue").get_job(JobName=job_name)["Job"])
    except (ClientError, BotoCoreError):
        return None


def local_metadata(table: CatalogTable, warehouse: str | None = None) -> str | None:
    """The URI of ``table``'s current metadata file in a Hadoop-catalog warehouse, or None.

    ``warehouse`` (file: or s3://), else the local default (``spark.iceberg_conf``).
    A Hadoop catalog keeps ``<warehouse>/<database>/<table>/metadata/``.
    """
    if warehouse is None:
        try:
            from glue_incremental.spark import ICEBERG_CATALOG, iceberg_conf

            warehouse = iceberg_conf()[f"spark.sql.catalog.{ICEBERG_CATALOG}.warehouse"]
        except (ImportError, FileNotFoundError):
            return None  # no Spark or no local setup (a tools-only install): only Glue counts
    location = urlparse(warehouse)
    if location.scheme in ("", "file"):
        directory = Path(unquote(location.path)) / table.database / table.name / "metadata"
        names = [path.name for path in directory.iterdir()] if directory.is_dir() else []
        name = current_metadata_file(names)
        return str(directory / name) if name else None
    if location.scheme in ("s3", "s3a", "s3n"):
        parts = [location.path.strip("/"), table.database, table.name, "metadata"]
        prefix = "/".join(part for part in parts if part)
        pages = aws.client("s3").get_paginator("list_objects_v2")
        try:
            names = [
                item["Key"].rsplit("/", 1)[-1]
                for page in pages.paginate(Bucket=location.netloc, Prefix=f"{prefix}/")
                for item in page.get("Contents", [])
            ]
        except ClientError:
            return None  # no such bucket: no table
        name = current_metadata_file(names)
        return f"{location.scheme}://{location.netloc}/{prefix}/{name}" if name else None
    return None


def current_metadata_file(names: Iterable[str]) -> str | None:
    """Of a Hadoop table's metadata file ``names``, the current one: the highest
    ``v<N>.metadata.json`` (each commit writes the next; ``version-hint.text`` may lag
    behind it, and Iceberg itself reads on past the hint), None if there is none."""
    versions = {
        int(number): name
        for name in names
        if name.startswith("v") and name.endswith(".metadata.json")
        if (number := name[1:].split(".", 1)[0]).isdigit()
    }
    return versions[max(versions)] if versions else None
