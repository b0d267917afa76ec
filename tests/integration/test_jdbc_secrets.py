"""JDBC credentials come from Secrets Manager or a Glue connection; the password is never shown."""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime

import pytest
from glue_incremental import aws as aws_clients
from glue_incremental.args import ArgumentError
from glue_incremental.load import job as load_job
from glue_incremental.sources.credentials import CredentialsError

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(postgres):
    name = f"secret_{uuid.uuid4().hex[:8]}"
    postgres.execute(f"create table {name} (id bigint primary key, updated_at timestamptz)")
    postgres.execute(f"insert into {name} values (1, %s)", (T0,))
    yield name
    postgres.execute(f"drop table {name}")


def argv(postgres, table, tmp_path, *credentials: str) -> list[str]:
    return [
        "incremental_load.py",
        "--JOB_NAME",
        f"job_{table}",
        "--source",
        postgres.jdbc_url,
        "--source_table",
        table,
        "--watermark_column",
        "updated_at",
        "--primary_key",
        "id",
        "--target_path",
        (tmp_path / "target").as_uri(),
        *credentials,
    ]


def quiet_wire_debug(caplog) -> None:
    """Everything at INFO (Glue's level) and the library, botocore and py4j at DEBUG.

    botocore at DEBUG logs response bodies and py4j every JVM command (the JDBC
    options included); the library silences each while a secret passes through it,
    which these tests check.
    """
    caplog.set_level(logging.INFO)
    for name in ("glue_incremental", "botocore", "urllib3", "py4j"):
        caplog.set_level(logging.DEBUG, logger=name)


def everything_shown(capfd, caplog, summary) -> str:
    captured = capfd.readouterr()
    return "\n".join([captured.out, captured.err, caplog.text, json.dumps(summary, default=str)])


def test_credentials_from_a_secrets_manager_secret_load_and_are_never_shown(
    spark, postgres, table, tmp_path, store, capfd, caplog
):
    secret = postgres.credentials_secret(f"pg/{table}")
    quiet_wire_debug(caplog)

    summary = load_job.main(
        argv(postgres, table, tmp_path, "--source_secret_id", secret), spark=spark
    )

    assert summary["status"] == "SUCCEEDED" and summary["records_read"] == 1
    assert postgres.password not in everything_shown(capfd, caplog, summary)
    assert postgres.password not in json.dumps(store.get_watermark(f"job_{table}"), default=str)


def test_credentials_from_a_glue_connection_load_and_are_never_shown(
    spark, postgres, table, tmp_path, store, capfd, caplog
):
    aws_clients.client("glue").create_connection(
        ConnectionInput={
            "Name": f"conn_{table}",
            "ConnectionType": "JDBC",
            "ConnectionProperties": {
                "JDBC_CONNECTION_URL": postgres.jdbc_url,
                "USERNAME": postgres.user,
                "PASSWORD": postgres.password,
            },
        }
    )
    quiet_wire_debug(caplog)

    summary = load_job.main(
        argv(postgres, table, tmp_path, "--connection_name", f"conn_{table}"), spark=spark
    )

    assert summary["status"] == "SUCCEEDED" and summary["records_read"] == 1
    assert postgres.password not in everything_shown(capfd, caplog, summary)


def test_a_missing_secret_is_one_clear_error_naming_the_argument(
    spark, postgres, table, tmp_path, store
):
    with pytest.raises(CredentialsError, match="--source_secret_id 'nope' could not be read"):
        load_job.main(argv(postgres, table, tmp_path, "--source_secret_id", "nope"), spark=spark)
    assert not (tmp_path / "target").exists()


def test_a_plain_text_password_argument_is_refused_before_anything_runs(
    spark, postgres, table, tmp_path, store
):
    with pytest.raises(ArgumentError, match="--source_password is refused") as raised:
        load_job.main(
            argv(postgres, table, tmp_path, "--source_password", postgres.password), spark=spark
        )
    assert postgres.password not in str(raised.value)
    assert store.get_watermark(f"job_{table}") is None
