"""The orders-shaped PostgreSQL table the JDBC load tests read, and a load config on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from glue_incremental.load.job import LoadConfig

from tests.harness.postgres import Postgres


@contextmanager
def orders_table(postgres: Postgres, prefix: str = "orders") -> Iterator[str]:
    """A fresh ``(id, part, updated_at, value)`` table, dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    postgres.execute(
        f"create table {name} (id bigint primary key, part text not null, "
        "updated_at timestamptz, value text)"
    )
    try:
        yield name
    finally:
        postgres.execute(f"drop table {name}")


def upsert(postgres: Postgres, table: str, rows: Sequence[tuple]) -> None:
    """Insert or update ``(id, part, updated_at, value)`` rows by id."""
    postgres.execute(
        f"insert into {table} (id, part, updated_at, value) values (%s, %s, %s, %s) "
        "on conflict (id) do update set part = excluded.part, updated_at = excluded.updated_at, "
        "value = excluded.value",
        rows,
        many=True,
    )


def jdbc_config(postgres: Postgres, table: str, tmp_path: Path, **overrides: Any) -> LoadConfig:
    """A load of ``table`` by ``updated_at`` into Parquet partitioned by ``part``."""
    options: dict[str, Any] = {
        "source": postgres.jdbc_url,
        "source_table": table,
        "source_user": postgres.user,
        "source_password": postgres.password,
        "watermark_column": "updated_at",
        "primary_key": ("id",),
        "target_path": (tmp_path / "target").as_uri(),
        "partition_by": ("part",),
        "lookback": timedelta(minutes=30),
    }
    options.update(overrides)
    return LoadConfig(**options)
