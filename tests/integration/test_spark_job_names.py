"""Every Spark job a load starts is named for its step in Spark's UI and event log
(``io.spark_steps``), and a caller's own job description comes back after it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from glue_incremental.io.spark_steps import PREFIX, named

from tests.harness.file_jobs import T0, config_for, row
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = pytest.mark.spark

_groups = itertools.count()


def job_descriptions(spark: Any, action: Callable[[], Any]) -> list[str]:
    """The description of every Spark job ``action`` started, in the order they started."""
    group = f"named-steps-{next(_groups)}"
    context = spark.sparkContext
    context.setJobGroup(group, "the caller's description")
    try:
        action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)
    found = []
    jobs = context._jsc.sc().statusStore().jobsList(None).iterator()
    while jobs.hasNext():
        job = jobs.next()
        if job.jobGroup().isDefined() and job.jobGroup().get() == group:
            description = job.description()
            found.append((job.jobId(), description.get() if description.isDefined() else ""))
    return [description for _, description in sorted(found)]


def test_a_named_step_describes_its_jobs_and_gives_the_callers_description_back(spark):
    rows = spark.range(10)

    def action() -> None:
        with named(spark, "count the rows"):
            rows.count()
        rows.count()

    in_order = list(dict.fromkeys(job_descriptions(spark, action)))  # a count may be 2 jobs
    assert in_order == [f"{PREFIX}count the rows", "the caller's description"]


def test_every_spark_job_of_a_first_and_a_later_load_is_named_for_its_step(spark, tmp_path, store):
    config = config_for(tmp_path)
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x"), row(2, "b", 11, "y")], mtime=T0)

    def load(run_id: str, at: float) -> Callable[[], Any]:
        return lambda: run_load_at(
            spark, config, job_name="orders", run_id=run_id, clock=FixedClock(at), store=store
        )

    first = job_descriptions(spark, load("jr_1", T0 + 60))
    write_json_file(tmp_path / "source", [row(1, "b", 20, "x2")], mtime=T0 + 100)
    later = job_descriptions(spark, load("jr_2", T0 + 160))

    assert first and later
    unnamed = [name for name in [*first, *later] if not name.startswith(PREFIX)]
    assert unnamed == []
    assert f"{PREFIX}merge and stage the data" in first
    assert f"{PREFIX}look up the incoming keys in the key index" in later
