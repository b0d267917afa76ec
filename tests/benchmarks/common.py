"""Measuring instruments shared by the benchmark sections.

Everything here observes; nothing changes what the measured code does:

- ``SparkJobs``: Spark jobs launched inside a block (``setJobGroup`` +
  ``statusTracker().getJobIdsForGroup``).
- ``IoCounters``: bytes the JVM read through Hadoop's local file system and
  files Spark's file index discovered (``HiveCatalogMetrics``), as deltas.
- ``MemorySampler``: peak JVM heap used (``MemoryMXBean``) and peak RSS of the
  Python driver process, sampled in a background thread.
- ``RequestCounter``: HTTP requests a boto3 client sends (``before-send`` hook).
- ``Py4jCalls`` (``tests/harness/py4j_calls.py``): the driver's py4j round trips by kind
  and the Hadoop file systems the library opens.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.harness.py4j_calls import Py4jCalls

_group_ids = itertools.count()


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Swallow what the jobs print (one JSON summary line per run) during a measurement."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield buffer


class SparkJobs:
    """Counts the Spark jobs started by this thread inside the ``with`` block."""

    def __init__(self, spark: Any, label: str) -> None:
        self.spark = spark
        self.group = f"bench-{label}-{next(_group_ids)}"
        self.count: int | None = None

    def __enter__(self) -> SparkJobs:
        self.spark.sparkContext.setJobGroup(self.group, self.group)
        return self

    def __exit__(self, *exc_info: object) -> None:
        context = self.spark.sparkContext
        self.count = len(context.statusTracker().getJobIdsForGroup(self.group))
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)


@dataclass(frozen=True)
class IoSnapshot:
    fs_bytes_read: int
    files_discovered: int
    parallel_listing_jobs: int


class IoCounters:
    """JVM-wide I/O counters as deltas over a ``with`` block.

    ``fs_bytes_read``: bytes read through Hadoop's ``file:`` file system by the
    driver and the (local-mode, same-JVM) executors: sources, targets,
    checkpoints and Parquet footers alike. ``files_discovered``: files Spark's
    ``InMemoryFileIndex`` listed (``HiveCatalogMetrics.filesDiscovered``); the
    project's own listing (``sources.files``) goes straight to the Hadoop API
    and is reported by the plan instead.
    """

    def __init__(self, spark: Any) -> None:
        self._jvm = spark._jvm
        self.delta: IoSnapshot | None = None

    def snapshot(self) -> IoSnapshot:
        statistics = self._jvm.org.apache.hadoop.fs.FileSystem.getGlobalStorageStatistics().get(
            "file"
        )
        read = int(statistics.getLong("bytesRead")) if statistics is not None else 0
        metrics = self._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics
        return IoSnapshot(
            fs_bytes_read=read,
            files_discovered=int(metrics.METRIC_FILES_DISCOVERED().getCount()),
            parallel_listing_jobs=int(metrics.METRIC_PARALLEL_LISTING_JOB_COUNT().getCount()),
        )

    def __enter__(self) -> IoCounters:
        self._before = self.snapshot()
        return self

    def __exit__(self, *exc_info: object) -> None:
        after = self.snapshot()
        self.delta = IoSnapshot(
            after.fs_bytes_read - self._before.fs_bytes_read,
            after.files_discovered - self._before.files_discovered,
            after.parallel_listing_jobs - self._before.parallel_listing_jobs,
        )


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class MemoryPeak:
    jvm_heap_baseline_bytes: int = 0
    jvm_heap_peak_bytes: int = 0
    python_rss_baseline_bytes: int = 0
    python_rss_peak_bytes: int = 0
    samples: int = 0
    interval_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        mib = 1024 * 1024
        return {
            "method": (
                "sampled in a background thread every "
                f"{self.interval_seconds * 1000:.0f} ms: JVM heap used "
                "(MemoryMXBean.getHeapMemoryUsage().getUsed(), driver JVM = driver + local "
                "executors) and the Python driver's RSS (/proc/self/statm); baselines taken "
                "after System.gc() just before the run"
            ),
            "jvm_heap_peak_mib": round(self.jvm_heap_peak_bytes / mib, 1),
            "jvm_heap_baseline_mib": round(self.jvm_heap_baseline_bytes / mib, 1),
            "jvm_heap_growth_mib": round(
                (self.jvm_heap_peak_bytes - self.jvm_heap_baseline_bytes) / mib, 1
            ),
            "python_rss_peak_mib": round(self.python_rss_peak_bytes / mib, 1),
            "python_rss_growth_mib": round(
                (self.python_rss_peak_bytes - self.python_rss_baseline_bytes) / mib, 1
            ),
            "samples": self.samples,
        }


class MemorySampler:
    """Peak JVM heap and Python RSS while the ``with`` block runs (see ``MemoryPeak``)."""

    def __init__(self, spark: Any, *, interval: float = 0.1, enabled: bool = True) -> None:
        self._jvm = spark._jvm
        self.interval = interval
        self.enabled = enabled
        self.peak = MemoryPeak(interval_seconds=interval)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _heap_used(self) -> int:
        bean = self._jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
        return int(bean.getHeapMemoryUsage().getUsed())

    def _sample(self) -> None:
        heap, rss = self._heap_used(), _rss_bytes()
        self.peak.jvm_heap_peak_bytes = max(self.peak.jvm_heap_peak_bytes, heap)
        self.peak.python_rss_peak_bytes = max(self.peak.python_rss_peak_bytes, rss)
        self.peak.samples += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(Exception):  # the JVM may be busy; a missed sample is fine
                self._sample()

    def __enter__(self) -> MemorySampler:
        if not self.enabled:
            return self
        self._jvm.java.lang.System.gc()
        self.peak.jvm_heap_baseline_bytes = self._heap_used()
        self.peak.python_rss_baseline_bytes = _rss_bytes()
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="bench-memory", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.enabled or self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=10)
        self._sample()


class RequestCounter:
    """Counts the HTTP requests (attempts included) a boto3 client sends, by operation."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.by_operation: dict[str, int] = {}
        self._lock = threading.Lock()
        service = client.meta.service_model.service_name
        client.meta.events.register(f"before-send.{service}", self._count)

    def _count(self, event_name: str = "", **kwargs: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1] or "unknown"
        with self._lock:
            self.by_operation[operation] = self.by_operation.get(operation, 0) + 1

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.by_operation.values())

    @contextlib.contextmanager
    def measure(self) -> Iterator[dict[str, int]]:
        """Yields a dict that holds, after the block, the requests sent inside it."""
        with self._lock:
            before = dict(self.by_operation)
        result: dict[str, int] = {}
        yield result
        with self._lock:
            for operation, count in self.by_operation.items():
                sent = count - before.get(operation, 0)
                if sent:
                    result[operation] = sent


@dataclass
class Timer:
    seconds: float = 0.0
    _start: float = field(default=0.0, repr=False)

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.seconds = time.perf_counter() - self._start


def directory_size(path: str) -> tuple[int, int]:
    """(files, bytes) of the visible data files under ``path`` (skips ``_*`` and ``.*``)."""
    files = total = 0
    for current, dirs, names in os.walk(path):
        dirs[:] = [name for name in dirs if not name.startswith(("_", "."))]
        for name in names:
            if not name.startswith(("_", ".")):
                files += 1
                total += os.path.getsize(os.path.join(current, name))
    return files, total


@dataclass
class Context:
    """What every section gets: the one SparkSession, the scale, a scratch directory."""

    spark: Any
    scale: Any  # scales.Scale
    workdir: Any  # pathlib.Path, removed after the run
    watermarks_table: str
    postgres: Any = None  # tests.harness.postgres.Postgres
    log: Any = print

    def section_dir(self, name: str) -> Any:
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def measured(ctx: Context, label: str, action: Any, *, memory: bool = False) -> dict[str, Any]:
    """Run ``action()`` under every instrument; returns the figures plus ``result``."""
    requests = _dynamodb_requests()
    with (
        MemorySampler(ctx.spark, enabled=memory) as sampler,
        IoCounters(ctx.spark) as io_counters,
        SparkJobs(ctx.spark, label) as jobs,
        requests.measure() as sent,
        Py4jCalls() as py4j,
        Timer() as timer,
        quiet(),
    ):
        result = action()
    figures = {
        "seconds": round(timer.seconds, 3),
        "spark_jobs": jobs.count,
        "fs_bytes_read": io_counters.delta.fs_bytes_read,
        "spark_files_discovered": io_counters.delta.files_discovered,
        "spark_parallel_listing_jobs": io_counters.delta.parallel_listing_jobs,
        "dynamodb_requests": sum(sent.values()),
        **py4j.figures(),
        "result": result,
    }
    if memory:
        figures["memory"] = sampler.peak.as_dict()
    return figures


def run_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """What every job run's summary reports: rows read and written, partitions, commit."""
    return {
        "records_read": summary.get("records_read"),
        "records_written": summary.get("records_written"),
        "partitions_written": len(summary.get("partitions_written") or []),
        "committed": summary.get("committed"),
    }


_REQUESTS: list[RequestCounter] = []


def _dynamodb_requests() -> RequestCounter:
    """Counts requests on the client the jobs' ``Watermarks()`` use (``aws.client``)."""
    from glue_incremental import aws

    client = aws.client("dynamodb")
    if not _REQUESTS or _REQUESTS[-1].client is not client:
        _REQUESTS.append(RequestCounter(client))
    return _REQUESTS[-1]


def without_memory(run: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run's figures without the memory samples (reported once, apart)."""
    if run is None:
        return None
    return {key: value for key, value in run.items() if key != "memory"}
