"""The local SparkSession (JDBC, S3A, Iceberg) and the settings every session gets.

On Glue the session is the GlueContext's, built in ``run/context.py``; this module adds the
settings the library relies on to it (``apply_required_conf``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyspark.sql import SparkSession

# Session settings the library relies on everywhere it runs.
REQUIRED_CONF = {
    # Watermarks are compared and stored in UTC; a local session zone would shift them.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


# Local runs only: Glue 5.1 brings its own S3A connector. PySpark 3.5.6 carries the
# Hadoop 3.3.4 client without hadoop-aws; scripts/setup-aws-emulators.sh extracts these.
S3A_JARS = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")


def local_spark_session(
    app_name: str = "glue-incremental",
    *,
    master: str | None = None,
    extra_jars: Sequence[str] = (),
    extra_conf: Mapping[str, str] | None = None,
    shuffle_partitions: int = 4,
) -> SparkSession:
    """A small local SparkSession (UI off, few shuffle partitions), or the active one.

    ``extra_jars`` and ``extra_conf`` add to the defaults (JDBC drivers from
    ``GLUE_INCREMENTAL_JARS``, and S3 through S3A when an S3 endpoint is exported,
    see ``s3a_conf``). ``extra_conf`` wins over every default except ``REQUIRED_CONF``.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # A local session has no business on a network interface.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    master = master or os.environ.get("GLUE_INCREMENTAL_SPARK_MASTER") or "local[2]"
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", os.environ.get("GLUE_INCREMENTAL_DRIVER_MEMORY", "2g"))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.extraJavaOptions", _java_options())
        .config("spark.executor.extraJavaOptions", _java_options())
    )
    jars = [jar for jar in extra_jars if jar] + _jdbc_jars_from_env() + iceberg_jars()
    conf: dict[str, str] = iceberg_conf() if iceberg_jars() else {}
    s3_endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if s3_endpoint:
        jars += s3a_jars()
        conf.update(s3a_conf(s3_endpoint))
    conf.update(extra_conf or {})
    if jars:
        builder = _with_jars(builder, master, list(dict.fromkeys(jars)))
    for key, value in conf.items():
        builder = builder.config(key, value)
    for key, value in REQUIRED_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("GLUE_INCREMENTAL_SPARK_LOG_LEVEL", "ERROR"))
    apply_required_conf(session)
    return session


def _java_options() -> str:
    """UTC, plus ``GLUE_INCREMENTAL_JVM_OPTIONS`` (the tests' short-lived JVMs: JIT flags)."""
    return " ".join(
        ["-Duser.timezone=UTC", *os.environ.get("GLUE_INCREMENTAL_JVM_OPTIONS", "").split()]
    )


def _with_jars(builder: SparkSession.Builder, master: str, jars: list[str]) -> SparkSession.Builder:
    """Jars on the driver's class path in local mode, shipped with ``spark.jars`` otherwise.

    In local mode the driver is the executor. ``spark.jars`` would copy every jar into the
    session's temp directory at its first task (232 MB with the S3A bundle), and a killed
    process leaves that copy behind; on the class path the jars are read in place.
    """
    if master == "local" or master.startswith("local["):
        return builder.config("spark.driver.extraClassPath", os.pathsep.join(jars))
    return builder.config("spark.jars", ",".join(jars))


def apply_required_conf(session: SparkSession) -> None:
    for key, value in REQUIRED_CONF.items():
        session.conf.set(key, value)


def s3a_jars(directory: str | os.PathLike[str] | None = None) -> list[str]:
    """The S3A connector jars (``GLUE_INCREMENTAL_S3A_JAR_DIR``, default ``jars_dir()``)."""
    directory = Path(directory or os.environ.get("GLUE_INCREMENTAL_S3A_JAR_DIR") or jars_dir())
    missing = [name for name in S3A_JARS if not (directory / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"S3A jars missing in {directory}: {', '.join(missing)} (run `make setup`)"
        )
    return [str(directory / name) for name in S3A_JARS]


def s3a_conf(endpoint_url: str, region: str | None = None) -> dict[str, str]:
    """Hadoop settings for ``s3://`` and ``s3a://`` through S3A against a local S3 endpoint.

    Path-style requests, no TLS, the endpoint's dummy keys; ``s3://`` is mapped to
    S3A as on Glue 5.1, where S3A is the default S3 connector.
    """
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return {
        "spark.hadoop.fs.s3a.endpoint": endpoint_url,
        "spark.hadoop.fs.s3a.endpoint.region": region or "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.aws.credentials.provider": (
            "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        ),
        "spark.hadoop.fs.s3a.access.key": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        "spark.hadoop.fs.s3a.secret.key": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        # Failing fast beats Hadoop's default minutes of retries against a local endpoint.
        "spark.hadoop.fs.s3a.attempts.maximum": "3",
        "spark.hadoop.fs.s3a.retry.limit": "3",
        "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
        "spark.hadoop.fs.s3a.connection.timeout": "30000",
    }


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
JARS_DIR_ENV = "GLUE_INCREMENTAL_JARS_DIR"
LOCAL_JARS = Path("build") / "jars"


def jars_dir() -> Path:
    """Where ``make setup`` put the local jars: ``$GLUE_INCREMENTAL_JARS_DIR``, else ``build/jars``
    in the working directory or its nearest parent that has one (the checkout).

    Never derived from where this package is installed (site-packages has no build/).
    A ``$GLUE_INCREMENTAL_JARS_DIR`` that is not a directory is an error naming it;
    with no such directory anywhere, ``./build/jars`` (the callers then report missing jars).
    """
    configured = os.environ.get(JARS_DIR_ENV)
    if configured:
        if not Path(configured).is_dir():
            raise FileNotFoundError(
                f"${JARS_DIR_ENV} {configured} is not a directory (run `make setup` or unset it)"
            )
        return Path(configured)
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / LOCAL_JARS).is_dir():
            return candidate / LOCAL_JARS
    return here / LOCAL_JARS


def iceberg_jars() -> list[str]:
    """The local Iceberg jars when both are installed (in ``jars_dir()``)."""
    directory = jars_dir()
    paths = [directory / name for name in ICEBERG_JAR_NAMES]
    return [str(path) for path in paths] if all(path.exists() for path in paths) else []


def iceberg_conf(warehouse: str | None = None) -> dict[str, str]:
    """Iceberg's SQL extensions and a Hadoop catalog named ``glue_catalog`` on a local warehouse.

    On Glue the same catalog name is the Glue Data Catalog, configured by the
    job's ``--conf`` (see ``terraform/modules/glue_job``).
    """
    location = warehouse or os.environ.get("GLUE_INCREMENTAL_ICEBERG_WAREHOUSE")
    if not location:
        location = (jars_dir().parent / "iceberg-warehouse").as_uri()
    prefix = f"spark.sql.catalog.{ICEBERG_CATALOG}"
    return {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": location,
        # Every read sees the latest commit, also one made by another process.
        f"{prefix}.cache-enabled": "false",
    }
