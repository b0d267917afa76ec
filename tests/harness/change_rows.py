"""Rows of a changes feed (live and deleted versions), typed Parquet sources, and a load's
target next to its full refresh computed in plain Python.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from tests.harness import reference
from tests.harness.file_jobs import COLUMNS, Job, row

DELETE_COLUMNS = ["id", "op", "part", "updated", "value"]


def change(key: int, updated: int, op: str, value: str = "v") -> dict:
    return {"id": key, "part": "a", "updated": updated, "value": value, "op": op}


def deleted_row(key: int, part: str, updated: int) -> dict:
    return {**row(key, part, updated, f"d{key}"), "op": "D"}


def live_row(key: int, part: str, updated: int, value: str) -> dict:
    return {**row(key, part, updated, value), "op": "U"}


def land_parquet(job: Job, rows: list[dict], types: dict[str, str], name: str) -> None:
    """One Parquet file of ``rows`` with the given Arrow ``types``, landed like ``Job.land``."""
    job.clock.now += 10
    source = job.tmp / "source"
    source.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([(column, types.get(column, "string")) for column in rows[0]])
    path = source / name
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    os.utime(path, (job.clock.now, job.clock.now))


def load_target_rows(job: Job) -> list[tuple]:
    return reference.as_tuples(reference.visible_rows(job.target, COLUMNS), COLUMNS)


def load_full_refresh(job: Job) -> list[tuple]:
    return reference.as_tuples(
        reference.full_refresh(job.tmp / "source", ("id",), "updated"), COLUMNS
    )


def snapshots_reference(snapshots: list[list[dict]], columns=COLUMNS) -> list[tuple]:
    """The newest snapshot's keys, each with its greatest version, soft deletes removed."""
    merged = reference.latest_snapshot_merged(snapshots, ("id",), "updated")
    kept = reference.without_deletes(merged, lambda r: r.get("op") == "D")
    return reference.as_tuples(kept, columns)
