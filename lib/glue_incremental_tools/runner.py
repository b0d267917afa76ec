"""Run a deployed Glue job locally, the way Glue runs it.

``python -m glue_incremental run JOB_NAME [--arguments '{"--k": "v"}']`` reads the job
from the Glue API (``GetJob``), starts a run there (the run id is Glue's), downloads the
script and ``--extra-py-files`` so the DEPLOYED library runs, passes argv as Glue does
(defaults, then the run's arguments, then non-overridable ones), and records SUCCEEDED,
FAILED or TIMEOUT with a ``Glue Job State Change`` event to EventBridge. The
authoritative run record (moto reports every run SUCCEEDED) is written beside the
script: ``s3://<bucket>/runs/<job>/<run_id>.json`` and ``.log``; ``get_run_record``
reads it. Design: ``docs/local-tools.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from glue_incremental import aws
from glue_incremental.sources.jdbc_urls import redact_url

from glue_incremental_tools.iceberg_catalog import conf_warehouse

RUNS_PREFIX = "runs"
EVENT_SOURCE = "aws.glue"
EVENT_DETAIL_TYPE = "Glue Job State Change"
SUCCEEDED, FAILED, TIMEOUT = "SUCCEEDED", "FAILED", "TIMEOUT"
# One try, then a warning: a lost notification must not hide the run's outcome.
_EVENTS_CONFIG = Config(
    retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=5, read_timeout=30
)


class RunnerError(Exception):
    """The run could not be started (bad job, arguments, artifacts): nothing ran."""


@dataclass
class JobRun:
    """What a local run did."""

    job_name: str
    run_id: str
    state: str
    arguments: dict[str, str]
    argv: list[str]
    exit_code: int | None
    started_on: datetime
    completed_on: datetime
    error_message: str | None = None
    summary: dict[str, Any] | None = None
    script_location: str | None = None
    record_uri: str | None = None
    log_path: str | None = None
    event_id: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def execution_seconds(self) -> float:
        return (self.completed_on - self.started_on).total_seconds()

    @property
    def succeeded(self) -> bool:
        return self.state == SUCCEEDED

    def record(self) -> dict[str, Any]:
        """The run as Glue's ``JobRun`` shape (plus ExitCode, Summary)."""
        return {
            "Id": self.run_id,
            "JobName": self.job_name,
            "JobRunState": self.state,
            "Arguments": redact_arguments(self.arguments),
            "ErrorMessage": self.error_message,
            "StartedOn": self.started_on.isoformat(),
            "CompletedOn": self.completed_on.isoformat(),
            "ExecutionTime": round(self.execution_seconds),
            "ExitCode": self.exit_code,
            "Summary": self.summary,
            "RunBy": "glue_incremental_tools.runner",
        }


# -- arguments -----------------------------------------------------------------------------------


def parse_arguments(text: str | None) -> dict[str, str]:
    """``--arguments`` JSON: an object of ``"--name": "value"`` strings, like StartJobRun's."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise RunnerError(f"--arguments is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise RunnerError('--arguments must be a JSON object such as {"--source": "file:///data"}')
    return validate_arguments(value)


def validate_arguments(arguments: Mapping[str, Any]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for name, value in arguments.items():
        if not isinstance(name, str) or not name.startswith("--") or len(name) < 3:
            raise RunnerError(f"argument name {name!r} must start with -- (Glue's form: --name)")
        if not isinstance(value, str):
            raise RunnerError(
                f"argument {name} must be a string (Glue passes strings), got {value!r}"
            )
        checked[name] = value
    return checked


def effective_arguments(
    default_arguments: Mapping[str, str] | None,
    run_arguments: Mapping[str, str] | None,
    non_overridable: Mapping[str, str] | None,
) -> tuple[dict[str, str], list[str]]:
    """Glue's precedence: defaults < the run's arguments < non-overridable.

    Returns the arguments and a warning per run argument the job did not let through.
    """
    merged = dict(default_arguments or {})
    merged.update(run_arguments or {})
    warnings = []
    for name, value in (non_overridable or {}).items():
        if run_arguments and name in run_arguments and run_arguments[name] != value:
            warnings.append(
                f"{name} is non-overridable: the job's value {value!r} is used, "
                f"not {run_arguments[name]!r}"
            )
        merged[name] = value
    return merged, warnings


def glue_argv(script: str, job_name: str, run_id: str, arguments: Mapping[str, str]) -> list[str]:
    """``sys.argv`` as Glue builds it: the script, then ``--name value`` pairs."""
    argv = [script, "--JOB_NAME", job_name, "--JOB_RUN_ID", run_id]
    for name, value in arguments.items():
        if name in {"--JOB_NAME", "--JOB_RUN_ID"}:
            continue
        argv += [name, value]
    return argv


# -- running ---------------------------------------------------------------------------------------


def run_job(
    job_name: str,
    arguments: Mapping[str, str] | None = None,
    *,
    python: str | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    output: IO[str] | None = None,
    prefix: str = "",
    timeout_seconds: float | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> JobRun:
    """Run deployed job ``job_name`` once; returns its final state (it does not raise on FAILED).

    ``output``: where the script's stdout/stderr lines go as they come (None:
    only the log). ``log_dir``: keep the log there as ``<run_id>.log`` (default:
    a temporary file, uploaded next to the run record). Raises RunnerError when
    the run cannot start.
    """
    run_arguments = validate_arguments(arguments or {})
    try:
        return _run_job(
            job_name, run_arguments, python, log_dir, output, prefix, timeout_seconds, extra_env
        )
    except NoCredentialsError:
        raise RunnerError(
            "no AWS credentials: configure them, or use the local endpoint (make demo)"
        ) from None


def _run_job(
    job_name: str,
    run_arguments: dict[str, str],
    python: str | None,
    log_dir: str | os.PathLike[str] | None,
    output: IO[str] | None,
    prefix: str,
    timeout_seconds: float | None,
    extra_env: Mapping[str, str] | None,
) -> JobRun:
    glue = aws.client("glue")
    job = get_job(job_name)
    script_uri = (job.get("Command") or {}).get("ScriptLocation") or ""
    if not script_uri.startswith("s3://"):
        raise RunnerError(f"job {job_name}: ScriptLocation {script_uri!r} is not an s3:// URI")
    merged, warnings = effective_arguments(
        job.get("DefaultArguments"), run_arguments, job.get("NonOverridableArguments")
    )
    if timeout_seconds is None and job.get("Timeout"):
        timeout_seconds = float(job["Timeout"]) * 60

    with tempfile.TemporaryDirectory(prefix=f"gi-run-{job_name}-") as workdir:
        script_path = _download(script_uri, Path(workdir) / "script")
        path_entries = []
        for uri in _extra_py_files(merged):
            downloaded = _download(uri, Path(workdir) / "extra")
            path_entries.append(
                str(
                    downloaded
                    if downloaded.suffix in {".zip", ".whl", ".egg"}
                    else downloaded.parent
                )
            )
        # Only now, with everything in hand, does the run exist in Glue.
        run_id = glue.start_job_run(JobName=job_name, Arguments=run_arguments)["JobRunId"]
        argv = glue_argv(str(script_path), job_name, run_id, merged)
        env = _child_env(path_entries, python, {**iceberg_environment(merged), **(extra_env or {})})
        log_path = Path(log_dir) / f"{run_id}.log" if log_dir else Path(workdir) / f"{run_id}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        for warning in warnings:
            _emit(output, prefix, f"warning: {warning}")
        started = datetime.now(UTC)
        exit_code, timed_out, lines = _execute(
            [python or sys.executable, *argv],
            env,
            workdir,
            log_path,
            output,
            prefix,
            timeout_seconds,
        )
        completed = datetime.now(UTC)
        state = TIMEOUT if timed_out else (SUCCEEDED if exit_code == 0 else FAILED)
        run = JobRun(
            job_name=job_name,
            run_id=run_id,
            state=state,
            arguments=merged,
            argv=argv,
            exit_code=exit_code,
            started_on=started,
            completed_on=completed,
            error_message=_error_message(state, exit_code, lines, timeout_seconds),
            summary=_summary(lines),
            script_location=script_uri,
            log_path=str(log_path) if log_dir else None,
            warnings=warnings,
        )
        bucket = script_uri[5:].split("/", 1)[0]
        run.record_uri = _store_record(bucket, run, log_path)
    run.event_id = _emit_state_change(run)
    return run


def get_job(job_name: str) -> dict[str, Any]:
    try:
        return aws.client("glue").get_job(JobName=job_name)["Job"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            known = _job_names()
            hint = (
                f" (jobs: {', '.join(known)})"
                if known
                else " (no jobs: apply terraform and deploy first)"
            )
            raise RunnerError(
                f"no Glue job {job_name!r} at {aws.endpoint_url('glue') or 'AWS'}{hint}"
            ) from None
        raise


def redact_arguments(arguments: Mapping[str, str] | None) -> dict[str, str]:
    """Arguments safe to keep in a run record: password values and passwords in URLs hidden."""
    safe = {}
    for name, value in (arguments or {}).items():
        if "password" in name.lower():
            safe[name] = "***"
        elif isinstance(value, str) and value.startswith("jdbc:"):
            safe[name] = redact_url(value)
        else:
            safe[name] = value
    return safe


def get_run_record(job_name: str, run_id: str) -> dict[str, Any]:
    """The authoritative record of a local run (see the module docstring)."""
    job = get_job(job_name)
    bucket = job["Command"]["ScriptLocation"][5:].split("/", 1)[0]
    body = (
        aws.client("s3").get_object(Bucket=bucket, Key=_record_key(job_name, run_id))["Body"].read()
    )
    return json.loads(body)


def _job_names() -> list[str]:
    try:
        return sorted(aws.client("glue").list_jobs().get("JobNames", []))[:20]
    except (ClientError, BotoCoreError):
        return []


def _extra_py_files(arguments: Mapping[str, str]) -> list[str]:
    uris = [uri.strip() for uri in arguments.get("--extra-py-files", "").split(",") if uri.strip()]
    for uri in uris:
        if not uri.startswith("s3://"):
            raise RunnerError(f"--extra-py-files entry {uri!r} is not an s3:// URI")
    return uris


def _download(uri: str, directory: Path) -> Path:
    bucket, _, key = uri[5:].partition("/")
    if not bucket or not key:
        raise RunnerError(f"{uri!r} is not an s3://bucket/key URI")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / key.rsplit("/", 1)[-1]
    try:
        aws.client("s3").download_file(bucket, key, str(target))
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}:
            raise RunnerError(
                f"{uri} does not exist: deploy first (python -m glue_incremental deploy)"
            ) from None
        raise
    return target


def iceberg_environment(
    arguments: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """What a local run of an Iceberg job needs that ``--datalake-formats iceberg`` gives on
    Glue: the Iceberg jars, and the warehouse the job's ``--conf`` names (the operator
    commands find its table there: ``iceberg_catalog.open_target``). Empty for any other
    job, whose local runs keep Iceberg's jars off their class path.

    The script runs in a temporary directory, so ``glue_incremental.spark`` cannot find the
    checkout's jars from there: the local stack exports its jar directory (``make setup``
    puts S3A's and Iceberg's jars in the same one).
    """
    if "iceberg" not in arguments.get("--datalake-formats", "").split(","):
        return {}
    environ = os.environ if environ is None else environ
    found: dict[str, str] = {}
    warehouse = conf_warehouse(arguments)
    if warehouse:
        found["GLUE_INCREMENTAL_ICEBERG_WAREHOUSE"] = warehouse
    jars = environ.get("GLUE_INCREMENTAL_JARS_DIR") or environ.get("GLUE_INCREMENTAL_S3A_JAR_DIR")
    if jars:
        found["GLUE_INCREMENTAL_JARS_DIR"] = jars
    return found


LOCAL_RUN_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"
# Rows by the dozen: generating and compiling each query's whole-stage code costs more than
# running it. Same results by Spark's contract (what the tests' own session runs with).
LOCAL_RUN_SPARK_SUBMIT_ARGS = "--conf spark.sql.codegen.wholeStage=false pyspark-shell"


def _child_env(
    path_entries: Sequence[str], python: str | None, extra: Mapping[str, str] | None
) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(path_entries)
    env["PYSPARK_PYTHON"] = python or sys.executable
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # A local run is a short JVM over small data: C1 alone compiles what it needs, about
    # half the JVM's CPU of a tiered start (measured; docs/local-tools.md). Set the
    # variable, even empty, to choose otherwise.
    env.setdefault("GLUE_INCREMENTAL_JVM_OPTIONS", LOCAL_RUN_JVM_OPTIONS)
    env.setdefault("PYSPARK_SUBMIT_ARGS", LOCAL_RUN_SPARK_SUBMIT_ARGS)
    env.update(extra or {})
    return env


def _execute(
    command: list[str],
    env: Mapping[str, str],
    cwd: str,
    log_path: Path,
    output: IO[str] | None,
    prefix: str,
    timeout_seconds: float | None,
) -> tuple[int | None, bool, list[str]]:
    lines: list[str] = []
    lock = threading.Lock()
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )

        def pump(stream: IO[str], tag: str) -> None:
            for line in stream:
                with lock:
                    lines.append(f"{tag}{line.rstrip()}")
                    log.write(f"{tag}{line}")
                    _emit(output, prefix, line.rstrip())

        pumps = [
            threading.Thread(target=pump, args=(process.stdout, ""), daemon=True),
            threading.Thread(target=pump, args=(process.stderr, "stderr: "), daemon=True),
        ]
        for thread in pumps:
            thread.start()
        timed_out = False
        try:
            process.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            process.kill()
            process.wait()
        for thread in pumps:
            thread.join(timeout=10)
    return (None if timed_out else process.returncode), timed_out, lines


def _emit(output: IO[str] | None, prefix: str, text: str) -> None:
    if output is not None:
        output.write(f"{prefix}{text}\n")
        output.flush()


def _summary(lines: Sequence[str]) -> dict[str, Any] | None:
    """The run's ``run_summary`` line (``glue_incremental.run.metrics.log_summary``), the last one."""
    for line in reversed(lines):
        if line.startswith("{") and '"run_summary"' in line:
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def _error_message(
    state: str, exit_code: int | None, lines: Sequence[str], timeout: float | None
) -> str | None:
    if state == SUCCEEDED:
        return None
    if state == TIMEOUT:
        return f"the run exceeded the job's timeout ({timeout:.0f} s) and was stopped"
    errors = [line.removeprefix("stderr: ") for line in lines if line.startswith("stderr: error: ")]
    if errors:
        return errors[0].removeprefix("error: ")[:2000]
    stderr = [
        line.removeprefix("stderr: ")
        for line in lines
        if line.startswith("stderr: ") and line[8:].strip()
    ]
    last = stderr[-1].strip() if stderr else ""
    return (last or f"the script exited with code {exit_code}")[:2000]


def _record_key(job_name: str, run_id: str) -> str:
    return f"{RUNS_PREFIX}/{job_name}/{run_id}.json"


def _store_record(bucket: str, run: JobRun, log_path: Path) -> str | None:
    s3 = aws.client("s3")
    key = _record_key(run.job_name, run.run_id)
    try:
        s3.upload_file(str(log_path), bucket, key.removesuffix(".json") + ".log")
        s3.put_object(
            Bucket=bucket,
            Key=key,
            Body=json.dumps(run.record(), indent=2, sort_keys=True, default=str).encode(),
            ContentType="application/json",
        )
    except (ClientError, BotoCoreError) as error:
        run.warnings.append(f"the run record could not be stored: {' '.join(str(error).split())}")
        return None
    return f"s3://{bucket}/{key}"


def _emit_state_change(run: JobRun) -> str | None:
    detail = {
        "jobName": run.job_name,
        "severity": "INFO" if run.succeeded else "ERROR",
        "state": run.state,
        "jobRunId": run.run_id,
        "message": " ".join((run.error_message or "Job run succeeded").split()),
    }
    try:
        response = aws.client("events", config=_EVENTS_CONFIG).put_events(
            Entries=[
                {
                    "Source": EVENT_SOURCE,
                    "DetailType": EVENT_DETAIL_TYPE,
                    "Detail": json.dumps(detail),
                    "Resources": [],
                }
            ]
        )
    except (ClientError, BotoCoreError) as error:
        run.warnings.append(
            f"the state change event was not delivered: {' '.join(str(error).split())}"
        )
        return None
    entry = (response.get("Entries") or [{}])[0]
    if response.get("FailedEntryCount") or "EventId" not in entry:
        run.warnings.append(
            f"the state change event was rejected: {entry.get('ErrorMessage', entry)}"
        )
        return None
    return entry["EventId"]


# -- the command -----------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser(
        "run",
        help="run a deployed Glue job locally, the way Glue runs it",
        description=(
            "Read the job from the Glue API, start a job run, download its script and "
            "--extra-py-files, "
            "run the script with the deployed library and Glue's arguments, record the final state "
            "(s3://<bucket>/runs/<job>/<run_id>.json) and emit the Glue Job State Change event."
        ),
    )
    parser.add_argument("job_name", metavar="JOB_NAME")
    parser.add_argument(
        "--arguments",
        help='run arguments as JSON, e.g. \'{"--source": "file:///data/orders"}\' '
        "(over the job's DefaultArguments; NonOverridableArguments still win)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not stream the script's output")
    parser.add_argument("--log-dir", help="keep the run's log in this directory")
    parser.set_defaults(handler=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    from glue_incremental_tools import stack
    from glue_incremental_tools.errors import CommandError

    running = stack.read_stack()
    if running is not None:
        if aws.endpoint_url() is None:
            stack.use_local_stack()  # `make up` is running: jobs run against it
        else:
            # A shell that ran `eval "$(... env --env local)"` has the endpoints only; the
            # script also needs the stack's own settings (where the S3A jars are).
            for name, value in running["environment"].items():
                if name.startswith("GLUE_INCREMENTAL_"):
                    os.environ.setdefault(name, value)
    try:
        run = run_job(
            args.job_name,
            parse_arguments(args.arguments),
            output=None if args.quiet else sys.stderr,
            prefix="  | ",
            log_dir=args.log_dir,
        )
    except RunnerError as error:
        raise CommandError(str(error)) from None
    describe(run, print)
    return 0 if run.succeeded else 1


# What ``records_written`` (the RecordsWritten metric) counts, as docs/operations.md says it.
WROTE = (
    "the rows of every partition the run rewrote, unchanged ones included (a Parquet target "
    "rewrites each partition it touches whole; Iceberg: the rows its MERGE wrote)"
)


def version_counts(summary: Mapping[str, Any]) -> str:
    """``; versions opened N, closed M`` when a history run's summary has them, else nothing."""
    opened, closed = summary.get("versions_opened"), summary.get("versions_closed")
    if opened is None or closed is None:
        return ""
    return f"; versions opened {opened}, closed {closed}"


def describe(run: JobRun, log: Callable[[str], Any]) -> None:
    """A few lines about a finished run."""
    for warning in run.warnings:
        log(f"warning: {warning}")
    summary = run.summary or {}
    counts = ""
    if "records_read" in summary:
        read, written = summary["records_read"], summary.get("records_written", 0)
        new = f" ({summary['records_new']} new)" if "records_new" in summary else ""
        counts = f", read {read}{new}, wrote {written}"
    log(
        f"run {run.run_id} of {run.job_name}: {run.state} in {run.execution_seconds:.1f} s"
        f"{counts}{version_counts(summary)}"
    )
    if counts and written > read:
        # It explains more rows written than read (the rewrite), never fewer (an aggregate).
        log(f"  wrote: {WROTE}")
    if run.error_message:
        log(f"  error: {run.error_message}")
    if run.record_uri:
        log(f"  record: {run.record_uri}")
