"""``status --env``: one row per pipeline, read from the endpoint after real local runs.

Three jobs (two loads feeding a join) run a tiny probe through the local runner:
it commits watermark state through the library and publishes the run metrics,
as the real scripts do, without Spark. The pipelines are described the way the
environment's Terraform ``pipelines`` output describes them.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from glue_incremental import aws
from glue_incremental.watermarks import create_table
from glue_incremental_tools import deploy, runner, status
from glue_incremental_tools.cli import main

from tests.harness.alarm_states import wait_for_alarm_state
from tests.harness.probe import deploy_probe

BUCKET = "gi-test-status"
TABLE = "glue-watermarks"
JOBS = {"orders": "t-orders", "customers": "t-customers", "orders_enriched": "t-orders-enriched"}
PROBE = textwrap.dedent(
    """
    import json, sys
    from glue_incremental.run import metrics
    from glue_incremental.args import resolve_options
    from glue_incremental.watermarks import Watermarks

    args = resolve_options(sys.argv, ["mode"], {"state": "{}", "rows": "0", "lag": None})
    store = Watermarks(args["watermarks_table"])
    name = args["watermark_name"] or args["JOB_NAME"]
    if args["mode"] == "fail":
        print("error: the probe was told to fail", file=sys.stderr)
        sys.exit(1)
    state = json.loads(args["state"])
    for slot in state:
        store.get_watermark(name, slot)
    store.commit_many(
        [store.create_watermark_item(name, args["JOB_RUN_ID"], slot=s, **v) for s, v in state.items()]
    )
    rows = int(args["rows"])
    lag = float(args["lag"]) if args["lag"] else None
    metrics.publish(metrics.RunMetrics(args["JOB_NAME"], rows, rows, watermark_lag_seconds=lag))
    print(json.dumps({"event": "run_summary", "records_read": rows, "records_written": rows,
                      "watermark_lag_seconds": lag}))
    """
)


def _outputs() -> dict:
    def pipeline(name: str, kind: str, upstreams: list[str]) -> dict:
        job = JOBS[name]
        return {
            "kind": kind,
            "job_name": job,
            "state_name": job,
            "upstreams": upstreams,
            "alarm_names": {"zero_records": f"{job}-zero-records"},
        }

    return {
        "environment": "local",
        "watermarks_table_name": TABLE,
        "pipelines": {
            "orders": pipeline("orders", "load", []),
            "customers": pipeline("customers", "load", []),
            "orders_enriched": pipeline("orders_enriched", "join", ["customers", "orders"]),
        },
    }


@pytest.fixture
def environment(aws, monkeypatch):
    deploy_probe(BUCKET, PROBE)
    create_table(TABLE)
    for job in JOBS.values():
        aws_client("glue").create_job(
            Name=job,
            Role="arn:aws:iam::123456789012:role/glue",
            Command={
                "Name": "glueetl",
                "ScriptLocation": f"s3://{BUCKET}/releases/0123456789abcdef/probe.py",
            },
            DefaultArguments={
                "--extra-py-files": f"s3://{BUCKET}/releases/0123456789abcdef/glue_incremental.zip",
                "--mode": "ok",
            },
            NonOverridableArguments={"--watermarks_table": TABLE, "--watermark_name": job},
            Timeout=10,
        )
        aws_client("cloudwatch").put_metric_alarm(
            AlarmName=f"{job}-zero-records",
            Namespace="GlueIncremental",
            MetricName="RecordsRead",
            Dimensions=[{"Name": "JobName", "Value": job}],
            Statistic="Maximum",
            Period=10,  # LocalStack evaluates it every period
            EvaluationPeriods=1,
            Threshold=0,
            ComparisonOperator="LessThanOrEqualToThreshold",
            TreatMissingData="notBreaching",
        )
    outputs = _outputs()
    monkeypatch.setattr(deploy, "terraform_outputs", lambda env, **_: outputs)
    return outputs


def aws_client(service: str):
    return aws.client(service)


def run(pipeline: str, tmp_path, **arguments: str) -> runner.JobRun:
    given = {f"--{k}": v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    return runner.run_job(JOBS[pipeline], given, log_dir=tmp_path)


def test_status_shows_runs_rows_watermarks_alarms_and_pending_upstream(environment, tmp_path):
    run(
        "orders",
        tmp_path,
        state={"default": {"cursor": "2024-05-01T10:00:00Z"}},
        rows="5",
        lag="60",
    )
    run("customers", tmp_path, state={"default": {"cursor": "2024-05-01T09:00:00Z"}}, rows="0")
    upstream = {"job": JOBS["orders"], "version": 1}
    run(
        "orders_enriched",
        tmp_path,
        state={
            "left": {"upstream": upstream, "pending_partitions": [["2024-05-01"]]},
            "right": {"upstream": {"job": JOBS["customers"], "version": 1}},
        },
        rows="5",
    )
    # orders commits again after the join read it; the join then fails once.
    run(
        "orders",
        tmp_path,
        state={"default": {"cursor": "2024-05-01T11:00:00Z"}},
        rows="2",
        lag="30",
    )
    failed = run("orders_enriched", tmp_path, mode="fail")
    assert failed.state == "FAILED"
    assert wait_for_alarm_state(f"{JOBS['customers']}-zero-records", "ALARM", 25) == "ALARM"
    assert wait_for_alarm_state(f"{JOBS['orders']}-zero-records", "OK", 25) == "OK"

    rows = {row.pipeline: row for row in status.environment_status("local")}

    assert list(rows) == ["customers", "orders", "orders_enriched"]
    orders, customers, join = rows["orders"], rows["customers"], rows["orders_enriched"]
    assert orders.last_run_state == "SUCCEEDED" and orders.records_written == 2
    assert orders.watermark == "2024-05-01T11:00:00Z" and orders.watermark_version == 2
    assert orders.lag_seconds == 30 and orders.alarms == {"zero_records": "OK"}
    assert customers.records_read == 0 and customers.alarms == {"zero_records": "ALARM"}
    assert join.last_run_state == "FAILED" and join.last_run_id == failed.run_id
    # The failed run published no figures: the earlier run's 5 rows are not shown as its own.
    assert join.records_read is None and join.records_written is None
    assert join.pending_partitions == 1
    assert join.upstream_commits_pending == {"orders": 1, "customers": 0}


def test_the_command_prints_one_table_or_json(environment, tmp_path, capsys):
    run("orders", tmp_path, state={"default": {"cursor": "2024-05-01T10:00:00Z"}}, rows="5")

    assert main(["status", "--env", "local", "--since", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["PIPELINE", "JOB", "KIND"]
    assert [line.split()[0] for line in table[1:]] == ["customers", "orders", "orders_enriched"]
    assert "never" in table[1] and "SUCCEEDED" in table[2]

    assert main(["status", "--env", "local", "--json", "--since", "1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["pipeline"] for r in rows] == ["customers", "orders", "orders_enriched"]
    assert rows[1]["records_read"] == 5 and rows[0]["last_run_state"] is None


def test_an_environment_without_pipelines_is_one_clear_error(aws, monkeypatch, capsys):
    monkeypatch.setattr(deploy, "terraform_outputs", lambda env, **_: {"job_names": {}})
    assert main(["status", "--env", "local"]) == 2
    assert "no `pipelines` output" in capsys.readouterr().err
