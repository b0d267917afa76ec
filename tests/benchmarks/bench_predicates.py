"""5. Building the partition predicate for N affected partitions: Spark jobs and time.

Two "new data" tables (``partition1``, ``partition2``, ``value``; Parquet, like
the data a bookmarked read returns) together touch ``N`` partitions:
``N / predicate_second_level`` first-level values with ``predicate_second_level``
second-level values each; the first table covers the first three quarters of
them, the second the last three quarters.

- ``seed_001`` (the key in results.json): the per-value collect loop: one ``distinct().collect()``
  of ``partition1`` per table, then, for every first-level value, one
  ``where().select('partition2').distinct().collect()`` per table, and the
  predicate strings concatenated. Two copy-paste slips of the original are fixed
  (it selects ``partition2`` for table2's first level and rebuilds table2's
  list from table1's), because as written it drops partitions only table2
  touches; the job structure is unchanged.
- ``ours``: ``partitions.predicates.affected_partitions(t1, t2, columns=...)`` (one Spark
  action) and ``partitions.predicates.to_sql_predicate(..., max_length=None)``.

Jobs are counted with ``setJobGroup`` + ``statusTracker().getJobIdsForGroup``.
"""

from __future__ import annotations

import math
from typing import Any

from glue_incremental.partitions.predicates import affected_partitions, to_sql_predicate

from tests.benchmarks.common import Context, SparkJobs, Timer
from tests.harness.collect_loop import collect_loop_predicates

COLUMNS = ["partition1", "partition2"]


def _tables(ctx: Context, partitions: int) -> tuple[Any, Any]:
    """Write and read back the two new-data tables touching ``partitions`` partitions."""
    from pyspark.sql import functions as F

    second = ctx.scale.predicate_second_level
    base = ctx.section_dir(f"predicates/{partitions}")
    quarter = partitions // 4
    frames = []
    for name, first, last in (("t1", 0, partitions - quarter), ("t2", quarter, partitions)):
        rows = ctx.spark.range(first, last, numPartitions=2).select(
            F.date_format(
                F.date_add(F.lit("2024-01-01").cast("date"), (F.col("id") / second).cast("int")),
                "yyyy-MM-dd",
            ).alias("partition1"),
            F.format_string("h%03d", F.col("id") % second).alias("partition2"),
            F.col("id").alias("value"),
        )
        path = (base / name).as_uri()
        rows.write.mode("overwrite").parquet(path)
        frames.append(ctx.spark.read.parquet(path))
    return frames[0], frames[1]


def bench_partitions(ctx: Context, partitions: int) -> dict[str, Any]:
    table1, table2 = _tables(ctx, partitions)
    with SparkJobs(ctx.spark, "seed001") as seed_jobs, Timer() as seed_timer:
        seed_t1, _, seed_visited = collect_loop_predicates(table1, table2, as_written=False)
    with SparkJobs(ctx.spark, "ours") as our_jobs, Timer() as our_timer:
        found = affected_partitions(table1, table2, columns=COLUMNS)
        predicate = to_sql_predicate(found, COLUMNS, max_length=None)
    first_level = math.ceil(partitions / ctx.scale.predicate_second_level)
    ctx.log(
        f"predicates: {partitions} partitions: per-value loop {seed_jobs.count} jobs "
        f"{seed_timer.seconds:.1f}s, ours {our_jobs.count} jobs {our_timer.seconds:.2f}s"
    )
    return {
        "partitions": partitions,
        "first_level_values": first_level,
        "seed_001": {
            "spark_jobs": seed_jobs.count,
            "collects": 2 + 2 * first_level,
            "seconds": round(seed_timer.seconds, 3),
            "predicate_chars": len(seed_t1),
            "partitions": len(seed_visited),
        },
        "ours": {
            "spark_jobs": our_jobs.count,
            "collects": 1,
            "seconds": round(our_timer.seconds, 3),
            "predicate_chars": len(predicate),
            "partitions": len(found),
        },
        "same_partitions": set(found) == seed_visited and len(found) == partitions,
        "speedup": round(seed_timer.seconds / our_timer.seconds, 2) if our_timer.seconds else None,
    }


def run(ctx: Context) -> dict[str, Any]:
    return {
        "description": (
            "Building the pushdown predicate for N affected partitions (two levels, "
            f"{ctx.scale.predicate_second_level} second-level values per first-level value): "
            "a loop collecting each first-level value's partitions vs predicates.affected_partitions + to_sql_predicate"
        ),
        "method": (
            "Jobs counted with setJobGroup + statusTracker().getJobIdsForGroup. The seed's "
            "loop is re-implemented as written (2 collects + 2 per first-level value), with "
            "its two copy-paste slips fixed (table2's first level selected 'partition2' and "
            "its list was rebuilt from table1's), which would otherwise drop partitions only "
            "table2 touches. Both read the same two Parquet tables."
        ),
        "points": [bench_partitions(ctx, n) for n in sorted(ctx.scale.predicate_partitions)],
    }
