"""The local SparkSession (JDBC, S3A, Iceberg) and the settings every session gets.

On Glue the session is the GlueContext's, built in ``run/context.py``; this module adds the
settings the library relies on to it (``apply_required_conf``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyspark
from pyspark import SparkContext
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
        .config("spark.executor.extraJavaOptions", _java_options())
    )
    jars = local_jars(extra_jars)
    conf: dict[str, str] = iceberg_conf() if iceberg_jars() else {}
    s3_endpoint = _s3_endpoint()
    if s3_endpoint:
        conf.update(s3a_conf(s3_endpoint))
    local = master == "local" or master.startswith("local[")
    if local and local_filesystem_jar() in jars:
        conf["spark.hadoop.fs.file.impl"] = LOCAL_FILESYSTEM_CLASS
    conf.update(extra_conf or {})
    # The driver only: executors of a cluster have another class path (``spark.jars``).
    driver_options = [_java_options(), *(class_data_options(jars) if local else [])]
    builder = builder.config("spark.driver.extraJavaOptions", " ".join(driver_options))
    if jars:
        builder = _with_jars(builder, master, jars)
    for key, value in conf.items():
        builder = builder.config(key, value)
    for key, value in REQUIRED_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("GLUE_INCREMENTAL_SPARK_LOG_LEVEL", "ERROR"))
    apply_required_conf(session)
    return session


def _s3_endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def local_jars(extra_jars: Sequence[str] = (), *, iceberg: bool = True) -> list[str]:
    """The jars a local session puts before Spark's own: ``extra_jars``, the JDBC drivers,
    Iceberg's (unless ``iceberg`` is false), ``local_filesystem_jar()``, and S3A's when an S3 endpoint is exported;
    once each, in path order (the order carries no meaning, as no two of them hold the same
    class, and one order gives every session with the same jars the same class path, so
    one ``class_data_archive``).
    """
    jars = [jar for jar in extra_jars if jar] + _jdbc_jars_from_env()
    jars += iceberg_jars() if iceberg else []
    local_filesystem = local_filesystem_jar()
    jars += [local_filesystem] if local_filesystem else []
    if _s3_endpoint():
        jars += s3a_jars()
    return sorted(set(jars))


# ``make setup``'s build of tools/local-filesystem: Hadoop's file: file system, but permissions
# set in the JVM, not by a chmod process per file created (no native Hadoop library locally).
LOCAL_FILESYSTEM_JAR = "local-filesystem.jar"
LOCAL_FILESYSTEM_CLASS = "glueincremental.local.LocalFileSystemWithoutForks"
LOCAL_FILESYSTEM_ENV = "GLUE_INCREMENTAL_LOCAL_FILESYSTEM"  # "hadoop": Hadoop's own


def local_filesystem_jar() -> str | None:
    """The jar of ``LOCAL_FILESYSTEM_CLASS``, which local sessions use for ``file:`` paths
    (the same files, checksums and permissions, a third less time per small file written);
    None when ``make setup`` could not build it or ``$GLUE_INCREMENTAL_LOCAL_FILESYSTEM`` is
    ``hadoop``."""
    if os.environ.get(LOCAL_FILESYSTEM_ENV, "").lower() == "hadoop":
        return None
    directory = _class_data_jars_dir()
    jar = directory / LOCAL_FILESYSTEM_JAR if directory is not None else None
    return str(jar) if jar is not None and jar.is_file() else None


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


# -- The local JVM's class-data archive --------------------------------------------------------

CLASS_DATA_ARCHIVE_ENV = "GLUE_INCREMENTAL_CLASS_DATA_ARCHIVE"  # "off": never use one
# Unified-logging tags of class-data sharing: a mismatched archive is a warning on stdout,
# in the middle of a job's output, and costs nothing but the saving.
_QUIET_CDS = "-Xlog:cds*=off"
# The JIT and GC of short local runs (tests/conftest.py, glue_incremental_tools.runner).
_SHORT_RUN_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"


def class_data_archive(jars: Sequence[str]) -> Path | None:
    """Where the class-data archive of a local session with these jars lives, or None.

    Starting a local session loads and verifies about 15,000 classes of Spark, Hadoop, S3A
    and Iceberg, most of a short run's JVM time. Java 17 maps the classes from an archive
    that a JVM with the same class path dumped at exit (dynamic AppCDS, JEP 350):
    ``build_class_data_archive`` (``make setup``) writes one beside the jars (``build/jvm/``).
    The name is a digest of the Java binary, PySpark's version and the jars (path, size,
    time), so a changed class path never finds an old archive; the JVM checks it again
    and ignores one that does not fit. None without a ``build/`` or when turned off.
    """
    if os.environ.get(CLASS_DATA_ARCHIVE_ENV, "").lower() == "off":
        return None
    directory = _class_data_jars_dir()
    java = shutil.which("java", path=_java_path())
    if directory is None or java is None:
        return None
    digest = hashlib.sha256(pyspark.__version__.encode())
    for path in (os.path.realpath(java), *jars):
        stat = os.stat(path)
        digest.update(f"\n{path} {stat.st_size} {stat.st_mtime_ns}".encode())
    return directory.parent / "jvm" / f"spark-{digest.hexdigest()[:16]}.jsa"


def _class_data_jars_dir() -> Path | None:
    """``jars_dir()``, else the S3A jars' directory: a local runner's script runs in a
    temporary directory, and a job without Iceberg is given only S3A's (``make setup`` put
    both in one ``build/jars``, the archives beside it)."""
    for candidate in (jars_dir(), os.environ.get("GLUE_INCREMENTAL_S3A_JAR_DIR")):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def class_data_options(jars: Sequence[str]) -> list[str]:
    """The driver options that map ``class_data_archive(jars)``; none until it exists."""
    dump = os.environ.get(_DUMP_ENV)
    if dump:
        return [f"-XX:ArchiveClassesAtExit={dump}", _QUIET_CDS]
    archive = class_data_archive(jars)
    if archive is None or not archive.is_file():
        return []
    return [f"-XX:SharedArchiveFile={archive}", _QUIET_CDS]


def _java_path() -> str | None:
    """Where PySpark finds ``java``: ``$JAVA_HOME/bin`` first, then ``$PATH``."""
    java_home = os.environ.get("JAVA_HOME")
    path = os.environ.get("PATH", "")
    return os.pathsep.join([os.path.join(java_home, "bin"), path]) if java_home else path


_DUMP_ENV = "GLUE_INCREMENTAL_CLASS_DATA_DUMP"


def build_class_data_archive(timeout_seconds: float = 600, *, iceberg: bool = True) -> Path | None:
    """Write the class-data archive of a default local session (S3A, Iceberg, JDBC), once;
    with ``iceberg`` false, that of a local run of a job without Iceberg (S3A, JDBC).

    A separate process starts the session, runs a small workload of every kind a job runs
    (Parquet, JSON and CSV reads and writes, a join, a window, an Iceberg merge), and stops;
    its JVM dumps the classes it loaded as it exits. The archive is renamed into place only
    after that JVM exited cleanly, so a partial one is never used. Returns the archive
    (None when there is nowhere to put one); an existing archive is kept.
    """
    environment = {
        **os.environ,
        "AWS_ENDPOINT_URL_S3": _s3_endpoint() or "http://127.0.0.1:9",
        # As the sessions that map the archive run (the tests', the runner's local runs):
        # the dump's JIT then costs a sixth less (54 -> 46 s alone, measured).
        "GLUE_INCREMENTAL_JVM_OPTIONS": os.environ.get(
            "GLUE_INCREMENTAL_JVM_OPTIONS", _SHORT_RUN_JVM_OPTIONS
        ),
    }
    if not iceberg:
        # As the runner starts such a job: in a directory of its own, given S3A's jars only.
        environment.pop(JARS_DIR_ENV, None)
        environment["GLUE_INCREMENTAL_S3A_JAR_DIR"] = str(jars_dir())
    previous = os.environ.copy()
    os.environ.update(environment)
    try:
        archive = class_data_archive(local_jars(iceberg=iceberg))
    finally:
        os.environ.clear()
        os.environ.update(previous)
    if archive is None or archive.is_file():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    for stale in archive.parent.glob(f"{archive.name}.*.partial"):
        stale.unlink(missing_ok=True)  # a dump of this archive that failed or was killed
    with tempfile.TemporaryDirectory(prefix="gi-class-data-") as workdir:
        dumped = subprocess.run(
            [sys.executable, "-c", f"from {__name__} import _class_data_workload as w; w()"],
            env={**environment, _DUMP_ENV: str(partial), "GLUE_INCREMENTAL_WORKDIR": workdir},
            cwd=str(archive.parent.parent.parent) if iceberg else workdir,
            timeout=timeout_seconds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    if dumped.returncode != 0:
        partial.unlink(missing_ok=True)
        last = (dumped.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the class-data archive was not written: {last}")
    if not partial.is_file():
        return None
    os.replace(partial, archive)
    return archive


def _class_data_workload() -> None:
    """The dumping process: a session, one small job of each kind, then its JVM's clean exit."""
    workdir = Path(os.environ["GLUE_INCREMENTAL_WORKDIR"])
    spark = local_spark_session(
        "glue-incremental-class-data",
        extra_conf={**iceberg_conf((workdir / "warehouse").as_uri())} if iceberg_jars() else None,
    )
    rows = spark.createDataFrame(
        [(1, "a", "2024-01-01 00:00:00"), (2, "b", "2024-01-02 00:00:00")],
        "id int, v string, t string",
    ).selectExpr("id", "v", "cast(t as timestamp) as t")
    for kind in ("parquet", "json", "csv"):
        rows.write.mode("overwrite").option("header", "true").format(kind).save(str(workdir / kind))
        spark.read.option("header", "true").format(kind).load(str(workdir / kind)).count()
    rows.join(rows.selectExpr("id", "v as w"), "id").selectExpr(
        "*", "row_number() over (partition by id order by t desc) as n"
    ).where("n = 1").write.mode("overwrite").partitionBy("v").parquet(str(workdir / "joined"))
    if _s3_endpoint():
        # S3A's file system and the AWS SDK's client behind it: every job's s3:// paths
        # (no request is sent).
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        path = jvm.org.apache.hadoop.fs.Path("s3a://class-data/")
        path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if iceberg_jars():
        table = f"{ICEBERG_CATALOG}.db.t"
        spark.sql(f"create table {table} (id int, v string, t timestamp) using iceberg")
        rows.createOrReplaceTempView("incoming")
        spark.sql(
            f"merge into {table} o using incoming i on o.id = i.id "
            "when matched then update set * when not matched then insert *"
        )
    spark.stop()
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None) if gateway is not None else None
    if process is not None and process.stdin is not None:
        # PySpark's JVM exits when its stdin closes; the archive is written as it exits.
        process.stdin.close()
        process.wait()
