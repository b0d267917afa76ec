"""Glue job: incremental join of two partitioned sides into a Parquet path or an Iceberg table.

A side is a file dataset (parquet, json or csv; on ``s3://`` found by S3 discovery,
elsewhere by listing, each with its file bookmark) or an Iceberg table read by changelog
since the snapshot it last consumed. Every partition that changed on either side (plus
those left pending by an upstream) is recomputed from both sides' full data for that
partition, and exactly those output partitions are replaced: by the write-ahead publish
(``--target_format parquet``, ``--target_path``) or in one Iceberg snapshot
(``--target_format iceberg``, ``--target_table``). Both sides' states commit together.
Runs on AWS Glue (the library arrives through ``--extra-py-files``) and locally,
unchanged::

    python glue_scripts/incremental_join.py --JOB_NAME sales_join \\
        --left_path s3://lake/orders --right_path s3://lake/payments \\
        --left_format parquet --right_format json \\
        --join_keys order_id --join_type left --partition_by date,hour \\
        --target_path s3://lake/orders_payments \\
        --upstream_jobs left=orders_load,right=payments_load

Arguments and one run: ``docs/incremental-join.md``.
"""

import sys

from glue_incremental.join import main
from glue_incremental.run.context import run_script

if __name__ == "__main__":
    run_script(main, sys.argv)
