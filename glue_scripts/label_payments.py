"""Glue job: payments read from a database by their watermark, labelled with their method.

A custom job on the library's public API (``glue_incremental.custom``) with two JDBC
sources: ``payments`` read incrementally by ``updated_at`` (one state slot; first run:
the whole table) and ``methods``, a small lookup table read whole on every run. Each run
merges the new payments, with their method's ``label``, into a Parquet target by
``payment_id``; its state commits on a clean exit only. A payment is labelled as of the
run that read it: a relabelled method reaches the payments that change afterwards, and
every payment after ``watermarks reset`` (the next run reads and replaces all). Runs on
AWS Glue and locally::

    python glue_scripts/label_payments.py --JOB_NAME payments_labelled \\
        --payments_url jdbc:postgresql://db:5432/shop --payments_table public.payments \\
        --methods_url jdbc:postgresql://db:5432/shop --methods_table public.payment_methods \\
        --source_secret_id arn:aws:secretsmanager:...:secret:shop-db \\
        --target_path s3://lake/payments_labelled/

``payments`` has ``payment_id``, ``method_id`` and ``updated_at``; ``methods`` has
``method_id`` and ``label``. Terraform's custom kind passes these arguments from the
pipeline's ``sources`` (``docs/custom-jobs.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from glue_incremental.args import list_of_names
from glue_incremental.custom import (
    JobArguments,
    Option,
    incremental_job,
    jdbc_options,
    jdbc_reference,
    jdbc_table,
    parquet,
)

# The script's arguments (Terraform's custom kind passes these; keep them stable).
ARGUMENTS = JobArguments(
    (
        *jdbc_options("payments", "methods"),
        Option("target_path", "The output Parquet path.", required=True),
        Option(
            "partition_by",
            "The output's partition columns (Terraform passes its target's partitions).",
            "",
            list_of_names,
        ),
    )
)


def parse_arguments(argv: Sequence[str]) -> dict[str, Any]:
    """The script's typed arguments (no Spark, no AWS): what Terraform's contract test runs."""
    return ARGUMENTS.parse(argv)


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> dict:
    """One run; returns its summary line."""
    argv = list(argv if argv is not None else sys.argv)
    args = parse_arguments(argv)
    sources = {
        "payments": jdbc_table(
            args, "payments", watermark_column="updated_at", primary_key="payment_id"
        ),
        "methods": jdbc_reference(args, "methods"),
    }
    labelled = parquet(args["target_path"], partition_by=args["partition_by"])
    with incremental_job(
        argv, ARGUMENTS, sources=sources, targets={"labelled": labelled}, spark=spark
    ) as job:
        payments = job.increment("payments")
        if payments is not None:
            methods = job.read_whole("methods").select("method_id", "label")
            rows = payments.join(methods, "method_id", "left")
            job.write("labelled", rows, keys=["payment_id"], order_by="updated_at")
    return job.summary


if __name__ == "__main__":
    from glue_incremental.custom import run_script

    run_script(main, sys.argv)
