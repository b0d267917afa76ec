"""Spark jobs named for the library's step that starts them, in Spark's UI and event log.

A job's description is a property of the thread that submits it: ``named`` sets it for a
block and puts back what was there, so a caller's own description (a job group, a bench's
label) returns after it. Threads started with ``InheritableThread`` (the side-by-side
writes) inherit it. Names read ``glue-incremental: <step>``; ``tests/benchmarks/profile.py``
groups a run's jobs and the driver's time between them by these names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

PREFIX = "glue-incremental: "
DESCRIPTION = "spark.job.description"


@contextmanager
def named(spark: SparkSession, step: str) -> Iterator[None]:
    """Every Spark job this thread starts in the block is described as ``step``."""
    context = spark.sparkContext
    previous = context.getLocalProperty(DESCRIPTION)
    context.setLocalProperty(DESCRIPTION, PREFIX + step)
    try:
        yield
    finally:
        context.setLocalProperty(DESCRIPTION, previous)  # type: ignore[arg-type]
