"""Session-wide real parts: local AWS, one SparkSession, one PostgreSQL.

Local AWS is LocalStack + DynamoDB Local + moto's server for Glue only
(``tests/harness/endpoint.py``), started once per session, that is once per
pytest-xdist worker (``make test`` runs three). State is reset between tests (``aws``
fixture), never the processes themselves. Modules whose module-scoped fixture is
expensive (a Terraform apply) carry ``xdist_group`` so one worker runs them whole.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.harness.deep import (
    DEEP_NAME_WORDS,
    IN_DEEP_RUN,
    ONLY_THE_REST,
    deep_only_entry,
    rest_entry,
)
from tests.harness.endpoint import running_local_aws, use_dummy_credentials
from tests.harness.schedule import keep_groups_together, schedule_rank

use_dummy_credentials()
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
# Every JVM and Terraform the tests start, and the scripts they spawn, inherit these. The
# tests' JVMs live seconds on tiny data: the quick JIT tier alone costs a quarter less CPU
# than C2 compiling code that never gets hot (tests/integration/test_incremental_load_files.py:
# 113 -> 82 s of driver CPU). The AWS provider's schema, built at each of Terraform's
# provider starts, is allocation-bound: a lazier Go GC takes a quarter off each start.
os.environ.setdefault("GLUE_INCREMENTAL_JVM_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC")
os.environ.setdefault("GOGC", "400")
# Every environment root requires the release its jobs run (docs/releases.md). A plan or
# console needs only a well-formed id; what deploys and verifies passes the checkout's own.
os.environ.setdefault("TF_VAR_release", "0123456789abcdef")

settings.register_profile(
    "quick",
    max_examples=int(os.environ.get("HYPOTHESIS_QUICK_EXAMPLES", "6")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
settings.register_profile(
    "deep",
    max_examples=int(os.environ.get("HYPOTHESIS_DEEP_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


def pytest_collection_modifyitems(config, items):
    """``make test`` leaves out what ``tests/harness/deep.py`` lists; ``make test-rest`` runs the
    tests moved for make test's budget (``MAKE_TEST_REST``, ``KEPT_IN_MAKE_TEST``), never the
    deep-only repeats; ``make test-deep`` marks all of them, and every sweep and property,
    ``deep`` (it selects ``-m deep``)."""
    kept, moved = [], []
    for item in items:
        repeat = deep_only_entry(item.nodeid) is not None
        rest = rest_entry(item.nodeid) is not None
        if repeat or rest or any(word in item.name for word in DEEP_NAME_WORDS):
            item.add_marker(pytest.mark.deep)
        if IN_DEEP_RUN:
            left_out = False
        elif ONLY_THE_REST:
            left_out = not rest
        else:
            left_out = repeat or rest
        (moved if left_out else kept).append(item)
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = kept
    # The longest modules first (tests/harness/schedule.py); a stable sort keeps each module whole.
    items.sort(key=lambda item: schedule_rank(item.nodeid))
    if getattr(config.option, "loadgroup", False):  # an xdist worker of `make test`
        keep_groups_together(items)


@pytest.fixture(scope="session")
def endpoint():
    """The session's local AWS (``LocalAws``): LocalStack, DynamoDB Local, moto for Glue.

    Fails the session loudly when one of them cannot start: there is no fallback.
    """
    with running_local_aws() as running:
        yield running


@pytest.fixture
def aws(endpoint):
    """Local AWS clean for one test: every resource from earlier tests is gone."""
    endpoint.reset()
    return endpoint


@pytest.fixture
def store(aws):
    """A fresh ``glue-watermarks`` table on the session's DynamoDB Local, and the store on it."""
    from glue_incremental.watermarks import Watermarks, create_table

    create_table()
    return Watermarks()


@pytest.fixture(scope="session")
def iceberg_warehouse(tmp_path_factory) -> str:
    """The session's local Hadoop-catalog warehouse (scripts run by tests share it via env)."""
    warehouse = tmp_path_factory.mktemp("iceberg-warehouse").as_uri()
    os.environ["GLUE_INCREMENTAL_ICEBERG_WAREHOUSE"] = warehouse
    return warehouse


@pytest.fixture(scope="session")
def spark(endpoint, iceberg_warehouse):
    """The session's SparkSession: JDBC, Iceberg, and ``s3://``/``s3a://`` to LocalStack's S3."""
    from glue_incremental.spark import local_spark_session, s3a_conf, s3a_jars

    session = local_spark_session(
        app_name="glue-incremental-tests",
        extra_jars=[*_jdbc_jars(), *s3a_jars()],
        # Rows by the dozen: compiling each query's whole-stage code costs more CPU than
        # running it (5 to 16% of the JVM's CPU per module, measured). Same results by
        # Spark's contract; the scripts the tests start as processes keep the default.
        extra_conf={**s3a_conf(endpoint.localstack_url), "spark.sql.codegen.wholeStage": "false"},
    )
    yield session
    session.stop()


@pytest.fixture
def s3_bucket(aws) -> str:
    """A fresh, empty bucket in LocalStack's S3 for one test."""
    from glue_incremental import aws as aws_clients

    name = "gi-test-data"
    aws_clients.client("s3").create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_root(s3_bucket, spark) -> str:
    """A fresh ``s3://bucket/prefix`` for one test, read and written by Spark through S3A."""
    return f"s3://{s3_bucket}/t"


@pytest.fixture(scope="session")
def postgres():
    from tests.harness.postgres import running_postgres

    with running_postgres() as server:
        yield server


def _jdbc_jars() -> list[str]:
    from tests.harness.postgres import JDBC_JAR_CANDIDATES

    return [jar for jar in JDBC_JAR_CANDIDATES[:1] if os.path.exists(jar)]


@pytest.fixture(params=["local", "copy_then_delete", pytest.param("s3a", marks=pytest.mark.s3)])
def filesystem(request, monkeypatch):
    """The file system the writer publishes on: a local disk, S3 semantics emulated on it
    (copy + delete), or LocalStack's S3 through Spark's S3A (``targets`` puts the target there).
    """
    from tests.harness.faults import use_filesystem

    use_filesystem(monkeypatch, request.param)
    return request.param


@pytest.fixture
def targets(filesystem, tmp_path, request):
    """``targets(name)``: a writer target on ``filesystem`` (``tests/harness/targets.py``)."""
    from tests.harness.targets import LocalTarget, S3Target

    if filesystem == "s3a":
        root = request.getfixturevalue("s3_root")
        return lambda name: S3Target(f"{root}/{name}")
    return lambda name: LocalTarget(tmp_path / name)


@pytest.fixture(params=["partitioned", "unpartitioned"])
def layout(request):
    """A target partitioned by a column, or unpartitioned (the table is one partition)."""
    return request.param
