"""Glue job: incremental join of two partitioned datasets into a partitioned Parquet target.

Each side is read incrementally with its own file bookmark; every partition
that received new rows on either side is recomputed from both sides' full
data for that partition, and exactly those output partitions are replaced.
Runs on AWS Glue (the library arrives through ``--extra-py-files``) and
locally, unchanged::

    python glue_scripts/incremental_join.py --JOB_NAME sales_join \\
        --left_path s3://lake/orders --right_path s3://lake/payments \\
        --left_format parquet --right_format json \\
        --join_keys order_id --join_type left --partition_by date,hour \\
        --target_path s3://lake/orders_payments \\
        --watermarks_table glue-watermarks \\
        --upstream_jobs left=orders_load,right=payments_load

Arguments (``glue_incremental.join``):

- ``--left_path``/``--right_path``: the two datasets, ``key=value`` partition
  directories named by ``--partition_by`` under each.
- ``--left_format``/``--right_format``: parquet (default), json or csv (header row).
- ``--join_keys``: comma list; the partition columns are always matched too.
- ``--join_type``: inner (default), left or full.
- ``--partition_by``: comma list, the same on both sides and in the output.
- ``--target_path``: the output; only affected partitions are rewritten.
- ``--watermarks_table``: the watermark store (one slot per side).
- ``--upstream_jobs``: optional ``side=job`` comma list, for sides written by
  jobs of this platform: only what those jobs committed is read.
- ``--partition_types``: optional ``column:type`` list (string, int, bigint,
  date): partition values that are not valid for their type stop the run
  before anything is written.
- ``--left_schema``/``--right_schema``: optional DDL schemas (partition
  columns as strings); without one, a side's schema comes from its files.
- ``--lookback``: the file bookmark's band (default 900 seconds).
"""

import sys

from glue_incremental.join import main
from glue_incremental.runtime import run_script

if __name__ == "__main__":
    run_script(main, sys.argv)
