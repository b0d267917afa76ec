"""On-call pages for the right reasons: what is new, future watermarks, post-commit failures.

Every figure is read back from the metrics the run published to the endpoint.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError
from glue_incremental import aws as aws_clients
from glue_incremental.load.job import run_load
from glue_incremental.run import metrics
from glue_incremental.run.context import IncrementalRun
from glue_incremental.watermarks import WatermarkItemTooLarge

from tests.harness.alarm_states import wait_for_alarm_state
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, json_files_config, write_json_file

pytestmark = pytest.mark.spark

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(postgres):
    with orders_table(postgres, prefix="paging") as name:
        yield name


def run_once(spark, config, store, *, state: str, run: str, at: datetime, **options) -> dict:
    """One run whose metrics carry the dimension ``JobName=<state>-<run>`` (one run each)."""
    context = IncrementalRun(
        spark=spark,
        job_name=f"{state}-{run}",
        state_name=state,
        run_id=run,
        store=store,
        clock=FixedClock(at.timestamp()),
        **options,
    )
    with context:
        run_load(context, config)
    return context.summary


def published(job_name: str, metric: str, namespace: str = metrics.NAMESPACE) -> list[float]:
    """Every value of ``metric`` the runs of ``job_name`` published (Minimum and Maximum)."""
    now = datetime.now(UTC)
    points = aws_clients.client("cloudwatch").get_metric_statistics(
        Namespace=namespace,
        MetricName=metric,
        Dimensions=[{"Name": metrics.DIMENSION, "Value": job_name}],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=1),
        Period=60,
        Statistics=["Minimum", "Maximum", "SampleCount"],
    )["Datapoints"]
    return sorted({point["Minimum"] for point in points} | {point["Maximum"] for point in points})


# -- 1. the zero-record alarm can fire -----------------------------------------------------------


@pytest.mark.postgres
def test_a_jdbc_run_with_no_change_publishes_zero_new_records_despite_rereads(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path)
    upsert(
        postgres,
        table,
        [
            (1, "a", T0, "tie-1"),
            (2, "a", T0, "tie-2"),
            (3, "b", T0 - timedelta(minutes=10), "in-lookback"),
            (4, "b", T0 - timedelta(hours=2), "old"),
        ],
    )
    first = run_once(spark, config, store, state="pg", run="r1", at=T0 + timedelta(minutes=1))
    assert first["records_new"] == 4

    quiet = run_once(spark, config, store, state="pg", run="r2", at=T0 + timedelta(minutes=2))

    assert quiet["records_read"] == 3  # boundary ties and the lookback window, read again
    assert published("pg-r2", metrics.RECORDS_NEW) == [0.0]
    assert published("pg-r2", metrics.RECORDS_READ) == [3.0]

    upsert(
        postgres,
        table,
        [
            (5, "a", T0, "new-row-on-the-boundary"),
            (3, "b", T0 - timedelta(minutes=5), "late-update-in-the-lookback"),
        ],
    )
    changed = run_once(spark, config, store, state="pg", run="r3", at=T0 + timedelta(minutes=3))
    assert changed["records_read"] == 4
    assert published("pg-r3", metrics.RECORDS_NEW) == [2.0]


def test_a_file_run_with_no_change_publishes_zero_new_records_and_the_alarm_pages(
    spark, tmp_path, store
):
    config = json_files_config(tmp_path)
    write_json_file(tmp_path / "source", [{"id": 1, "updated": 10}], mtime=T0.timestamp() - 100)
    run_once(spark, config, store, state="files", run="r1", at=T0)
    assert published("files-r1", metrics.RECORDS_NEW) == [1.0]
    name = "files-r2-zero-records"
    aws_clients.client("cloudwatch").put_metric_alarm(
        AlarmName=name,
        Namespace=metrics.METRIC_CONTRACT["namespace"],
        MetricName=metrics.METRIC_CONTRACT["zero_records_metric"],
        Dimensions=[{"Name": metrics.DIMENSION, "Value": "files-r2"}],
        Statistic=metrics.METRIC_CONTRACT["zero_records_statistic"],
        Period=10,  # LocalStack evaluates it every period
        EvaluationPeriods=1,
        DatapointsToAlarm=1,
        ComparisonOperator="LessThanOrEqualToThreshold",
        Threshold=0,
        TreatMissingData="notBreaching",
    )

    run_once(spark, config, store, state="files", run="r2", at=T0 + timedelta(minutes=1))

    assert published("files-r2", metrics.RECORDS_NEW) == [0.0]
    assert wait_for_alarm_state(name, "ALARM", timeout=25) == "ALARM"


# -- 2. a future-dated row does not stop ingestion -----------------------------------------------


@pytest.mark.postgres
def test_a_future_dated_row_is_loaded_counted_and_does_not_move_the_cursor_past_now(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path, lookback=timedelta(0))
    year_2099 = datetime(2099, 1, 1, tzinfo=UTC)
    upsert(postgres, table, [(1, "a", T0, "now"), (2, "a", year_2099, "from the future")])
    first = run_once(spark, config, store, state="fw", run="r1", at=T0)

    assert first["future_watermark_rows"] == 1
    assert published("fw-r1", metrics.FUTURE_WATERMARK_ROWS) == [1.0]
    assert store.get_watermark("fw")["watermarks"]["cursor"] == T0

    later = T0 + timedelta(hours=1)
    upsert(
        postgres,
        table,
        [(10 + n, "b", later - timedelta(minutes=n), f"change-{n}") for n in range(6)],
    )
    second = run_once(spark, config, store, state="fw", run="r2", at=later)

    assert second["records_new"] == 6  # the future row is read again, but is not new
    assert published("fw-r2", metrics.RECORDS_NEW) == [6.0]
    assert published("fw-r2", metrics.FUTURE_WATERMARK_ROWS) == [1.0]
    loaded = spark.read.parquet(config.target_path).select("id").collect()
    assert sorted(row["id"] for row in loaded) == [1, 2, 10, 11, 12, 13, 14, 15]


@pytest.mark.postgres
def test_the_lag_metric_is_published_unclamped_when_the_watermark_is_ahead(
    spark, postgres, table, tmp_path, store
):
    config = jdbc_config(postgres, table, tmp_path, lookback=timedelta(0))
    upsert(postgres, table, [(1, "a", T0 + timedelta(minutes=3), "clock skew of the writer")])

    run_once(spark, config, store, state="lag", run="r1", at=T0)

    assert published("lag-r1", metrics.WATERMARK_LAG) == [-180.0]


# -- 5. post-commit steps never fail a committed run ---------------------------------------------


def test_a_metric_publish_failure_after_the_commit_keeps_the_run_succeeded(
    spark, tmp_path, store, monkeypatch, capfd
):
    cloudwatch = aws_clients.client("cloudwatch")
    real_put = cloudwatch.put_metric_data

    def denied_in_the_job_namespace(**request):
        if request["Namespace"] == "Denied":
            raise ClientError(
                {"Error": {"Code": "AccessDenied", "Message": "not allowed"}}, "PutMetricData"
            )
        return real_put(**request)

    monkeypatch.setattr(cloudwatch, "put_metric_data", denied_in_the_job_namespace)
    config = json_files_config(tmp_path)
    write_json_file(tmp_path / "source", [{"id": 1, "updated": 10}], mtime=T0.timestamp() - 100)

    summary = run_once(
        spark, config, store, state="pc", run="r1", at=T0, metrics_namespace="Denied"
    )

    assert summary["status"] == "SUCCEEDED" and summary["committed"] is True
    assert summary["metrics_published"] is False
    assert "AccessDenied" in summary["metric_publish_error"]
    assert store.get_watermark("pc")["job_run_id"] == "r1"
    assert published("pc-r1", metrics.METRIC_PUBLISH_FAILURES) == [1.0]
    err = capfd.readouterr().err
    assert "metric publish failed" in err


# -- 8. a summary people can read; a state that cannot fit stops before writing -----------------


def test_the_summary_carries_a_digest_of_the_file_state_and_its_size_is_published(
    spark, tmp_path, store
):
    config = json_files_config(tmp_path)
    for number in range(5):
        write_json_file(
            tmp_path / "source" / f"day={number}",
            [{"id": number, "updated": number}],
            mtime=T0.timestamp() - 100,
        )

    summary = run_once(spark, config, store, state="dg", run="r1", at=T0)

    digest = summary["new_watermark"]["default"]
    assert digest["files"]["band_size"] == 5
    assert digest["files"]["tracked_directories"] == 5
    assert "band_fingerprints" not in str(summary)
    stored = store.get_watermark("dg")["watermarks"]
    assert all(
        fingerprint not in str(summary) for fingerprint in stored["files"]["band_fingerprints"]
    )
    assert published("dg-r1", metrics.STATE_BYTES) == [float(digest["state_bytes"])]


def test_a_state_too_large_for_an_item_fails_before_anything_is_written(spark, tmp_path, store):
    config = json_files_config(tmp_path)
    write_json_file(
        tmp_path / "source", [{"id": 1, "updated": "x" * 420_000}], mtime=T0.timestamp() - 100
    )

    with pytest.raises(WatermarkItemTooLarge, match="bytes"):
        run_once(spark, config, store, state="big", run="r1", at=T0)

    assert not (tmp_path / "target").exists()
    assert store.get_watermark("big") is None


@pytest.mark.postgres
def test_a_same_watermark_update_of_a_reread_row_counts_as_new(
    spark, postgres, table, tmp_path, store
):
    """A row changed in place without its watermark moving (a DATE or second-precision
    column, a batch stamped with one time) is new data: the zero-record alarm must not page."""
    config = jdbc_config(postgres, table, tmp_path)
    upsert(postgres, table, [(1, "a", T0, "before"), (2, "a", T0, "same")])
    run_once(spark, config, store, state="same", run="r1", at=T0 + timedelta(minutes=1))
    upsert(postgres, table, [(1, "a", T0, "after, same updated_at")])

    changed = run_once(spark, config, store, state="same", run="r2", at=T0 + timedelta(minutes=2))

    assert changed["records_read"] == 2
    assert changed["records_new"] == 1
