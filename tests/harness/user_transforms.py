"""Transforms a team might ship (``--transform tests.harness.user_transforms:NAME``): good and bad."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

# Set by a test to the target a misbehaving transform reads (a transform takes only the rows).
TARGET_PATH = ""


def mask_value(rows: DataFrame) -> DataFrame:
    """The good one: masks ``value``, adds a derived column, drops nothing the job needs."""
    return rows.withColumn("value", F.upper(F.substring("value", 1, 1))).withColumn(
        "value_length", F.length("value")
    )


def mask_value_row(row: dict) -> dict:
    """``mask_value`` on one plain row: what the reference applies to a full refresh."""
    value = row["value"]
    return {**row, "value": value[:1].upper(), "value_length": len(value[:1])}


def drops_key(rows: DataFrame) -> DataFrame:
    return rows.drop("id")


def watermark_as_text(rows: DataFrame) -> DataFrame:
    return rows.withColumn("updated", F.col("updated").cast("string"))


def returns_none(rows: DataFrame) -> None:
    rows.count()


def raises(rows: DataFrame) -> DataFrame:
    raise ValueError("unknown customer tier 'gold'\nsecond line the report leaves out")


def reads_target(rows: DataFrame) -> DataFrame:
    loaded = rows.sparkSession.read.parquet(TARGET_PATH).select("id").distinct()
    return rows.join(loaded, "id", "left_anti")


not_callable = 42


def upper_label(rows: DataFrame) -> DataFrame:
    """A join output's transform: the right side's label in capitals."""
    return rows.withColumn("label", F.upper("label"))


def shifts_watermark(rows: DataFrame) -> DataFrame:
    """Breaks the contract by value, not by type: the watermark moves a day later."""
    return rows.withColumn("updated_at", F.col("updated_at") + F.expr("INTERVAL 1 DAY"))


def shifts_key(rows: DataFrame) -> DataFrame:
    """Breaks the contract by value, not by type: every key moves by 100."""
    return rows.withColumn("id", F.col("id") + F.lit(100))


def drops_op(rows: DataFrame) -> DataFrame:
    """Drops the column a job's ``--delete_marker op=D`` reads (not a protected column)."""
    return rows.drop("op")


def drops_marked_rows(rows: DataFrame) -> DataFrame:
    """Keeps the rows whose ``value`` is not ``drop``: a whole file of them is an empty batch."""
    return rows.where(F.col("value").isNull() | (F.col("value") != "drop"))


def drops_test_accounts(rows: DataFrame) -> DataFrame:
    """A filter: test accounts (an ``email`` at ``example.test``) never reach the target."""
    return rows.where(~F.coalesce(F.col("email").endswith("@example.test"), F.lit(False)))


def is_test_account(row: dict) -> bool:
    """``drops_test_accounts``'s decision on one plain row (true: the row is dropped)."""
    return (row.get("email") or "").endswith("@example.test")


def drops_s_values(rows: DataFrame) -> DataFrame:
    """A filter and a map: drops the versions whose ``value`` starts with ``s``, masks the rest."""
    return mask_value(rows.where(~F.col("value").startswith("s")))


def drops_s_values_row(row: dict) -> dict | None:
    """``drops_s_values`` on one plain row: ``None`` where it drops the row."""
    return None if row["value"].startswith("s") else mask_value_row(row)


def drops_zero_amounts(rows: DataFrame) -> DataFrame:
    """A filter on the orders chain: an order of amount 0 is a cancelled one, never loaded."""
    return rows.where(F.col("amount") != 0)
