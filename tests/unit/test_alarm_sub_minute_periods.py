"""The alarms' sub-minute periods: ``job_alarms`` accepts a schedule
period of 10, 20 or 30 s, which CloudWatch evaluates only against metrics published with
``StorageResolution`` 1; otherwise most periods hold no data and the missed-run alarm
(missing data breaching) pages although runs report. PutMetricAlarm ``Period``:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
"""

from __future__ import annotations

from pathlib import Path

from glue_incremental.run import metrics
from glue_incremental.run.metrics import RunMetrics, metric_data

VARIABLES = Path(__file__).resolve().parents[2] / "terraform/modules/job_alarms/variables.tf"


def test_every_run_metric_is_high_resolution_so_sub_minute_alarm_periods_see_each_run():
    assert "contains([10, 20, 30], var.schedule_period_seconds)" in VARIABLES.read_text()

    data = metric_data(
        RunMetrics(job_name="j", records_read=1, records_written=1, watermark_lag_seconds=5.0)
    )

    assert {datum["StorageResolution"] for datum in data} == {1}


def test_a_failed_publish_is_counted_at_high_resolution_too(monkeypatch):
    sent: list[dict] = []

    class CloudWatch:
        def put_metric_data(self, **request):
            sent.append(request)

    monkeypatch.setattr(metrics.aws, "client", lambda service: CloudWatch())

    assert metrics.publish_failure("j")
    assert [datum["StorageResolution"] for request in sent for datum in request["MetricData"]] == [
        1
    ]
