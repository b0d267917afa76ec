"""The local Glue runner: job definition from the Glue API, deployed artifacts, Glue's argv.

The scripts here are tiny probes (no Spark): they print what they were given.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental_tools import deploy, runner
from glue_incremental_tools.cli import main

from tests.harness.probe import deploy_probe

BUCKET = "gi-test-runner"
JOB = "t-probe"
PROBE = textwrap.dedent(
    """
    import json, os, sys
    import glue_incremental
    from glue_incremental.args import resolve_options

    args = resolve_options(sys.argv, ["mode"], {"a": None, "b": None, "c": None})
    print(json.dumps({"argv": sys.argv[1:], "library": glue_incremental.__file__, "cwd": os.getcwd()}))
    print(json.dumps({"event": "run_summary", "records_read": 3, "records_written": 2}))
    if args["mode"] == "fail":
        print("error: the probe was told to fail", file=sys.stderr)
        sys.exit(1)
    if args["mode"] == "sleep":
        import time
        time.sleep(30)
    """
)


@pytest.fixture
def job(aws):
    """The probe deployed (library zip built by deploy) and a job that runs it."""
    deploy_probe(BUCKET, PROBE)
    aws_client("glue").create_job(
        Name=JOB,
        Role="arn:aws:iam::123456789012:role/glue",
        Command={
            "Name": "glueetl",
            "ScriptLocation": f"s3://{BUCKET}/releases/0123456789abcdef/probe.py",
        },
        DefaultArguments={
            "--extra-py-files": f"s3://{BUCKET}/releases/0123456789abcdef/glue_incremental.zip",
            "--a": "default-a",
            "--b": "default-b",
            "--mode": "ok",
            "--job-bookmark-option": "job-bookmark-enable",
        },
        NonOverridableArguments={"--c": "locked-c"},
        Timeout=60,
    )
    return JOB


def aws_client(service: str):
    return aws.client(service)


def probe_output(run: runner.JobRun) -> dict:
    log = Path(run.log_path).read_text().splitlines()
    return json.loads(next(line for line in log if line.startswith('{"argv"')))


def test_runs_the_deployed_script_with_glues_argv_and_precedence(job, tmp_path):
    run = runner.run_job(job, {"--b": "run-b", "--c": "run-c"}, log_dir=tmp_path)

    assert run.state == runner.SUCCEEDED and run.exit_code == 0
    probe = probe_output(run)
    argv = probe["argv"]
    assert argv[:4] == ["--JOB_NAME", JOB, "--JOB_RUN_ID", run.run_id]
    pairs = dict(zip(argv[4::2], argv[5::2], strict=True))
    assert pairs["--a"] == "default-a"  # DefaultArguments
    assert pairs["--b"] == "run-b"  # overlaid by the run's arguments
    assert pairs["--c"] == "locked-c"  # NonOverridableArguments win
    assert pairs["--job-bookmark-option"] == "job-bookmark-enable"
    assert any("--c is non-overridable" in warning for warning in run.warnings)
    # The DEPLOYED library ran, from the downloaded zip, not the working tree.
    assert ".zip" in probe["library"] and "/lib/glue_incremental/" not in probe["library"]
    assert probe["cwd"] != str(deploy.project_root())
    # The run id is Glue's, and Glue recorded the run's arguments.
    glue_run = aws_client("glue").get_job_run(JobName=JOB, RunId=run.run_id)["JobRun"]
    assert glue_run["Arguments"]["--b"] == "run-b" and glue_run["Arguments"]["--c"] == "locked-c"
    assert run.summary == {"event": "run_summary", "records_read": 3, "records_written": 2}


def test_the_final_state_is_recorded_and_emitted(job, tmp_path):
    events = aws_client("events")
    sqs = aws_client("sqs")
    queue = sqs.create_queue(QueueName="glue-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="glue-runs",
        EventPattern=json.dumps({"source": ["aws.glue"], "detail-type": ["Glue Job State Change"]}),
    )
    events.put_targets(Rule="glue-runs", Targets=[{"Id": "q", "Arn": arn}])

    ok = runner.run_job(job, log_dir=tmp_path)
    failed = runner.run_job(job, {"--mode": "fail"}, log_dir=tmp_path)

    assert ok.state == "SUCCEEDED" and ok.error_message is None
    assert failed.state == "FAILED" and failed.exit_code == 1
    assert failed.error_message == "the probe was told to fail"
    record = runner.get_run_record(job, failed.run_id)
    assert record["JobRunState"] == "FAILED" and record["Id"] == failed.run_id
    assert record["ErrorMessage"] == "the probe was told to fail"
    assert record["Arguments"]["--mode"] == "fail"
    assert failed.record_uri == f"s3://{BUCKET}/runs/{JOB}/{failed.run_id}.json"
    log = (
        aws_client("s3")
        .get_object(Bucket=BUCKET, Key=f"runs/{JOB}/{failed.run_id}.log")["Body"]
        .read()
    )
    assert b"the probe was told to fail" in log
    assert runner.get_run_record(job, ok.run_id)["JobRunState"] == "SUCCEEDED"

    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    details = sorted((json.loads(m["Body"])["detail"] for m in messages), key=lambda d: d["state"])
    assert [d["state"] for d in details] == ["FAILED", "SUCCEEDED"]
    assert details[0] == {
        "jobName": JOB,
        "jobRunId": failed.run_id,
        "state": "FAILED",
        "severity": "ERROR",
        "message": "the probe was told to fail",
    }
    assert json.loads(messages[0]["Body"])["source"] == "aws.glue"


def test_a_run_over_the_jobs_timeout_is_stopped(job, tmp_path):
    run = runner.run_job(job, {"--mode": "sleep"}, log_dir=tmp_path, timeout_seconds=3)

    assert run.state == runner.TIMEOUT and run.exit_code is None
    assert "timeout" in run.error_message
    assert runner.get_run_record(job, run.run_id)["JobRunState"] == "TIMEOUT"


def test_the_command_line_exits_by_the_runs_state(job, capsys):
    assert main(["run", JOB, "--quiet"]) == 0
    assert "SUCCEEDED" in capsys.readouterr().out

    assert main(["run", JOB, "--quiet", "--arguments", '{"--mode": "fail"}']) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "error: the probe was told to fail" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{not json", "--arguments is not JSON"),
        ('["--a"]', "must be a JSON object"),
        ('{"a": "x"}', "must start with --"),
        ('{"--a": 1}', "must be a string"),
    ],
)
def test_bad_arguments_are_one_clear_error(job, capsys, arguments, message):
    assert main(["run", JOB, "--arguments", arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def test_an_unknown_job_names_the_known_ones(job, capsys):
    assert main(["run", "t-nope"]) == 2
    err = capsys.readouterr().err
    assert "no Glue job 't-nope'" in err and JOB in err


def test_a_missing_artifact_says_deploy_first(job, capsys):
    aws_client("s3").delete_object(
        Bucket=BUCKET, Key="releases/0123456789abcdef/glue_incremental.zip"
    )

    assert main(["run", JOB]) == 2
    assert "glue_incremental.zip does not exist: deploy first" in capsys.readouterr().err
    assert aws_client("glue").get_job_runs(JobName=JOB)["JobRuns"] == []  # nothing started


def test_the_run_record_never_holds_a_password(job, tmp_path):
    run = runner.run_job(
        job,
        {
            "--mode": "ok",
            "--a": "jdbc:postgresql://app:tiger@db/shop",
            "--source_password": "tiger",
        },
        log_dir=tmp_path,
    )

    record = json.dumps(runner.get_run_record(job, run.run_id))
    assert "tiger" not in record
