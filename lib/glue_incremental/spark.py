"""Building the SparkSession: Glue's when ``awsglue`` is importable, a local one otherwise."""

from __future__ import annotations

import os
from collections.abc import Sequence
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
    jars = [jar for jar in extra_jars if jar] + _jdbc_jars_from_env()
    if jars:
        builder = builder.config("spark.jars", ",".join(dict.fromkeys(jars)))
    for key, value in REQUIRED_CONF.items():
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
