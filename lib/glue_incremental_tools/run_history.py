"""``runs PIPELINE`` and ``logs PIPELINE [--run RUN_ID]`` (``--env ENV``): a pipeline's runs.

``runs`` lists the recent runs, newest first, with their true state, rows read and
written, and the error line. The Glue API (``GetJobRuns``) says which runs exist; a run
the local runner ran has its authoritative record beside the job's script
(``s3://<bucket>/runs/<job>/<run_id>.json``, ``runner``), which wins: the local Glue
(moto) reports every run SUCCEEDED, also one whose script failed. In an account there is
no record and Glue's own state stands; rows come from the run's ``run_summary`` log line.

``logs`` prints one run's log, the latest run by default: the local runner's
``runs/<job>/<run_id>.log``, else the run's streams in CloudWatch Logs
(``<prefix>/output`` and ``<prefix>/error``, the job's ``--custom-logGroup-prefix``,
else Glue's ``/aws-glue/jobs``; streams named by the run id). Nothing is written.
Design: ``docs/local-tools.md``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from glue_incremental import aws

from glue_incremental_tools import runner
from glue_incremental_tools.errors import CommandError

DEFAULT_RUNS = 10
GLUE_LOG_PREFIX = "/aws-glue/jobs"
LOG_PREFIX_ARGUMENT = "--custom-logGroup-prefix"
SUMMARY_PATTERN = '"run_summary"'
# Glue's default job timeout, for a run that does not carry its job's.
GLUE_DEFAULT_TIMEOUT_MINUTES = 2880
RUNNING, NO_RECORD = "RUNNING", "NO RECORD"


@dataclass(frozen=True)
class RunRow:
    """One run as ``runs`` shows it; None where nothing is known."""

    run_id: str
    state: str
    started_on: str | None
    completed_on: str | None
    seconds: float | None
    records_read: float | None
    records_written: float | None
    error: str | None
    source: str  # "runner record" or "glue"

    def cells(self) -> list[str]:
        rows = "-"
        if self.records_read is not None or self.records_written is not None:
            rows = f"{_number(self.records_read)}/{_number(self.records_written)}"
        return [
            self.run_id,
            self.state,
            self.started_on or "-",
            "-" if self.seconds is None else f"{self.seconds:.0f}s",
            rows,
            self.error or "",
        ]


def merge_run(glue_run: Mapping[str, Any], record: Mapping[str, Any] | None) -> RunRow:
    """A run row from Glue's ``JobRun`` and, when there is one, the local runner's record.

    The record is authoritative for state, times, error and summary (see the module
    docstring); without it Glue's fields stand.
    """
    merged = dict(glue_run)
    if record:
        merged.update(
            {
                key: record[key]
                for key in ("JobRunState", "StartedOn", "CompletedOn", "ErrorMessage", "Summary")
                if key in record
            }
        )
        if record.get("ExecutionTime") is not None:
            merged["ExecutionTime"] = record["ExecutionTime"]
    summary = merged.get("Summary") or {}
    started, completed = iso_time(merged.get("StartedOn")), iso_time(merged.get("CompletedOn"))
    seconds = merged.get("ExecutionTime")
    return RunRow(
        run_id=str(merged["Id"]),
        state=str(merged.get("JobRunState") or "UNKNOWN"),
        started_on=started,
        completed_on=completed,
        seconds=None if seconds is None else float(seconds),
        records_read=_float(summary.get("records_read")),
        records_written=_float(summary.get("records_written")),
        error=" ".join(str(merged["ErrorMessage"]).split()) if merged.get("ErrorMessage") else None,
        source="runner record" if record else "glue",
    )


def unrecorded(glue_run: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A local run without the runner's record, which the runner writes when the run ends
    (the local Glue says SUCCEEDED at once): RUNNING until the job's timeout has passed
    since its start; after it, the runner stopped without one (killed, the machine gone)
    and nothing says how the run ended: NO RECORD."""
    timeout = float(glue_run.get("Timeout") or GLUE_DEFAULT_TIMEOUT_MINUTES)
    going = {**glue_run, "JobRunState": RUNNING, "CompletedOn": None, "ExecutionTime": None}
    if now - _started(glue_run) <= timedelta(minutes=timeout):
        return going
    return {
        **going,
        "JobRunState": NO_RECORD,
        "ErrorMessage": f"no record {timeout:g} min (the job's timeout) after its start "
        "(the runner stopped?)",
    }


def recent_runs(
    job_name: str, limit: int = DEFAULT_RUNS, *, local: bool = False, now: datetime | None = None
) -> list[RunRow]:
    """The job's latest ``limit`` runs, newest first (see the module docstring); ``local``:
    a run with neither the runner's record nor a summary in CloudWatch Logs is ``unrecorded``."""
    glue_runs = _glue_runs(job_name)
    glue_runs.sort(key=lambda run: _started(run), reverse=True)
    glue_runs = glue_runs[:limit]
    bucket = _scripts_bucket(job_name)
    recorded = _recorded_run_ids(bucket, job_name) if bucket else set()
    rows = []
    for glue_run in glue_runs:
        record = None
        if glue_run["Id"] in recorded and bucket:
            record = _read_json(bucket, _key(job_name, glue_run["Id"], "json"))
        if record is None and glue_run.get("JobRunState") not in ("RUNNING", "STARTING"):
            summary = _logged_summary(job_name, glue_run["Id"])
            if local and summary is None:  # no record and no summary logged: not ended yet
                glue_run = unrecorded(glue_run, now or datetime.now(UTC))
            else:
                glue_run = {**glue_run, "Summary": summary}
        rows.append(merge_run(glue_run, record))
    return rows


def run_log(job_name: str, run_id: str | None) -> tuple[str, Iterator[str]]:
    """(where the log is, its lines) of ``run_id``, or of the latest run when None."""
    if run_id is None:
        runs = _glue_runs(job_name)
        if not runs:
            raise CommandError(f"job {job_name} has no runs yet")
        run_id = str(max(runs, key=_started)["Id"])
    bucket = _scripts_bucket(job_name)
    if bucket:
        key = _key(job_name, run_id, "log")
        body = _read_bytes(bucket, key)
        if body is not None:
            return f"s3://{bucket}/{key}", iter(body.decode(errors="replace").splitlines())
    prefix = _log_group_prefix(job_name)
    groups = [f"{prefix}/output", f"{prefix}/error"]
    lines = list(_cloudwatch_lines(groups, run_id))
    if not lines:
        raise CommandError(
            f"run {run_id} of {job_name} has no log: no s3://{bucket or '<bucket>'}/"
            f"{_key(job_name, run_id, 'log')} and no stream {run_id} in {', '.join(groups)}"
        )
    return f"CloudWatch Logs {', '.join(groups)} (streams {run_id}*)", iter(lines)


# -- sources ------------------------------------------------------------------------------------


def _glue_runs(job_name: str) -> list[dict[str, Any]]:
    glue = aws.client("glue")
    runs: list[dict[str, Any]] = []
    token = None
    try:
        while True:
            page = glue.get_job_runs(JobName=job_name, **({"NextToken": token} if token else {}))
            runs += page.get("JobRuns", [])
            token = page.get("NextToken")
            if not token or len(runs) >= 200:
                return runs
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            raise CommandError(f"no Glue job {job_name!r}: apply terraform first") from None
        raise


def _started(run: Mapping[str, Any]) -> datetime:
    value = run.get("StartedOn")
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)


def _job(job_name: str) -> Mapping[str, Any]:
    try:
        return runner.get_job(job_name)
    except runner.RunnerError as error:
        raise CommandError(str(error)) from None


def _scripts_bucket(job_name: str) -> str | None:
    location = (_job(job_name).get("Command") or {}).get("ScriptLocation") or ""
    return location[5:].split("/", 1)[0] if location.startswith("s3://") else None


def _log_group_prefix(job_name: str) -> str:
    arguments = _job(job_name).get("DefaultArguments") or {}
    return str(arguments.get(LOG_PREFIX_ARGUMENT) or GLUE_LOG_PREFIX).rstrip("/")


def _key(job_name: str, run_id: str, suffix: str) -> str:
    return f"{runner.RUNS_PREFIX}/{job_name}/{run_id}.{suffix}"


def _recorded_run_ids(bucket: str, job_name: str) -> set[str]:
    """Run ids with a runner record; none when the bucket cannot be listed (an account)."""
    prefix = f"{runner.RUNS_PREFIX}/{job_name}/"
    try:
        pages = (
            aws.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        keys = [item["Key"] for page in pages for item in page.get("Contents", [])]
    except (ClientError, BotoCoreError):
        return set()
    return {key[len(prefix) : -len(".json")] for key in keys if key.endswith(".json")}


def _read_bytes(bucket: str, key: str) -> bytes | None:
    try:
        return bytes(aws.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"404", "NoSuchKey", "NotFound", "NoSuchBucket", "AccessDenied", "403"}:
            return None
        raise


def _read_json(bucket: str, key: str) -> dict[str, Any] | None:
    body = _read_bytes(bucket, key)
    if body is None:
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _cloudwatch_lines(groups: Sequence[str], run_id: str) -> Iterator[str]:
    logs = aws.client("logs")
    for group in groups:
        kwargs: dict[str, Any] = {"logGroupName": group, "logStreamNamePrefix": run_id}
        try:
            while True:
                page = logs.filter_log_events(**kwargs)
                for event in page.get("events", []):
                    tag = "stderr: " if group.endswith("/error") else ""
                    yield f"{tag}{event['message'].rstrip()}"
                if not page.get("nextToken"):
                    break
                kwargs["nextToken"] = page["nextToken"]
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise


def _logged_summary(job_name: str, run_id: str) -> dict[str, Any] | None:
    """The run's ``run_summary`` line in CloudWatch Logs (an account's runs), if any."""
    group = f"{_log_group_prefix(job_name)}/output"
    try:
        page = aws.client("logs").filter_log_events(
            logGroupName=group, logStreamNamePrefix=run_id, filterPattern=SUMMARY_PATTERN
        )
    except (ClientError, BotoCoreError):
        return None
    for event in reversed(page.get("events", [])):
        try:
            value = json.loads(event["message"])
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("event") == "run_summary":
            return value
    return None


# -- formatting ---------------------------------------------------------------------------------


def iso_time(value: Any) -> str | None:
    """A time as ``2026-11-29T19:52:34Z`` (a datetime, or the runner record's isoformat text)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


HEADERS = ["RUN ID", "STATE", "STARTED", "TIME", "ROWS READ/WRITTEN", "ERROR"]


def render_runs(rows: Sequence[RunRow]) -> str:
    cells = [row.cells() for row in rows]
    widths = [max(len(c) for c in column) for column in zip(HEADERS, *cells, strict=True)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [HEADERS, *cells]
    )


# -- command line -------------------------------------------------------------------------------


def register_runs(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs",
        help="a pipeline's recent runs: true state, rows read/written, error line",
        description="List a pipeline's recent runs: state (the local runner's record over "
        "Glue's), times, rows read/written and the error line.",
    )
    parser.add_argument("pipeline", metavar="PIPELINE", help="pipeline, job or state name")
    parser.add_argument("--env", required=True, help="environment (local, dev, prod)")
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_RUNS, help=f"runs to show ({DEFAULT_RUNS})"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=_cmd_runs)


def register_logs(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "logs",
        help="a run's log (the latest run by default)",
        description="Print a run's log: the local runner's record, else CloudWatch Logs.",
    )
    parser.add_argument("pipeline", metavar="PIPELINE", help="pipeline, job or state name")
    parser.add_argument("--env", required=True, help="environment (local, dev, prod)")
    parser.add_argument("--run", metavar="RUN_ID", help="the run (default: the latest)")
    parser.set_defaults(handler=_cmd_logs)


def _cmd_runs(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    from glue_incremental_tools.pipelines import open_pipeline

    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    pipeline = open_pipeline(args.env, args.pipeline)
    rows = recent_runs(pipeline.job_name, args.limit, local=args.env == "local")
    if args.json:
        out(json.dumps([asdict(row) for row in rows], indent=2))
    elif not rows:
        out(f"job {pipeline.job_name} has no runs yet")
    else:
        out(f"job {pipeline.job_name}: newest first")
        out(render_runs(rows))
    return 0


def _cmd_logs(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    from glue_incremental_tools.pipelines import open_pipeline

    pipeline = open_pipeline(args.env, args.pipeline)
    where, lines = run_log(pipeline.job_name, args.run)
    out(f"# {where}")
    for line in lines:
        out(line)
    return 0
