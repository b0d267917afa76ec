"""CloudWatch metrics every run publishes, and the run summary line.

The alarm in ``terraform/modules/job_alarms`` is written against
``METRIC_CONTRACT``; the contract test reads both sides, so a rename here that
is not mirrored there fails ``make test``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NotRequired, TypedDict, cast

from glue_incremental import aws

NAMESPACE = "GlueIncremental"
DIMENSION = "JobName"
RECORDS_READ = "RecordsRead"
RECORDS_NEW = "RecordsNew"
FUTURE_WATERMARK_ROWS = "FutureWatermarkRows"
METRIC_PUBLISH_FAILURES = "MetricPublishFailures"
STATE_BYTES = "StateBytes"
RECORDS_WRITTEN = "RecordsWritten"
WATERMARK_LAG = "WatermarkLagSeconds"
LATE_FILES_SKIPPED = "LateFilesSkipped"
NULL_WATERMARK_ROWS = "NullWatermarkRows"
RECORDS_DELETED = "RecordsDeleted"
BATCHES = "Batches"
# One datum per run by job AND release: which release ran, without putting a release
# dimension on the alarmed metrics (an alarm matches exact dimensions, so each new
# release would start an unalarmed series); two dimensions of the 30 a metric may have:
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#Dimension
RUNS = "Runs"
RELEASE_DIMENSION = "Release"
SCHEMA_CHANGES = "SchemaChanges"
# History targets only (``docs/history.md``): a latest-version run publishes neither.
VERSIONS_OPENED = "VersionsOpened"
VERSIONS_CLOSED = "VersionsClosed"


class MetricContract(TypedDict):
    """What ``terraform/modules/job_alarms`` is written against (the contract test reads it)."""

    namespace: str
    dimension: str
    zero_records_metric: str
    zero_records_statistic: str
    lag_metric: str
    lag_statistic: str
    count_alarms: tuple[str, ...]
    publish_failures_metric: str


class Dimension(TypedDict):
    Name: str
    Value: str


class MetricDatum(TypedDict):
    """One datum of a ``PutMetricData`` request."""

    MetricName: str
    Dimensions: list[Dimension]
    Timestamp: datetime
    Value: float
    Unit: str
    StorageResolution: NotRequired[int]


# What the alarms rely on: published once per run, even when 0. The zero-record
# alarm watches RecordsNew (rows not already in the target): RecordsRead also
# counts boundary and lookback re-reads, so it is never 0 for a JDBC job.
METRIC_CONTRACT: MetricContract = {
    "namespace": NAMESPACE,
    "dimension": DIMENSION,
    "zero_records_metric": RECORDS_NEW,
    "zero_records_statistic": "Maximum",
    "lag_metric": WATERMARK_LAG,
    "lag_statistic": "Maximum",
    "count_alarms": (LATE_FILES_SKIPPED, NULL_WATERMARK_ROWS, FUTURE_WATERMARK_ROWS),
    "publish_failures_metric": METRIC_PUBLISH_FAILURES,
}

# Every datum is stored at 1-second resolution: job_alarms accepts the 10, 20 and 30 s
# alarm periods (local environments), which CloudWatch evaluates only on metrics stored by
# PutMetricData with StorageResolution 1; alarms with minute periods read them the same.
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
STORAGE_RESOLUTION = 1

log = logging.getLogger("glue_incremental.run.metrics")


@dataclass(frozen=True)
class RunMetrics:
    """Per-run figures. ``watermark_lag_seconds`` is None when no watermark exists yet.

    ``records_new`` (None: same as ``records_read``) counts rows that were not
    already loaded. The lag is published as is: negative when the watermark is
    ahead of the run's clock (never clamped to 0, which would hide it).
    """

    job_name: str
    records_read: int
    records_written: int
    watermark_lag_seconds: float | None = None
    late_files_skipped: int = 0
    null_watermark_rows: int = 0
    records_new: int | None = None
    future_watermark_rows: int = 0
    state_bytes: int | None = None
    records_deleted: int = 0
    batches: int | None = None  # published by batched runs only
    release: str | None = None
    schema_changes: int = 0  # columns added, widened, missing or rescued (schema_evolution)
    # A history target's versions opened and closed (summed over batches); None: not one.
    versions_opened: int | None = None
    versions_closed: int | None = None


def metric_data(metrics: RunMetrics, timestamp: datetime | None = None) -> list[MetricDatum]:
    """The ``PutMetricData`` payload for one run (pure; every count is always present)."""
    when = timestamp or datetime.now(UTC)
    dims: list[Dimension] = [{"Name": DIMENSION, "Value": metrics.job_name}]
    values: list[tuple[str, float, str]] = [
        (RECORDS_READ, metrics.records_read, "Count"),
        (
            RECORDS_NEW,
            metrics.records_read if metrics.records_new is None else metrics.records_new,
            "Count",
        ),
        (FUTURE_WATERMARK_ROWS, metrics.future_watermark_rows, "Count"),
        (METRIC_PUBLISH_FAILURES, 0, "Count"),
        (RECORDS_WRITTEN, metrics.records_written, "Count"),
        (LATE_FILES_SKIPPED, metrics.late_files_skipped, "Count"),
        (NULL_WATERMARK_ROWS, metrics.null_watermark_rows, "Count"),
        (RECORDS_DELETED, metrics.records_deleted, "Count"),
        (SCHEMA_CHANGES, metrics.schema_changes, "Count"),
    ]
    if metrics.state_bytes is not None:
        values.append((STATE_BYTES, metrics.state_bytes, "Bytes"))
    if metrics.batches is not None:
        values.append((BATCHES, metrics.batches, "Count"))
    if metrics.versions_opened is not None:
        values.append((VERSIONS_OPENED, metrics.versions_opened, "Count"))
    if metrics.versions_closed is not None:
        values.append((VERSIONS_CLOSED, metrics.versions_closed, "Count"))
    if metrics.watermark_lag_seconds is not None:
        values.append((WATERMARK_LAG, metrics.watermark_lag_seconds, "Seconds"))
    data: list[MetricDatum] = [
        {
            "MetricName": name,
            "Dimensions": dims,
            "Timestamp": when,
            "Value": float(value),
            "Unit": unit,
            "StorageResolution": STORAGE_RESOLUTION,
        }
        for name, value, unit in values
    ]
    if metrics.release:
        release_dims: list[Dimension] = [
            *dims,
            {"Name": RELEASE_DIMENSION, "Value": metrics.release},
        ]
        data.append(
            {
                "MetricName": RUNS,
                "Dimensions": release_dims,
                "Timestamp": when,
                "Value": 1.0,
                "Unit": "Count",
            }
        )
    return data


def version_count(details: Mapping[str, object], name: str) -> int | None:
    """A history run's ``versions_opened``/``versions_closed`` (the run's details, which its
    target sets, even to 0); None for a latest-version run, which publishes neither."""
    value = details.get(name)
    return None if value is None else int(cast(int, value))


def publish(
    metrics: RunMetrics, timestamp: datetime | None = None, *, namespace: str = NAMESPACE
) -> list[MetricDatum]:
    """Send the run's metrics to CloudWatch in one request and return what was sent."""
    data = metric_data(metrics, timestamp)
    aws.client("cloudwatch").put_metric_data(Namespace=namespace, MetricData=data)
    return data


def publish_failure(job_name: str, *, namespace: str = NAMESPACE) -> bool:
    """Count one failed publish (``MetricPublishFailures`` = 1); True if that got through.

    Sent to the default namespace as well when the job's differs, so the alarm
    sees it even when the job's namespace is what was refused.
    """
    data: list[MetricDatum] = [
        {
            "MetricName": METRIC_PUBLISH_FAILURES,
            "Dimensions": [{"Name": DIMENSION, "Value": job_name}],
            "Timestamp": datetime.now(UTC),
            "Value": 1.0,
            "Unit": "Count",
            "StorageResolution": STORAGE_RESOLUTION,
        }
    ]
    delivered = False
    for target in dict.fromkeys((NAMESPACE, namespace)):
        try:
            aws.client("cloudwatch").put_metric_data(Namespace=target, MetricData=data)
            delivered = True
        except Exception as error:  # reporting a failure must not fail the run
            log.error("could not count the metric publish failure in %s: %s", target, error)
    return delivered


def log_summary(summary: Mapping[str, object]) -> str:
    """Log the one structured JSON line a run ends with, and return it."""
    line = json.dumps({"event": "run_summary", **summary}, default=str, sort_keys=True)
    log.info(line)
    print(line, flush=True)
    return line
