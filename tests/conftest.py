"""Session-wide real parts: one AWS-compatible endpoint, one SparkSession, one PostgreSQL.

State is reset between tests (``aws`` fixture), never the processes themselves.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness.endpoint import running_endpoint, use_dummy_credentials  # noqa: E402

use_dummy_credentials()
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

settings.register_profile(
    "quick",
    max_examples=int(os.environ.get("HYPOTHESIS_QUICK_EXAMPLES", "15")),
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


@pytest.fixture(scope="session")
def endpoint():
    """The session's AWS-compatible endpoint (LocalStack if it answers, else moto's server)."""
    with running_endpoint() as running:
        yield running


@pytest.fixture
def aws(endpoint):
    """A clean endpoint for one test: every resource from earlier tests is gone."""
    endpoint.reset()
    return endpoint


@pytest.fixture(scope="session")
def iceberg_warehouse(tmp_path_factory) -> str:
    """The session's local Hadoop-catalog warehouse (scripts run by tests share it via env)."""
    warehouse = tmp_path_factory.mktemp("iceberg-warehouse").as_uri()
    os.environ["GLUE_INCREMENTAL_ICEBERG_WAREHOUSE"] = warehouse
    return warehouse


@pytest.fixture(scope="session")
def spark(iceberg_warehouse):
    from glue_incremental.spark import local_spark_session

    session = local_spark_session(app_name="glue-incremental-tests", extra_jars=_jdbc_jars())
    yield session
    session.stop()


@pytest.fixture(scope="session")
def postgres():
    from tests.harness.postgres import running_postgres

    with running_postgres() as server:
        yield server


def _jdbc_jars() -> list[str]:
    from tests.harness.postgres import JDBC_JAR_CANDIDATES

    return [jar for jar in JDBC_JAR_CANDIDATES[:1] if os.path.exists(jar)]


@pytest.fixture(params=["local", "copy_then_delete"])
def filesystem(request, monkeypatch):
    """The file system the writer publishes on: a local disk, or S3 semantics (copy + delete).

    An ``s3a`` variant (S3A against the local S3 endpoint) joins the params when it lands.
    """
    from tests.harness.faults import use_filesystem

    use_filesystem(monkeypatch, request.param)
    return request.param


@pytest.fixture(params=["partitioned", "unpartitioned"])
def layout(request):
    """A target partitioned by a column, or unpartitioned (the table is one partition)."""
    return request.param
