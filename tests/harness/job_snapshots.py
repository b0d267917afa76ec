"""A file job's history built once, then put back exactly for each test that starts from it.

Building a history costs Spark runs; tests that each start from the same history and then
change it (rewind, rerun, crash) start from a copy instead. The files go back to the same
directory (the state names its paths) with their modification times (file bookmarks read
them), and the state table gets back every item it held, so the job's files, state, clock
and run count are exactly those after the runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.file_jobs import Job


@dataclass(frozen=True)
class JobSnapshot:
    """``job`` as it stood after its runs: a copy of its directory and of its state items."""

    job: Job
    pristine: Path
    items: list[dict[str, Any]]
    now: float
    runs: int


def take(job: Job, pristine: Path) -> JobSnapshot:
    """Copy ``job``'s directory to ``pristine`` and read every item of its state table."""
    shutil.copytree(job.tmp, pristine, symlinks=True)  # copy2: modification times kept
    client, table = job.store.client, job.store.table_name
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items += page["Items"]
    return JobSnapshot(job, pristine, items, job.clock.now, job.runs)


def restore(snapshot: JobSnapshot, store: Any) -> Job:
    """The job of ``snapshot`` again, on ``store`` (an empty state table): the files of its
    directory replaced by the copy, every state item put back, the same clock and runs."""
    built = snapshot.job
    shutil.rmtree(built.tmp, ignore_errors=True)
    shutil.copytree(snapshot.pristine, built.tmp, symlinks=True)
    for item in snapshot.items:
        store.client.put_item(TableName=store.table_name, Item=item)
    job = Job(built.spark, built.tmp, store, built.job_name)
    job.config = built.config
    job.clock.now, job.runs = snapshot.now, snapshot.runs
    return job
