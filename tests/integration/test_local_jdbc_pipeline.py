"""The local environment's JDBC pipeline runs end to end: PostgreSQL, its secret in LocalStack.

The job's arguments are the ones Terraform gives the `payments` pipeline of
``terraform/environments/local`` (read through ``terraform console``, nothing
applied): its --source_secret_id is the secret's ARN, never a password.
"""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import UTC, datetime

import pytest
from glue_incremental.load import job as load_job

from tests.harness.environments import planned_pipelines

pytestmark = [
    pytest.mark.spark,
    pytest.mark.postgres,
    pytest.mark.terraform,
    pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform CLI not found"),
]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def payments(postgres):
    name = f"payments_{uuid.uuid4().hex[:8]}"
    postgres.execute(
        f"create table {name} (payment_id bigint primary key, amount numeric(12,2), updated_at timestamptz)"
    )
    postgres.execute(f"insert into {name} values (1, 10.50, %s), (2, 20.00, %s)", (T0, T0))
    yield name
    postgres.execute(f"drop table {name}")


def test_the_local_jdbc_pipeline_loads_with_its_secret_from_secrets_manager(
    spark, postgres, payments, s3_bucket, store, tmp_path
):
    secret = postgres.credentials_secret(f"gi-local/{payments}")
    jdbc_source = json.dumps({"uri": postgres.jdbc_url, "table": payments, "secret_arn": secret})
    planned = planned_pipelines(
        "local",
        tmp_path,
        (f"-var=jdbc_source={jdbc_source}", f"-var=data_bucket_name={s3_bucket}"),
    )
    pipeline = next(p for p in planned if p.name == "payments")
    assert pipeline.run_arguments["--source_secret_id"] == secret
    assert postgres.password not in json.dumps(pipeline.run_arguments)

    summary = load_job.main(pipeline.argv(), spark=spark)

    assert summary["status"] == "SUCCEEDED" and summary["records_written"] == 2
    written = spark.read.parquet(pipeline.run_arguments["--target_path"])
    assert sorted(row.payment_id for row in written.collect()) == [1, 2]
