"""The Spark writes a publish stages: the data, then its side files side by side.

``stage_data`` writes the rows (one file per partition) and counts them while writing;
rows read from a persisted merge are written in one Spark job (no adaptive execution).
The side files (deliveries, the key index segment, tombstones) only read the rows the
data write has just cached (``persisted_by_partition``: already grouped by partition, so
one file per partition with no shuffle), so ``side_by_side`` runs them as concurrent
Spark jobs: one job's planning and commit, and a one-task index write, no longer leave
the cores idle.
It returns only once every write has ended, and raises the first failure then, so no
write is still running when the caller cleans up or publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from pyspark import InheritableThread
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from glue_incremental.io.jvm_calls import observed
from glue_incremental.io.spark_listing import session_conf
from glue_incremental.io.spark_steps import named

_ADAPTIVE_EXECUTION = "spark.sql.adaptive.enabled"


def stage_data(
    spark: SparkSession,
    rows: DataFrame,
    stage_uri: str,
    partition_by: Sequence[str],
    *,
    persisted: bool = False,
    grouped: bool = False,
) -> int:
    """Write ``rows`` under ``stage_uri`` (one file per partition); the rows written.

    ``persisted``: ``rows`` only reads a persisted frame (columns of it): the write is one
    Spark job (``_one_job``) besides those that fill the cache. ``grouped``: ``rows`` is
    ``persisted_by_partition``'s (persisted, and already grouped by partition).
    """
    written_rows = Observation()
    rows = rows if grouped else by_partition(spark, rows, partition_by)
    writer = rows.observe(written_rows, F.count(F.lit(1)).alias("rows")).write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    one_job = _one_job(spark) if persisted or grouped else nullcontext()
    with named(spark, "merge and stage the data"), one_job:
        writer.parquet(stage_uri)
    return int(observed(written_rows, "rows"))  # counted while writing: no second read


def by_partition(spark: SparkSession, rows: DataFrame, partition_by: Sequence[str]) -> DataFrame:
    """``rows`` with all of a partition's rows in one task: written, one file per partition.

    Not one file per task and partition: 4x fewer files to write, publish and read, for the
    data and for each side file written from the same frame. The task count is explicit so
    AQE cannot coalesce a small shuffle into one task writing every partition alone.
    """
    if not partition_by:
        return rows
    tasks = int(spark.conf.get("spark.sql.shuffle.partitions") or 1)
    return rows.repartition(tasks, *[_col(name) for name in partition_by])


def persisted_by_partition(
    spark: SparkSession, rows: DataFrame, partition_by: Sequence[str]
) -> DataFrame:
    """``rows`` grouped as ``by_partition`` groups them, persisted: the data and each side
    file write it with no shuffle of their own.

    Persisted without adaptive execution, so the cache is filled inside the data write's one
    job: an adaptive cached plan runs each of its shuffles (the merge's, this grouping) as a
    job of its own. Its shuffles keep ``spark.sql.shuffle.partitions`` tasks (not coalesced);
    the grouping's count is explicit anyway (``by_partition``).
    """
    with _one_job(spark):
        return by_partition(spark, rows, partition_by).persist()


def _one_job(spark: SparkSession) -> AbstractContextManager[None]:
    """Adaptive execution off for a write over a persisted frame: it would run the cache's
    read and the repartition's shuffle as jobs of their own (three jobs, not one) and has
    nothing to adapt there. The persisted plan (its joins and the merge's shuffle) was
    planned when it was persisted, adaptively, and is filled as it was planned; the
    repartition's task count is explicit, so there is nothing to coalesce."""
    return session_conf(spark, {_ADAPTIVE_EXECUTION: "false"})


def stage_deliveries(
    spark: SparkSession,
    rows: DataFrame,
    stage_uri: str,
    columns: Sequence[str],
    partition_by: Sequence[str],
    grouped: bool = False,
) -> None:
    """Write ``columns`` of ``rows`` (key, partition, delivery) under ``stage_uri``, one
    file per partition, in one Spark job: ``rows`` only reads the persisted merge, and only
    these few columns are shuffled (none when ``grouped``: ``persisted_by_partition``)."""
    narrow = rows.select(*[_col(name) for name in columns])
    narrow = narrow if grouped else by_partition(spark, narrow, partition_by)
    writer = narrow.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    with named(spark, "stage the deliveries"), _one_job(spark):
        writer.parquet(stage_uri)


T = TypeVar("T")


def side_by_side(writes: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``writes`` at once (one thread each); their results, once all have ended.

    The first failure is raised after every write has ended. Threads inherit the
    caller's Spark job properties (``InheritableThread``), so a job group set by the
    caller still covers (and can cancel) these jobs.
    """
    if len(writes) <= 1:
        return [write() for write in writes]
    results: dict[int, T] = {}
    failures: list[BaseException | None] = [None] * len(writes)

    def run(index: int) -> None:
        try:
            results[index] = writes[index]()
        except BaseException as failure:  # re-raised in the caller's thread below
            failures[index] = failure

    threads = [InheritableThread(target=run, args=(index,)) for index in range(len(writes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for failure in failures:
        if failure is not None:
            raise failure
    return [results[index] for index in range(len(writes))]


def _col(name: str) -> Column:
    return F.col(f"`{name}`")
