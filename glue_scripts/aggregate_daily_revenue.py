"""Glue job: daily revenue per customer from ``orders``, recomputing only the days that changed.

A custom job on the library's public API (``glue_incremental.custom``): each run reads
the orders that arrived since its last commit, finds the days they fall in, reads those
days of ``orders`` whole (as of the files it consumed) and replaces exactly those days
of the output; its state commits on a clean exit only. Runs on AWS Glue and locally::

    python glue_scripts/aggregate_daily_revenue.py --JOB_NAME daily_revenue \\
        --orders_path s3://lake/orders --target_path s3://lake/daily_revenue \\
        --upstream_job orders_load

``orders`` is partitioned by ``day`` and has ``customer_id`` and ``amount`` (cents); the output,
partitioned by ``day``, has ``customer_id``, ``revenue`` and ``orders``. The API:
``docs/custom-jobs.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from glue_incremental.args import Option, choice
from glue_incremental.custom import Dataset, JobArguments, incremental_job, parquet

# What the script reads of an order (``day`` comes from the directories); amounts in cents.
ORDERS_SCHEMA = "customer_id BIGINT, amount BIGINT"

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
        partition_by=("day",),
        format=args["orders_format"],
        schema=ORDERS_SCHEMA,
        upstream_job=args["upstream_job"],
    )
    daily = parquet(args["target_path"], partition_by="day")
    with incremental_job(
        argv, ARGUMENTS, sources={"orders": orders}, targets={"daily": daily}, spark=spark
    ) as job:
        days = job.affected_partitions("orders")
        rows = job.read_partitions("orders", days)
        revenue = rows.groupBy("day", "customer_id").agg(
            F.sum("amount").alias("revenue"), F.count("*").alias("orders")
        )
        job.replace_partitions("daily", revenue, days)
    return job.summary


if __name__ == "__main__":
    from glue_incremental.runtime import run_script

    run_script(main, sys.argv)
