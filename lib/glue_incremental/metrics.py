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
from typing import Any

from glue_incremental import aws

NAMESPACE = "GlueIncremental"
DIMENSION = "JobName"
RECORDS_READ = "RecordsRead"
RECORDS_WRITTEN = "RecordsWritten"
WATERMARK_LAG = "WatermarkLagSeconds"
LATE_FILES_SKIPPED = "LateFilesSkipped"
NULL_WATERMARK_ROWS = "NullWatermarkRows"

# What the zero-record alarm relies on: published once per run, even when 0.
METRIC_CONTRACT: Mapping[str, Any] = {
    "namespace": NAMESPACE,
    "dimension": DIMENSION,
    "zero_records_metric": RECORDS_READ,
    "zero_records_statistic": "Maximum",
    "lag_metric": WATERMARK_LAG,
    "lag_statistic": "Maximum",
}

log = logging.getLogger("glue_incremental.metrics")


@dataclass(frozen=True)
class RunMetrics:
    """Per-run figures. ``watermark_lag_seconds`` is None when no watermark exists yet."""

    job_name: str
    records_read: int
    records_written: int
    watermark_lag_seconds: float | None = None
    late_files_skipped: int = 0
    null_watermark_rows: int = 0


def metric_data(metrics: RunMetrics, timestamp: datetime | None = None) -> list[dict[str, Any]]:
    """The ``PutMetricData`` payload for one run (pure; every count is always present)."""
    when = timestamp or datetime.now(UTC)
    dims = [{"Name": DIMENSION, "Value": metrics.job_name}]
    values: list[tuple[str, float, str]] = [
        (RECORDS_READ, metrics.records_read, "Count"),
        (RECORDS_WRITTEN, metrics.records_written, "Count"),
        (LATE_FILES_SKIPPED, metrics.late_files_skipped, "Count"),
        (NULL_WATERMARK_ROWS, metrics.null_watermark_rows, "Count"),
    ]
    if metrics.watermark_lag_seconds is not None:
        values.append((WATERMARK_LAG, max(0.0, metrics.watermark_lag_seconds), "Seconds"))
    return [
        {
            "MetricName": name,
            "Dimensions": dims,
            "Timestamp": when,
            "Value": float(value),
            "Unit": unit,
        }
        for name, value, unit in values
    ]


def publish(
    metrics: RunMetrics, timestamp: datetime | None = None, *, namespace: str = NAMESPACE
) -> list[dict[str, Any]]:
    """Send the run's metrics to CloudWatch in one request and return what was sent."""
    data = metric_data(metrics, timestamp)
    aws.client("cloudwatch").put_metric_data(Namespace=namespace, MetricData=data)
    return data


def log_summary(summary: Mapping[str, Any]) -> str:
    """Log the one structured JSON line a run ends with, and return it."""
    line = json.dumps({"event": "run_summary", **summary}, default=str, sort_keys=True)
    log.info(line)
    print(line, flush=True)
    return line
