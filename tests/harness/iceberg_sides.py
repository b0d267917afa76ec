"""A join (or a custom job) whose left side is an Iceberg table: its config, the table, its rows."""

from __future__ import annotations

from pathlib import Path

from glue_incremental.join import JoinJobConfig, JoinSpec
from glue_incremental.targets.iceberg import writer as iceberg_writer

from tests.harness.iceberg import unique_table

ICEBERG_LEFT = "id bigint, value string, amount bigint, date string"


def iceberg_left_join(tmp: Path, join_type: str = "inner") -> JoinJobConfig:
    """A join whose left side is an Iceberg table (created empty), right side JSON files."""
    return JoinJobConfig(
        left_path=unique_table("side"),
        right_path=(tmp / "right").as_uri(),
        left_format="iceberg",
        right_format="json",
        spec=JoinSpec(("id",), join_type, ("date",)),
        target_path=(tmp / "target").as_uri(),
    )


def create_left(spark, config: JoinJobConfig) -> iceberg_writer.IcebergTarget:
    target = config.side_target("left")
    spark.sql(f"CREATE TABLE {target.quoted} ({ICEBERG_LEFT}) USING iceberg")
    return target


def insert_left(spark, target: iceberg_writer.IcebergTarget, rows: list[tuple]) -> None:
    values = ", ".join(f"({k}, '{v}', {a}, '{d}')" for d, k, v, a in rows)
    spark.sql(f"INSERT INTO {target.quoted} VALUES {values}")
