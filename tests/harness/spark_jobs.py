"""The Spark jobs a callable starts, each with the library line that started it.

Spark names a job after its call site, but for most DataFrame actions (writes,
``isEmpty``, ``count`` through the JVM) that is a Java frame. So every py4j call made
during the callable is recorded with its Python stack and time, and each job (found
by a job group) is attributed to the longest such call that was running when the job
was submitted: the action that started it.
"""

from __future__ import annotations

import itertools
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from py4j.java_gateway import JavaMember

_groups = itertools.count()
_LIBRARY = "/glue_incremental/"


@dataclass(frozen=True)
class SparkJob:
    """One job: its id, the library frames that started it (innermost first), Spark's name."""

    job_id: int
    call_site: str
    spark_name: str

    def __str__(self) -> str:
        return f"job {self.job_id}: {self.call_site}  [{self.spark_name}]"


@dataclass
class _Call:
    start_ms: float
    end_ms: float
    stack: list[traceback.FrameSummary]


def _site(call: _Call | None) -> str:
    if call is None:
        return "(no py4j call from Python: started by the JVM itself)"
    frames = [f for f in call.stack if _LIBRARY in f.filename]
    api = next((f.name for f in reversed(call.stack) if "/pyspark/" in f.filename), "?")
    if not frames:
        return f"{api} (outside the library)"
    innermost = frames[-1]
    path = innermost.filename.split(_LIBRARY, 1)[1]
    callers = " < ".join(f"{f.name}" for f in reversed(frames[:-1]))[:120]
    return f"{api} at {path}:{innermost.lineno} in {innermost.name} < {callers}"


def jobs_started_by(spark: Any, action: Callable[[], Any]) -> tuple[Any, list[SparkJob]]:
    """Run ``action()``; return its result and the Spark jobs it started, in order.

    Jobs of threads that inherit the caller's job group (``InheritableThread``) count.
    """
    context = spark.sparkContext
    group = f"jobs-{next(_groups)}"
    calls: list[_Call] = []
    original = JavaMember.__call__
    lock = threading.Lock()

    def recording(member: Any, *args: Any) -> Any:
        start = time.time() * 1000
        try:
            return original(member, *args)
        finally:
            record = _Call(start, time.time() * 1000, traceback.extract_stack()[:-1])
            with lock:
                calls.append(record)

    context.setJobGroup(group, group)
    JavaMember.__call__ = recording  # type: ignore[method-assign]
    try:
        result = action()
    finally:
        JavaMember.__call__ = original  # type: ignore[method-assign]
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)
    store = context._jsc.sc().statusStore()
    jobs = []
    for job_id in sorted(context.statusTracker().getJobIdsForGroup(group)):
        data = store.job(job_id)
        submitted = data.submissionTime()
        at = submitted.get().getTime() if submitted.isDefined() else None
        running = [c for c in calls if at is not None and c.start_ms - 1 <= at <= c.end_ms + 1]
        longest = max(running, key=lambda c: c.end_ms - c.start_ms, default=None)
        jobs.append(SparkJob(job_id, _site(longest), str(data.name())))
    return result, jobs
