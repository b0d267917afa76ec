"""8. The aggregation script (custom job API) with a small share of days affected vs a full
recompute.

``orders`` (customer_id, amount), partitioned by ``day=YYYY-MM-DD`` with
``aggregate_rows_per_partition`` rows per day, written with pyarrow and stamped two days
old. ``glue_scripts/aggregate_daily_revenue.py`` (daily revenue per customer):

- first run over the history: the primed output;
- ``incremental``: ``aggregate_affected_fraction`` of the days get one new file, then one
  run; repeated ``aggregate_repeats`` times with fresh days, median reported;
- ``full recompute``: the same script with bookmarks disabled into a second target, and
  plain Spark (read everything, aggregate, overwrite) as the lower bound.

Output check: the incremental output equals the job's full recompute (``exceptAll``
both ways); the days no run touched are byte-identical to what the first run wrote.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from tests.benchmarks.common import Context, measured, median, ratio, without_memory
from tests.harness.aggregates import script_module
from tests.harness.loads import partition_file_snapshot
from tests.harness.targets import partition_values_as_strings

DAY0 = date(2024, 1, 1)
HISTORY_AGE_SECONDS = 2 * 86_400
CUSTOMERS = 50


def _day(index: int) -> str:
    return (DAY0 + timedelta(days=index)).isoformat()


class Orders:
    """Parquet files of orders under ``root/day=<d>/``."""

    def __init__(self, root: Path, days: int, rows: int) -> None:
        self.root, self.days, self.rows, self.next_file = root, days, rows, 0

    def write(self, day: int, count: int, mtime: float) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        seed = self.next_file
        table = pa.table(
            {
                "customer_id": pa.array([(seed + i) % CUSTOMERS for i in range(count)], pa.int64()),
                "amount": pa.array([(seed * 7 + i) % 1000 for i in range(count)], pa.int64()),
            }
        )
        directory = self.root / f"day={_day(day)}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{self.next_file:06d}.parquet"
        self.next_file += 1
        pq.write_table(table, path)
        os.utime(path, (mtime, mtime))

    def write_history(self, now: float) -> None:
        old = now - HISTORY_AGE_SECONDS
        for day in range(self.days):
            self.write(day, self.rows, old)
        for directory in [*self.root.iterdir(), self.root]:
            os.utime(directory, (old, old))


def _argv(ctx: Context, job: str, orders: Orders, target: Path, *extra: str) -> list[str]:
    return [
        "aggregate_daily_revenue.py",
        *("--JOB_NAME", job, "--orders_path", orders.root.as_uri()),
        *("--target_path", target.as_uri(), "--watermarks_table", ctx.watermarks_table),
        *extra,
    ]


def _run_job(ctx: Context, argv: list[str], label: str) -> dict:
    main = script_module().main
    figures = measured(ctx, label, lambda: main(argv, spark=ctx.spark))
    summary = figures.pop("result")
    source = (summary.get("sources") or {}).get("orders") or {}
    figures.update(
        input_bytes=figures["fs_bytes_read"],
        affected_partitions=source.get("affected_partitions"),
        files_read=source.get("files_read"),
        records_read=summary.get("records_read"),
        partitions_written=len(summary.get("partitions_written") or []),
        committed=summary.get("committed"),
    )
    return figures


def _plain_recompute(ctx: Context, orders: Orders, target: Path) -> dict:
    from pyspark.sql import functions as F

    def action() -> None:
        rows = ctx.spark.read.parquet(orders.root.as_uri())
        revenue = rows.groupBy("day", "customer_id").agg(
            F.sum("amount").alias("revenue"), F.count("*").alias("orders")
        )
        revenue.write.mode("overwrite").partitionBy("day").parquet(target.as_uri())

    figures = measured(ctx, "aggregate-plain", action)
    figures.pop("result")
    figures["input_bytes"] = figures["fs_bytes_read"]
    return figures


def _compare(ctx: Context, incremental: Path, full: Path, changed: set[str], before: dict) -> dict:
    with partition_values_as_strings(ctx.spark):
        ours = ctx.spark.read.parquet(incremental.as_uri()).select("day", "customer_id", "revenue")
        theirs = ctx.spark.read.parquet(full.as_uri()).select("day", "customer_id", "revenue")
        only_ours, only_theirs = ours.exceptAll(theirs).count(), theirs.exceptAll(ours).count()
        rows = ours.count()
    after = partition_file_snapshot(incremental)

    def untouched(snapshot: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        return {
            path: entry
            for path, entry in snapshot.items()
            if path.split("/", 1)[0].removeprefix("day=") not in changed
        }

    return {
        "rows": rows,
        "rows_only_in_incremental": only_ours,
        "rows_only_in_full_recompute": only_theirs,
        "untouched_files": len(untouched(before)),
        "untouched_byte_identical": untouched(before) == untouched(after),
    }


def bench_size(ctx: Context, days: int, *, seed: int) -> dict[str, Any]:
    scale = ctx.scale
    base = ctx.section_dir(f"aggregate/{days}")
    orders = Orders(base / "orders", days, scale.aggregate_rows_per_partition)
    orders.write_history(time.time())
    job, target, full_target = f"bench_aggregate_{days}", base / "daily", base / "daily_full"
    first = _run_job(ctx, _argv(ctx, job, orders, target), "aggregate-first")
    before = partition_file_snapshot(target)
    affected = max(1, round(days * scale.aggregate_affected_fraction))
    chooser = random.Random(seed)
    runs, changed = [], set()
    for _ in range(scale.aggregate_repeats):
        chosen = sorted(chooser.sample(range(days), affected))
        changed.update(_day(index) for index in chosen)
        for index in chosen:
            orders.write(index, max(1, orders.rows // 10), time.time() - 2.0)
        runs.append(_run_job(ctx, _argv(ctx, job, orders, target), "aggregate-incremental"))
    disabled = ("--job-bookmark-option", "job-bookmark-disable")
    full = _run_job(ctx, _argv(ctx, job, orders, full_target, *disabled), "aggregate-full")
    plain = _plain_recompute(ctx, orders, base / "daily_plain")
    check = _compare(ctx, target, full_target, changed, before)
    incremental_seconds = median([run["seconds"] for run in runs])
    full_seconds = min(full["seconds"], plain["seconds"])
    ctx.log(
        f"aggregate: {days} days: first {first['seconds']:.1f}s, incremental "
        f"{incremental_seconds:.2f}s, full job {full['seconds']:.1f}s, plain {plain['seconds']:.1f}s"
    )
    shutil.rmtree(base, ignore_errors=True)
    return {
        "partitions": days,
        "rows_per_partition": orders.rows,
        "affected_partitions": affected,
        "first_run": without_memory(first),
        "incremental": {
            "seconds": round(incremental_seconds, 3),
            "input_bytes": median([run["input_bytes"] for run in runs]),
            "runs": [without_memory(run) for run in runs],
        },
        "full": {
            "seconds": full_seconds,
            "job_bookmark_disabled": without_memory(full),
            "plain_spark": without_memory(plain),
        },
        "output_check": check,
        "output_identical": check["rows_only_in_incremental"] == 0
        and check["rows_only_in_full_recompute"] == 0
        and check["rows"] > 0
        and check["untouched_byte_identical"],
        "summary": {
            "incremental_seconds": round(incremental_seconds, 3),
            "full_seconds": full_seconds,
            "speedup": round(ratio(full_seconds, incremental_seconds) or 0, 2),
            "speedup_vs_job": round(ratio(full["seconds"], incremental_seconds) or 0, 2),
        },
    }


def run(ctx: Context) -> dict[str, Any]:
    scale = ctx.scale
    return {
        "description": (
            "glue_scripts/aggregate_daily_revenue.py: daily revenue per customer from orders "
            f"partitioned by day, {scale.aggregate_rows_per_partition:,} rows per day; "
            f"{scale.aggregate_affected_fraction:.0%} of the days get new orders; incremental "
            f"run (median of {scale.aggregate_repeats}) vs full recompute"
        ),
        "method": (
            "Full recompute = the faster of the script with bookmarks disabled and plain Spark "
            "(read all orders, aggregate, overwrite)."
        ),
        "points": [
            bench_size(ctx, n, seed=index)
            for index, n in enumerate(sorted(scale.aggregate_partitions))
        ],
    }
