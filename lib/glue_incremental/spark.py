"""Building the SparkSession: Glue's when ``awsglue`` is importable, a local one otherwise."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Session settings the library relies on everywhere it runs.
REQUIRED_CONF = {
    # Watermarks are compared and stored in UTC; a local session zone would shift them.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


def local_spark_session(
    app_name: str = "glue-incremental",
    *,
    master: str | None = None,
    extra_jars: Sequence[str] = (),
    shuffle_partitions: int = 4,
) -> Any:
    """A small local SparkSession (UI off, few shuffle partitions), or the active one."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    # A local session has no business on a network interface.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or os.environ.get("GLUE_INCREMENTAL_SPARK_MASTER", "local[2]"))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", os.environ.get("GLUE_INCREMENTAL_DRIVER_MEMORY", "2g"))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
    )
    jars = [jar for jar in extra_jars if jar] + _jdbc_jars_from_env() + iceberg_jars()
    if jars:
        builder = builder.config("spark.jars", ",".join(dict.fromkeys(jars)))
    extra_conf = iceberg_conf() if iceberg_jars() else {}
    for key, value in {**REQUIRED_CONF, **extra_conf}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("GLUE_INCREMENTAL_SPARK_LOG_LEVEL", "ERROR"))
    apply_required_conf(session)
    return session


def apply_required_conf(session: Any) -> None:
    for key, value in REQUIRED_CONF.items():
        session.conf.set(key, value)


def _jdbc_jars_from_env() -> list[str]:
    """JDBC drivers to put on the classpath locally (Glue ships its own)."""
    configured = os.environ.get("GLUE_INCREMENTAL_JARS")
    if configured:
        return [jar for jar in configured.split(",") if jar]
    default = "/usr/share/java/postgresql.jar"
    return [default] if os.path.exists(default) else []


# -- Iceberg (AWS Glue 5.1 ships it with --datalake-formats iceberg; locally, scripts/setup.sh) --

ICEBERG_JAR_NAMES = (
    "iceberg-spark-runtime-3.5_2.12-1.10.2.jar",
    "iceberg-shaded-jackson-2.15.2.jar",
)
ICEBERG_CATALOG = "glue_catalog"
_REPO_JARS = Path(__file__).resolve().parents[2] / "build" / "jars"


def iceberg_jars() -> list[str]:
    """The local Iceberg jars when both are installed (``GLUE_INCREMENTAL_JARS_DIR`` or build/jars)."""
    directory = Path(os.environ.get("GLUE_INCREMENTAL_JARS_DIR") or _REPO_JARS)
    paths = [directory / name for name in ICEBERG_JAR_NAMES]
    return [str(path) for path in paths] if all(path.exists() for path in paths) else []


def iceberg_conf(warehouse: str | None = None) -> dict[str, str]:
    """Iceberg's SQL extensions and a Hadoop catalog named ``glue_catalog`` on a local warehouse.

    On Glue the same catalog name is the Glue Data Catalog, configured by the
    job's ``--conf`` (see ``terraform/modules/glue_job``).
    """
    location = warehouse or os.environ.get("GLUE_INCREMENTAL_ICEBERG_WAREHOUSE")
    if not location:
        location = (_REPO_JARS.parent / "iceberg-warehouse").as_uri()
    prefix = f"spark.sql.catalog.{ICEBERG_CATALOG}"
    return {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": location,
        # Every read sees the latest commit, also one made by another process.
        f"{prefix}.cache-enabled": "false",
    }
