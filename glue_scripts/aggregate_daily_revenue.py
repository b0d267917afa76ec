"""Glue job: daily revenue per customer from ``orders``, recomputing only the days that changed.

A custom job on the library's public API (``glue_incremental.custom``): each run reads
the orders that arrived since its last commit, finds the days they fall in, reads those
days of ``orders`` whole (as of the files it consumed) and replaces exactly those days
of the output; its state commits on a clean exit only. Runs on AWS Glue and locally::

    python glue_scripts/aggregate_daily_revenue.py --JOB_NAME daily_revenue \\
        --orders_path s3://lake/orders --target_path s3://lake/daily_revenue \\
        --upstream_job orders_load

``orders`` is partitioned by ``day`` (``--day_column`` names another partition, such as
the platform's ``order_date``) and has ``customer_id`` and ``amount`` (cents as ``bigint``
by default; ``--amount_type decimal(12,2)`` reads currency amounts). The output,
partitioned by ``day`` (``--partition_by``) whatever the source's column, has ``customer_id``, ``revenue`` (the
amount's sum) and ``orders``. The API: ``docs/custom-jobs.md``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

from glue_incremental.args import ArgumentError, Option, choice
from glue_incremental.custom import Dataset, JobArguments, incremental_job, parquet

# What the script reads of an order (the day comes from the directories); amounts in cents
# unless --amount_type says otherwise.
ORDERS_SCHEMA = "customer_id BIGINT, amount {amount_type}"
AMOUNT_TYPE = re.compile(r"^(bigint|int|double|decimal\((\d{1,2}),(\d{1,2})\))$")
PARTITION_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def amount_type(name: str, value: str | None) -> str:
    """``bigint``, ``int``, ``double`` or ``decimal(p,s)`` (Spark's limit: s <= p <= 38)."""
    text = (value or "").strip().lower().replace(" ", "")
    match = AMOUNT_TYPE.match(text)
    if not match or (match.group(2) and not int(match.group(3)) <= int(match.group(2)) <= 38):
        raise ArgumentError(
            name, f"--{name} {value!r} is not bigint, int, double or decimal(p,s) with s <= p <= 38"
        )
    return text


def partition_column(name: str, value: str | None) -> str:
    """A column name, as in the source's ``<column>=<value>`` directories."""
    if not PARTITION_COLUMN.match(value or ""):
        raise ArgumentError(name, f"--{name} {value!r} is not a column name")
    return value or ""


# The script's arguments (Terraform's custom kind passes these; keep them stable).
ARGUMENTS = JobArguments(
    (
        Option("orders_path", "The orders dataset, partitioned by `day`.", required=True),
        Option("target_path", "The output Parquet path, partitioned by `day`.", required=True),
        Option(
            "orders_format",
            "`parquet`, `json` or `csv` (header row).",
            "parquet",
            choice("parquet", "json", "csv"),
        ),
        Option(
            "day_column",
            "The orders' day partition column (`order_date` on the platform's `orders`).",
            "day",
            partition_column,
        ),
        Option(
            "partition_by",
            "The output's day partition column (Terraform passes its target's partition).",
            "day",
            partition_column,
        ),
        Option(
            "amount_type",
            "The orders' `amount` type: `bigint` (cents), `int`, `double` or `decimal(p,s)`.",
            "bigint",
            amount_type,
        ),
        Option(
            "upstream_job",
            "The platform job writing `orders`: only what it committed is read.",
        ),
    )
)


def parse_arguments(argv: Sequence[str]) -> dict[str, Any]:
    """The script's typed arguments (no Spark, no AWS): what Terraform's contract test runs."""
    return ARGUMENTS.parse(argv)


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """One run; returns its summary line."""
    from pyspark.sql import functions as F

    argv = list(argv if argv is not None else sys.argv)
    args = parse_arguments(argv)
    orders = Dataset(
        args["orders_path"],
        partition_by=(args["day_column"],),
        format=args["orders_format"],
        schema=ORDERS_SCHEMA.format(amount_type=args["amount_type"]),
        upstream_job=args["upstream_job"],
    )
    day = args["partition_by"]
    daily = parquet(args["target_path"], partition_by=day)
    with incremental_job(
        argv, ARGUMENTS, sources={"orders": orders}, targets={"daily": daily}, spark=spark
    ) as job:
        days = job.affected_partitions("orders")
        rows = job.read_partitions("orders", days)
        # The output's partition is named for the target whatever the source calls it;
        # the values (and so the affected partitions) are the same.
        rows = rows.withColumnRenamed(args["day_column"], day)
        revenue = rows.groupBy(day, "customer_id").agg(
            F.sum("amount").alias("revenue"), F.count("*").alias("orders")
        )
        job.replace_partitions("daily", revenue, days)
    return job.summary


if __name__ == "__main__":
    from glue_incremental.custom import run_script

    run_script(main, sys.argv)
