"""The shipped JDBC custom script ``glue_scripts/label_payments.py`` on PostgreSQL, run as
Terraform's custom kind calls it (``--<name>_url``, ``--<name>_table``, ``--source_secret_id``)."""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

LABEL_PAYMENTS = Path(__file__).resolve().parents[2] / "glue_scripts" / "label_payments.py"

PG_T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def shop_world(spark: Any, postgres: Any, tmp_path: Path) -> Iterator[Any]:
    """payments and payment_methods in PostgreSQL, and ``run(run_id)`` of label_payments on
    them as Terraform's custom kind calls it; ``output()`` the labelled target's rows."""
    suffix = uuid.uuid4().hex[:8]
    payments, methods = f"payments_{suffix}", f"payment_methods_{suffix}"
    postgres.execute(
        f"create table {payments} (payment_id bigint primary key, method_id bigint, "
        "updated_at timestamptz)"
    )
    postgres.execute(f"create table {methods} (method_id bigint primary key, label text)")
    postgres.execute(f"insert into {methods} values (1, 'card'), (2, 'transfer')")
    secret = postgres.credentials_secret(f"pg/{payments}")
    spec = importlib.util.spec_from_file_location("label_payments", LABEL_PAYMENTS)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    target = tmp_path / "labelled"

    class Shop:
        job = f"lp_{suffix}"

        def pay(self, *rows: tuple[int, int, int]) -> None:
            postgres.execute(
                f"insert into {payments} values (%s, %s, %s) on conflict (payment_id) do "
                "update set method_id = excluded.method_id, updated_at = excluded.updated_at",
                [(key, method, PG_T0 + timedelta(minutes=m)) for key, method, m in rows],
                many=True,
            )

        def relabel(self, method: int, label: str) -> None:
            postgres.execute(
                f"update {methods} set label = %s where method_id = %s", (label, method)
            )

        def labels(self) -> dict[int, str]:
            rows = postgres.execute(f"select method_id, label from {methods}")
            return dict(rows)

        def full_recompute(self) -> list[tuple]:
            labels = self.labels()
            rows = postgres.execute(f"select payment_id, method_id from {payments}")
            return sorted((key, labels.get(method)) for key, method in rows)

        def run(self, run_id: str) -> dict:
            argv = [
                *(str(LABEL_PAYMENTS), "--JOB_NAME", f"lp_{suffix}", "--JOB_RUN_ID", run_id),
                *("--payments_url", postgres.jdbc_url, "--payments_table", payments),
                *("--methods_url", postgres.jdbc_url, "--methods_table", methods),
                *("--source_secret_id", secret, "--target_path", target.as_uri()),
            ]
            return dict(script.main(argv, spark=spark))

        def output(self) -> list[tuple]:
            rows = spark.read.parquet(target.as_uri()).select("payment_id", "label").collect()
            return sorted(tuple(row) for row in rows)

    try:
        yield Shop()
    finally:
        postgres.execute(f"drop table {payments}")
        postgres.execute(f"drop table {methods}")
