"""The shipped JDBC custom script, ``glue_scripts/label_payments.py``, run as Terraform's
custom kind calls it (``--<name>_url``, ``--<name>_table``, ``--source_secret_id``) on
PostgreSQL: the first run labels every payment, the next merges only what changed since
its cursor by ``payment_id``, with the lookup table read whole each time."""

from __future__ import annotations

import importlib.util
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from glue_incremental import aws as aws_clients

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

SCRIPT = Path(__file__).resolve().parents[2] / "glue_scripts" / "label_payments.py"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
def shop(postgres):
    """A payments table and a payment_methods lookup table, dropped afterwards."""
    suffix = uuid.uuid4().hex[:8]
    payments, methods = f"payments_{suffix}", f"payment_methods_{suffix}"
    postgres.execute(
        f"create table {payments} (payment_id bigint primary key, method_id bigint, "
        "updated_at timestamptz)"
    )
    postgres.execute(f"create table {methods} (method_id bigint primary key, label text)")
    postgres.execute(f"insert into {methods} values (1, 'card'), (2, 'transfer')")
    try:
        yield payments, methods
    finally:
        postgres.execute(f"drop table {payments}")
        postgres.execute(f"drop table {methods}")


def pay(postgres, table: str, rows: list[tuple]) -> None:
    postgres.execute(
        f"insert into {table} values (%s, %s, %s) on conflict (payment_id) do update set "
        "method_id = excluded.method_id, updated_at = excluded.updated_at",
        rows,
        many=True,
    )


def test_label_payments_labels_every_payment_then_merges_only_the_changed_ones(
    spark, store, postgres, shop, tmp_path
):
    payments, methods = shop
    secret = aws_clients.client("secretsmanager").create_secret(
        Name=f"pg/{payments}",
        SecretString=json.dumps({"username": postgres.user, "password": postgres.password}),
    )["ARN"]
    spec = importlib.util.spec_from_file_location("label_payments", SCRIPT)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    target = tmp_path / "labelled"

    def run(run_id: str) -> dict:
        argv = [
            *(str(SCRIPT), "--JOB_NAME", f"labelled_{payments}", "--JOB_RUN_ID", run_id),
            *("--payments_url", postgres.jdbc_url, "--payments_table", payments),
            *("--methods_url", postgres.jdbc_url, "--methods_table", methods),
            *("--source_secret_id", secret, "--target_path", target.as_uri()),
        ]
        return dict(script.main(argv, spark=spark))

    def output() -> list[tuple]:
        rows = spark.read.parquet(target.as_uri()).select("payment_id", "label").collect()
        return sorted(tuple(row) for row in rows)

    pay(postgres, payments, [(10, 1, at(0)), (11, 2, at(1))])
    first = run("lp_1")
    pay(postgres, payments, [(10, 2, at(2)), (12, 3, at(3))])
    second = run("lp_2")

    assert first["records_read"] == 2
    assert second["records_read"] == 3  # the two changed rows and the cursor's own row
    # a payment whose method is not in the lookup table keeps a null label
    assert output() == [(10, "transfer"), (11, "transfer"), (12, None)]
    assert store.get_watermark(f"labelled_{payments}", "payments")["watermarks"]["cursor"] == at(3)
