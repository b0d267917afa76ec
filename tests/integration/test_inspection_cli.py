"""``target``, ``runs``, ``logs``, ``pages``, ``env`` and ``watermarks show`` on the emulators.

A tiny pipeline ``orders`` of environment ``local``: a probe job (no Spark) run twice
by the local runner, once failing; a Parquet target in LocalStack's S3 laid out as a
publish leaves it (with a run's staging beside it); a committed watermark; a page on the
on-call topic, delivered to its queue. Every command ``docs/local-tools.md`` shows runs
here, as written.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental import aws
from glue_incremental.watermarks import Watermarks, create_table
from glue_incremental_tools import cli, deploy, iceberg_catalog, runner
from glue_incremental_tools.localendpoint import DUMMY_ENV

from tests.harness.glue_iceberg import append_run, create_glue_table
from tests.harness.probe import deploy_probe

ROOT = Path(__file__).resolve().parents[2]
CLI = ".venv/bin/python -m glue_incremental "
SCRIPTS = "gi-local-scripts"
LAKE = "gi-local-lake"
JOB = "gi-local-orders"
WATERMARKS = "gi-local-watermarks"
PROBE = textwrap.dedent(
    """
    import json, sys
    from glue_incremental.args import resolve_options

    args = resolve_options(sys.argv, ["mode"], {})
    print("reading orders")
    print(json.dumps({"event": "run_summary", "records_read": 3, "records_written": 2}))
    if args["mode"] == "fail":
        print("error: column 'amount' holds 'abc' in row 7", file=sys.stderr)
        sys.exit(1)
    """
)
# The local stack's orders, as the guides' commands name them: a day's orders by id.
ROWS = [
    {"order_id": "20240501-001", "amount": 10.5, "order_date": "2024-05-01"},
    {"order_id": "20240501-002", "amount": 30.0, "order_date": "2024-05-01"},
    {"order_id": "20240502-001", "amount": 20.0, "order_date": "2024-05-02"},
]
DAYS = ("2024-05-01", "2024-05-02")


def outputs(queue_url: str, **pipeline: object) -> dict:
    return {
        "watermarks_table_name": WATERMARKS,
        "scripts_bucket_name": SCRIPTS,
        "oncall_queue_url": queue_url,
        "pipelines": {
            "orders": {
                "kind": "load",
                "job_name": JOB,
                "state_name": JOB,
                "upstreams": [],
                "target_path": f"s3://{LAKE}/orders/",
                "run_arguments": {"--target_path": f"s3://{LAKE}/orders/"},
                **pipeline,
            }
        },
    }


def put_parquet(key: str, rows: list[dict]) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    aws.client("s3").put_object(Bucket=LAKE, Key=key, Body=buffer.getvalue())


@pytest.fixture
def pipeline(aws, monkeypatch):
    """The pipeline ``orders``: its job, a target, a watermark and a page; the queue's URL."""
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    deploy_probe(SCRIPTS, PROBE)
    aws_glue = aws_client("glue")
    aws_glue.create_job(
        Name=JOB,
        Role="arn:aws:iam::123456789012:role/glue",
        Command={
            "Name": "glueetl",
            "ScriptLocation": f"s3://{SCRIPTS}/releases/0123456789abcdef/probe.py",
        },
        DefaultArguments={
            "--extra-py-files": f"s3://{SCRIPTS}/releases/0123456789abcdef/glue_incremental.zip",
            "--mode": "ok",
            "--custom-logGroup-prefix": f"/aws-glue/jobs/{JOB}",
        },
    )

    aws_client("s3").create_bucket(Bucket=LAKE)
    for day in DAYS:
        put_parquet(
            f"orders/order_date={day}/part-00000-{day}.snappy.parquet",
            [
                {k: v for k, v in row.items() if k != "order_date"}
                for row in ROWS
                if row["order_date"] == day
            ],
        )
    # What a reader never sees: a run's staged rows, its intent, the recorded schema.
    put_parquet(
        "orders/_staging/jr_x/data/order_date=2024-05-01/part-9.parquet",
        [{"order_id": "20240501-001", "amount": 0.0}],
    )
    aws_client("s3").put_object(Bucket=LAKE, Key="orders/_staging/jr_x/_intent.json", Body=b"{}")
    aws_client("s3").put_object(Bucket=LAKE, Key="orders/_schema.json", Body=b"{}")

    create_table(WATERMARKS)
    store = Watermarks(WATERMARKS)
    store.get_watermark(JOB)
    store.add_watermark(
        store.create_watermark_item(JOB, "jr_loaded", cursor=datetime(2024, 5, 1, 12, tzinfo=UTC))
    )

    queue_url = page_queue()
    monkeypatch.setattr(deploy, "terraform_outputs", lambda env, **_: outputs(queue_url))
    return queue_url


@pytest.fixture
def runs(pipeline) -> dict[str, runner.JobRun]:
    """Two runs of the pipeline by the local runner: one succeeds, the later one fails."""
    return {"ok": runner.run_job(JOB), "failed": runner.run_job(JOB, {"--mode": "fail"})}


def page_queue() -> str:
    """The on-call topic delivering raw to a queue (as the local root does), one alarm page on it."""
    sqs, sns = aws_client("sqs"), aws_client("sns")
    queue_url = sqs.create_queue(QueueName="gi-local-oncall-pages")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    topic = sns.create_topic(Name="gi-local-oncall")["TopicArn"]
    sns.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=queue_arn,
        Attributes={"RawMessageDelivery": "true"},
    )
    alarm = {
        "AlarmName": f"{JOB}-zero-records",
        "NewStateValue": "ALARM",
        "NewStateReason": "0 new records in 3 periods",
        "StateChangeTime": "2024-05-01T12:00:00.000+0000",
    }
    sns.publish(TopicArn=topic, Message=json.dumps(alarm))
    return queue_url


def aws_client(service: str):
    return aws.client(service)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def documented_commands() -> list[str]:
    text = (ROOT / "docs" / "local-tools.md").read_text()
    block = text.split("<!-- inspect-commands:begin -->", 1)[1].split(
        "<!-- inspect-commands:end -->"
    )[0]
    lines = [re.split(r"\s+#\s", line, maxsplit=1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("```")]


def test_runs_show_a_failed_run_as_failed_and_logs_print_the_runs_log(runs, capsys):
    states = {
        r["Id"]: r["JobRunState"] for r in aws_client("glue").get_job_runs(JobName=JOB)["JobRuns"]
    }
    assert states[runs["failed"].run_id] == "SUCCEEDED"  # moto's stub: why the record wins

    code, out, err = run(capsys, "runs", "orders", "--env", "local")

    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"job {JOB}: newest first" and lines[1].split()[:2] == ["RUN", "ID"]
    failed, ok = lines[2], lines[3]  # newest first
    assert failed.split()[:2] == [runs["failed"].run_id, "FAILED"]
    assert "3/2" in failed and failed.endswith("column 'amount' holds 'abc' in row 7")
    assert ok.split()[:2] == [runs["ok"].run_id, "SUCCEEDED"]

    _, out, _ = run(capsys, "runs", JOB, "--env", "local", "--json", "--limit", "1")
    (row,) = json.loads(out)
    assert (row["state"], row["records_read"], row["source"]) == ("FAILED", 3.0, "runner record")

    code, out, _ = run(capsys, "logs", "orders", "--env", "local")
    assert code == 0
    assert out.splitlines()[0] == f"# s3://{SCRIPTS}/runs/{JOB}/{runs['failed'].run_id}.log"
    assert "stderr: error: column 'amount' holds 'abc' in row 7" in out.splitlines()

    _, out, _ = run(capsys, "logs", "orders", "--env", "local", "--run", runs["ok"].run_id)
    assert "reading orders" in out and "error:" not in out

    code, out, err = run(capsys, "logs", "orders", "--env", "local", "--run", "jr_nope")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "run jr_nope of gi-local-orders has no log" in err


def test_the_target_shows_only_published_rows_with_schema_partitions_and_lookups(pipeline, capsys):
    code, out, err = run(capsys, "target", "orders", "--env", "local", "--json")
    assert (code, err) == (0, "")
    shown = json.loads(out)
    assert shown["row_count"] == len(ROWS)
    assert sorted(shown["rows"], key=lambda r: r["order_id"]) == ROWS
    assert [c["name"] for c in shown["schema"]] == ["order_id", "amount", "order_date"]
    assert [(p["partition"], p["rows"]) for p in shown["partitions"]] == [
        ("order_date=2024-05-01", 2),
        ("order_date=2024-05-02", 1),
    ]

    key = "order_id=20240501-001"
    _, out, _ = run(capsys, "target", "orders", "--env", "local", "--key", key, "--json")
    assert json.loads(out)["rows"] == [ROWS[0]]  # the live row, not the staged one

    code, out, err = run(capsys, "target", "orders", "--env", "local", "--where", "amount=x")
    assert code == 2 and out == "" and "--where amount=x: not a double value" in err


def test_the_target_of_an_iceberg_pipeline_is_its_current_snapshot(aws, monkeypatch, capsys):
    table = create_glue_table(LAKE, "sales", "orders")
    append_run(table, "jr_1", JOB, [(1, "a"), (2, "b")])
    monkeypatch.setattr(
        deploy,
        "terraform_outputs",
        lambda env, **_: outputs(
            "", run_arguments={"--target_format": "iceberg", "--target_table": "sales.orders"}
        ),
    )

    code, out, err = run(capsys, "target", "orders", "--env", "local", "--where", "id=2", "--json")

    assert (code, err) == (0, "")
    shown = json.loads(out)
    current = iceberg_catalog.open_catalog().load_table(("sales", "orders")).current_snapshot()
    assert (shown["format"], shown["row_count"], shown["matched"]) == ("iceberg", 2, 1)
    assert shown["rows"] == [{"id": 2, "value": "b"}]
    assert shown["snapshot"] == str(current.snapshot_id)


def test_pages_shows_the_alarm_without_taking_it_off_the_queue(pipeline, capsys):
    code, out, _ = run(capsys, "pages", "--env", "local", "--wait", "2")
    assert code == 0
    assert out.splitlines()[0].split()[1:] == ["alarm", "ALARM", f"{JOB}-zero-records"]
    assert "0 new records in 3 periods" in out

    _, again, _ = run(capsys, "pages", "--env", "local", "--json")
    assert [page["name"] for page in json.loads(again)] == [f"{JOB}-zero-records"]


def test_pages_shows_every_page_of_a_queue_holding_more_than_ten(pipeline, capsys):
    topic = aws_client("sns").create_topic(Name="gi-local-oncall")["TopicArn"]
    for number in range(14):
        alarm = {"AlarmName": f"{JOB}-{number}", "NewStateValue": "ALARM", "NewStateReason": "-"}
        aws_client("sns").publish(TopicArn=topic, Message=json.dumps(alarm))
    expected = {f"{JOB}-zero-records", *(f"{JOB}-{number}" for number in range(14))}

    for _reader in ("first", "next"):
        code, out, _ = run(capsys, "pages", "--env", "local", "--json")
        assert code == 0
        assert {page["name"] for page in json.loads(out)} == expected


def test_pages_in_an_account_names_the_topics_subscriptions(aws, monkeypatch, capsys):
    monkeypatch.setattr(
        deploy,
        "terraform_outputs",
        lambda env, **_: {"oncall_topic_arn": "arn:aws:sns:us-east-1:1:gi-local-oncall"},
    )
    code, out, err = run(capsys, "pages", "--env", "local")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (
        "aws sns list-subscriptions-by-topic --topic-arn arn:aws:sns:us-east-1:1:gi-local-oncall"
        in err
    )


def test_env_prints_exports_that_alone_route_the_aws_cli_to_the_stack(aws, capsys):
    code, out, _ = run(capsys, "env", "--env", "local")
    assert code == 0
    exports = out.splitlines()
    assert f"export AWS_ENDPOINT_URL_GLUE={aws.glue_url}" in exports
    assert f"export AWS_ENDPOINT_URL_DYNAMODB={aws.dynamodb_url}" in exports
    aws_client("s3").create_bucket(Bucket="gi-seen-through-the-exports")
    # A shell with no AWS variable at all: only the printed lines route it.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    clean |= {"AWS_CONFIG_FILE": DUMMY_ENV["AWS_CONFIG_FILE"]}
    listed = subprocess.run(
        ["bash", "-c", f"{out}\naws s3 ls"], env=clean, capture_output=True, text=True, check=True
    )
    assert "gi-seen-through-the-exports" in listed.stdout
    # SQS too, with the installed CLI: v1 ignores the SQS endpoint variable without the
    # printed `aws` function ("Could not connect to ... https://queue.amazonaws.com/").
    aws_client("sqs").create_queue(QueueName="gi-seen-through-the-exports")
    queues = subprocess.run(
        ["bash", "-c", f"{out}\naws sqs list-queues"], env=clean, capture_output=True, text=True
    )
    assert "gi-seen-through-the-exports" in queues.stdout, queues.stderr


def test_watermarks_show_prints_the_cursor_in_iso_utc(pipeline, capsys):
    code, out, _ = run(capsys, "watermarks", "--env", "local", "show", "orders")
    assert code == 0 and "cursor=2024-05-01T12:00:00Z" in out


def test_every_command_the_guides_show_runs_on_the_local_stack(runs, capsys):
    commands = documented_commands()
    assert len(commands) >= 8
    for command in commands:
        if command.startswith(CLI):
            code, out, err = run(capsys, *shlex.split(command.removeprefix(CLI)))
            assert (code, err) == (0, ""), command
            assert out, command
    shell = "\n".join(
        re.sub(r"^\.venv/bin/python", str(ROOT / ".venv" / "bin" / "python"), line).replace(
            "$(.venv/bin/python", f"$({ROOT / '.venv' / 'bin' / 'python'}"
        )
        for line in commands
        if not line.startswith(CLI)
    )
    completed = subprocess.run(
        ["bash", "-ec", shell], cwd=ROOT, capture_output=True, text=True, env=dict(os.environ)
    )
    assert completed.returncode == 0, completed.stderr
    assert LAKE in completed.stdout

    # The runbook's first commands, for prod there, on this stack here.
    runbook = (ROOT / "docs" / "runbook.md").read_text()
    block = runbook.split("<!-- runbook-first-commands:begin -->", 1)[1].split(
        "<!-- runbook-first-commands:end -->"
    )[0]
    commands = [
        re.split(r"\s+#\s", line.strip(), maxsplit=1)[0]
        for line in block.splitlines()
        if line.strip().startswith(CLI)
    ]
    assert len(commands) >= 6
    for command in commands:
        local = command.replace("--env prod", "--env local").replace("gi-prod-", "gi-local-")
        code, out, err = run(capsys, *shlex.split(local.removeprefix(CLI)))
        assert (code, err) == (0, ""), command
        assert out, command


def test_a_run_without_a_runner_record_reads_its_rows_and_log_from_cloudwatch_logs(
    pipeline, capsys
):
    # As in an account: Glue ran the job, its streams are in CloudWatch Logs, no record.
    run_id = aws_client("glue").start_job_run(JobName=JOB)["JobRunId"]
    logs = aws_client("logs")
    for group, message in (
        ("output", json.dumps({"event": "run_summary", "records_read": 5, "records_written": 4})),
        ("error", "WARN a warning of the run"),
    ):
        logs.create_log_group(logGroupName=f"/aws-glue/jobs/{JOB}/{group}")
        logs.create_log_stream(logGroupName=f"/aws-glue/jobs/{JOB}/{group}", logStreamName=run_id)
        logs.put_log_events(
            logGroupName=f"/aws-glue/jobs/{JOB}/{group}",
            logStreamName=run_id,
            logEvents=[
                {"timestamp": int(datetime.now(UTC).timestamp() * 1000), "message": message}
            ],
        )

    code, out, _ = run(capsys, "runs", "orders", "--env", "local", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["run_id"], row["source"]) == (run_id, "glue")
    assert (row["records_read"], row["records_written"]) == (5.0, 4.0)

    code, out, _ = run(capsys, "logs", "orders", "--env", "local", "--run", run_id)
    assert code == 0
    assert out.splitlines()[0].startswith(f"# CloudWatch Logs /aws-glue/jobs/{JOB}/output")
    assert "stderr: WARN a warning of the run" in out.splitlines()
    assert any('"run_summary"' in line for line in out.splitlines())


def one_line_refusal(code: int, out: str, err: str) -> bool:
    return code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ("target", "nope", "--env", "local"),
        ("runs", "nope", "--env", "local"),
        ("logs", "nope", "--env", "local"),
        ("watermarks", "--env", "local", "show", "nope"),
    ],
    ids=lambda argv: argv[0],
)
def test_a_pipeline_that_does_not_exist_is_one_line_naming_it(pipeline, capsys, argv):
    code, out, err = run(capsys, *argv)

    assert one_line_refusal(code, out, err), err
    assert "nope" in err


def test_a_pipeline_never_run_shows_no_runs_and_no_log_without_a_traceback(pipeline, capsys):
    code, out, err = run(capsys, "runs", "orders", "--env", "local")
    assert (code, err) == (0, "")
    assert "Traceback" not in out

    code, out, err = run(capsys, "logs", "orders", "--env", "local")
    assert one_line_refusal(code, out, err), err


def test_an_empty_parquet_target_shows_no_rows(pipeline, monkeypatch, capsys):
    empty = f"s3://{LAKE}/never_loaded/"
    monkeypatch.setattr(
        deploy,
        "terraform_outputs",
        lambda env, **_: outputs(
            pipeline, target_path=empty, run_arguments={"--target_path": empty}
        ),
    )

    code, out, err = run(capsys, "target", "orders", "--env", "local", "--json")

    if code == 0:
        assert err == "" and json.loads(out)["row_count"] == 0
    else:
        assert one_line_refusal(code, out, err), err


def test_an_iceberg_table_without_a_snapshot_shows_no_rows(aws, monkeypatch, capsys):
    create_glue_table(LAKE, "sales", "orders")
    monkeypatch.setattr(
        deploy,
        "terraform_outputs",
        lambda env, **_: outputs(
            "", run_arguments={"--target_format": "iceberg", "--target_table": "sales.orders"}
        ),
    )

    code, out, err = run(capsys, "target", "orders", "--env", "local", "--json")

    if code == 0:
        assert err == "" and json.loads(out)["row_count"] == 0
    else:
        assert one_line_refusal(code, out, err), err


def test_watermarks_show_of_a_pipeline_with_no_watermark_yet_is_not_a_traceback(
    aws, monkeypatch, capsys
):
    create_table(WATERMARKS)
    monkeypatch.setattr(deploy, "terraform_outputs", lambda env, **_: outputs(""))

    code, out, err = run(capsys, "watermarks", "--env", "local", "show", "orders")

    assert "Traceback" not in out + err
    assert code in (0, 2)
