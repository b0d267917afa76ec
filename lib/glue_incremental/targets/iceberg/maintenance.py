"""Iceberg table maintenance: snapshot expiry that spares what watermarks point at, compaction.

Runs as an optional last step of a job run (``--iceberg_expire_older_than``,
``--iceberg_compact``), after the DynamoDB commit and under the run's lease, so it never
races the job's own commit (tables are created with ``commit.retry.num-retries=0``).

- **Retention never expires a snapshot a watermark points at.** Each state slot's
  current run (or, after a rewind, the run rewound to) gets a tag
  ``gi_<state>_<slot>`` on its snapshot; Iceberg never expires a tagged snapshot. The
  tag moves when the state moves, so the previous one becomes expirable.
- **Compaction** (``rewrite_data_files``) is one ``replace`` snapshot with the same rows.
  Its summary carries the state's watermark and ``glue-incremental.run-id`` =
  ``compaction-<run id>`` with ``commits=false``: it is never rolled forward, and a
  rewind to a run still finds that run's own snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pyspark.sql import SparkSession

from glue_incremental.args import ArgumentError
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.targets.iceberg.tables import java_session, jvm
from glue_incremental.watermarks import Watermarks

_TAG_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Retention:
    """Expire snapshots older than ``older_than``, always keeping the last ``retain_last``."""

    older_than: timedelta
    retain_last: int = 1

    def __post_init__(self) -> None:
        if self.older_than <= timedelta(0):
            raise ArgumentError(
                "iceberg_expire_older_than",
                f"--iceberg_expire_older_than must be positive, got {self.older_than}",
            )
        if self.retain_last < 1:
            raise ArgumentError(
                "iceberg_retain_last", f"retain_last must be at least 1, got {self.retain_last}"
            )


@dataclass(frozen=True)
class MaintenanceResult:
    protected: dict[str, int] = field(default_factory=dict)
    snapshots_before: int = 0
    snapshots_after: int = 0
    compaction_snapshot_id: int | None = None


def tag_name(state_name: str, slot: str) -> str:
    return "gi_" + _TAG_UNSAFE.sub("_", f"{state_name}_{slot}")


def watermark_snapshots(
    spark: SparkSession, target: iceberg_writer.IcebergTarget, store: Watermarks, state_name: str
) -> dict[str, int]:
    """Tag name -> the snapshot each slot's current state came from (runs without one skipped)."""
    pointed: dict[str, int] = {}
    by_run = {s.run_id: s.snapshot_id for s in iceberg_writer.snapshots(spark, target) if s.run_id}
    for slot in store.slots(state_name):
        state = store.current_state(state_name, slot)
        if not state:
            continue
        run_id = state.get("rewound_to_run") or state["job_run_id"]
        if run_id in by_run:
            pointed[tag_name(state_name, slot)] = by_run[run_id]
    return pointed


def protect(
    spark: SparkSession, target: iceberg_writer.IcebergTarget, tags: dict[str, int]
) -> None:
    for tag, snapshot_id in sorted(tags.items()):
        spark.sql(
            f"ALTER TABLE {target.quoted} CREATE OR REPLACE TAG `{tag}` AS OF VERSION {snapshot_id}"
        )


def expire(
    spark: SparkSession,
    target: iceberg_writer.IcebergTarget,
    store: Watermarks,
    state_name: str,
    retention: Retention,
    *,
    now: datetime | None = None,
) -> MaintenanceResult:
    """Tag what watermarks point at, then expire older untagged snapshots."""
    tags = watermark_snapshots(spark, target, store, state_name)
    before = len(iceberg_writer.snapshots(spark, target))
    protect(spark, target, tags)
    cutoff = (now or datetime.now(UTC)) - retention.older_than
    spark.sql(
        f"CALL {target.catalog}.system.expire_snapshots(table => '{target.table}', "
        f"older_than => TIMESTAMP '{cutoff.strftime('%Y-%m-%d %H:%M:%S.%f')}', "
        f"retain_last => {retention.retain_last})"
    )
    after = len(iceberg_writer.snapshots(spark, target))
    return MaintenanceResult(tags, before, after)


def compact(
    spark: SparkSession,
    target: iceberg_writer.IcebergTarget,
    *,
    run_id: str,
    state_name: str,
    watermarks: Mapping[str, Mapping[str, object]],
) -> int | None:
    """Rewrite small data files in one ``replace`` snapshot; returns its id (None: nothing to do)."""
    before = iceberg_writer.current_snapshot(spark, target)
    properties = iceberg_writer.snapshot_properties(
        run_id=f"compaction-{run_id}",
        state_name=state_name,
        state_versions={},
        watermarks=watermarks,
        commits=False,
    )
    action = (
        jvm(spark)
        .org.apache.iceberg.spark.actions.SparkActions.get(java_session(spark))
        .rewriteDataFiles(iceberg_writer._java_table(spark, target))
    )
    for key, value in properties.items():
        action = action.snapshotProperty(key, value)
    action.option("min-input-files", "2").execute()
    after = iceberg_writer.current_snapshot(spark, target)
    if after is None or (before is not None and after.snapshot_id == before.snapshot_id):
        return None
    return after.snapshot_id
