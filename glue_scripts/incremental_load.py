"""Glue job: incremental load of a JDBC table or a file dataset into partitioned Parquet.

Runs on AWS Glue (the library arrives through ``--extra-py-files``) and locally,
unchanged::

    python glue_scripts/incremental_load.py --JOB_NAME orders_load \\
        --source file:///data/orders --source_format json \\
        --watermark_column updated_at --primary_key order_id \\
        --target_path file:///data/lake/orders --partition_by order_date

Arguments are documented in ``docs/load-job.md`` (``--help`` prints them).
"""

import sys

from glue_incremental.load.job import main
from glue_incremental.run.context import run_script

if __name__ == "__main__":
    run_script(main, sys.argv)
