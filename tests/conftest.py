"""Session-wide real parts: local AWS, one SparkSession, one PostgreSQL.

Local AWS is LocalStack + DynamoDB Local + moto's server for Glue only
(``tests/harness/endpoint.py``), started once per session. State is reset between
tests (``aws`` fixture), never the processes themselves.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness.endpoint import running_local_aws, use_dummy_credentials  # noqa: E402

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


@pytest.fixture(scope="session")
def spark():
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
