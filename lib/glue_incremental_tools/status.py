"""``python -m glue_incremental status --env ENV``: every pipeline of an environment, one row each.

Pipelines come from the environment's Terraform outputs; the rest is read live: last
run state (the Glue API, or the local runner's run record), rows read and written and
watermark lag (the run summary or the run metrics), the committed watermark and its
version, alarm states worst first, and for a join the partitions deferred for an
upstream and the upstream commits not consumed yet. Nothing is written; ``--json``
prints the rows as a JSON list. Design: ``docs/local-tools.md``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from glue_incremental import aws
from glue_incremental.run import metrics
from glue_incremental.watermarks import DEFAULT_SLOT, Watermarks

from glue_incremental_tools import deploy, run_history, runner
from glue_incremental_tools.errors import CommandError

JOIN_SLOTS = ("left", "right")
ALARM_ORDER = {"ALARM": 0, "INSUFFICIENT_DATA": 1, "OK": 2}
COLUMNS = (
    ("pipeline", "PIPELINE"),
    ("job", "JOB"),
    ("kind", "KIND"),
    ("last_run", "LAST RUN"),
    ("rows", "ROWS READ/WRITTEN"),
    ("watermark", "WATERMARK"),
    ("lag", "LAG"),
    ("alarms", "ALARMS"),
    ("pending", "PENDING UPSTREAM"),
    ("output", "ICEBERG OUTPUT"),
)


@dataclass(frozen=True)
class PipelineStatus:
    """One pipeline's row; None where nothing is known yet (never run, no metric)."""

    pipeline: str
    kind: str
    job_name: str
    upstreams: list[str]
    last_run_id: str | None = None
    last_run_state: str | None = None
    last_run_at: str | None = None
    records_read: float | None = None
    records_written: float | None = None
    watermark: str | None = None
    watermark_version: int | None = None
    lag_seconds: float | None = None
    alarms: dict[str, str] = field(default_factory=dict)
    pending_partitions: int = 0
    upstream_commits_pending: dict[str, int] = field(default_factory=dict)
    # An Iceberg target's current snapshot and the run that wrote it, from the env's catalog.
    output: str | None = None

    def cells(self) -> dict[str, str]:
        worst = sorted(self.alarms.items(), key=lambda kv: ALARM_ORDER.get(kv[1], 3))
        firing = [name for name, state in worst if state == "ALARM"]
        pending = [f"{self.pending_partitions} partition(s)"] if self.pending_partitions else []
        pending += [f"{up} +{n}" for up, n in sorted(self.upstream_commits_pending.items()) if n]
        return {
            "pipeline": self.pipeline,
            "job": self.job_name,
            "kind": self.kind,
            "last_run": " ".join(filter(None, [self.last_run_state, self.last_run_at])) or "never",
            "rows": f"{_number(self.records_read)}/{_number(self.records_written)}",
            "watermark": (self.watermark or "-")
            + (f" (v{self.watermark_version})" if self.watermark_version else ""),
            "lag": _duration(self.lag_seconds),
            "alarms": ("ALARM: " + ", ".join(firing))
            if firing
            else (worst[0][1] if worst and len({s for _, s in worst}) == 1 else _mixed(worst)),
            "pending": ", ".join(pending) or "-",
            "output": self.output or "-",
        }


def environment_status(
    env: str,
    *,
    since: timedelta = timedelta(days=1),
    now: datetime | None = None,
    outputs: Mapping[str, Any] | None = None,
) -> list[PipelineStatus]:
    """The status rows of every pipeline of ``env``, sorted by pipeline name."""
    if outputs is None:
        from glue_incremental_tools.environments import open_environment

        outputs = open_environment(env).outputs
    pipelines = outputs.get("pipelines")
    if not pipelines:
        raise deploy.DeployError(
            f"environment {env!r} has no `pipelines` output: apply it with this version first"
        )
    store = Watermarks(outputs.get("watermarks_table_name") or "glue-watermarks")
    now = now or datetime.now(UTC)
    alarm_states = _alarm_states(
        [name for p in pipelines.values() for name in (p.get("alarm_names") or {}).values()]
    )
    state_names = {name: p["state_name"] for name, p in pipelines.items()}
    rows = []
    for name in sorted(pipelines):
        pipeline = pipelines[name]
        job = pipeline["job_name"]
        run = _last_run(job, local=env == "local", now=now)
        committed = _committed(store, pipeline["state_name"], pipeline["kind"])
        pending, behind = _pending_upstream(store, committed, state_names, pipeline)
        # The local runner's record carries the run's own summary; elsewhere
        # (or when the last run died before summarising) the latest metrics.
        summary = run.get("Summary") or {}
        window = _run_window(run, now - since, now)
        rows.append(
            PipelineStatus(
                pipeline=name,
                kind=pipeline["kind"],
                job_name=job,
                upstreams=list(pipeline.get("upstreams") or []),
                last_run_id=run.get("Id"),
                last_run_state=run.get("JobRunState"),
                last_run_at=run_history.iso_time(run.get("CompletedOn") or run.get("StartedOn")),
                records_read=_figure(summary, "records_read", job, metrics.RECORDS_READ, window),
                records_written=_figure(summary, "records_written", job, "RecordsWritten", window),
                watermark=_watermark_text(committed),
                watermark_version=_version(committed),
                lag_seconds=_figure(
                    summary, "watermark_lag_seconds", job, "WatermarkLagSeconds", window
                ),
                alarms={
                    kind: alarm_states.get(alarm, "MISSING")
                    for kind, alarm in sorted((pipeline.get("alarm_names") or {}).items())
                },
                pending_partitions=pending,
                upstream_commits_pending=behind,
                output=_iceberg_output(committed, local=env == "local", job=job),
            )
        )
    return rows


def render_table(rows: Sequence[PipelineStatus]) -> str:
    """A fixed-width text table, one line per pipeline."""
    cells = [row.cells() for row in rows]
    widths = {key: max([len(title), *(len(c[key]) for c in cells)]) for key, title in COLUMNS}
    lines = ["  ".join(title.ljust(widths[key]) for key, title in COLUMNS).rstrip()]
    lines += ["  ".join(c[key].ljust(widths[key]) for key, _ in COLUMNS).rstrip() for c in cells]
    return "\n".join(lines)


def table_notes(rows: Sequence[PipelineStatus], env: str) -> list[str]:
    """Lines under the table explaining what would otherwise mislead (the local stack's alarms)."""
    if env != "local":
        return []
    notes = []
    idle = [row.pipeline for row in rows if row.alarms.get("missed_run") == "ALARM"]
    if idle:
        notes.append(
            f"missed_run ({', '.join(idle)}): the local stack's Glue never fires triggers, and "
            "LocalStack evaluates an alarm once per period, here the schedule's plus an hour's "
            "grace (3660 s): it turns OK at its first evaluation after a run reports, up to an "
            "hour later (`python -m glue_incremental run JOB_NAME` runs one)."
        )
    lost = [row.pipeline for row in rows if row.last_run_state == run_history.NO_RECORD]
    if lost:
        notes.append(
            f"{run_history.NO_RECORD} ({', '.join(lost)}): the local runner writes a run's "
            "record when the run ends, and none came within the job's timeout (the runner "
            "stopped?); `runs PIPELINE --env local` lists it."
        )
    return notes


# -- sources ---------------------------------------------------------------------------------


def _last_run(job: str, *, local: bool, now: datetime) -> dict[str, Any]:
    try:
        runs = aws.client("glue").get_job_runs(JobName=job).get("JobRuns", [])
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            return {"JobRunState": "NO JOB"}
        raise
    if not runs:
        return {}
    # Glue lists newest first; emulators do not all agree, so pick by start time.
    latest = max(runs, key=lambda r: r.get("StartedOn") or datetime.min.replace(tzinfo=UTC))
    run = dict(latest)
    if not local:
        # Real Glue's own state is authoritative; looking for a local runner's record
        # there would cost the on-call's role glue:GetJob and the scripts bucket.
        return run
    try:
        record = runner.get_run_record(job, run["Id"])
    except (ClientError, BotoCoreError, KeyError, ValueError):
        return run_history.unrecorded(run, now)  # the emulated Glue's SUCCEEDED is not one
    run.update(
        {
            k: record[k]
            for k in ("JobRunState", "StartedOn", "CompletedOn", "Summary")
            if record.get(k)
        }
    )
    return run


def _run_window(
    run: Mapping[str, Any], start: datetime, end: datetime
) -> tuple[datetime, datetime] | None:
    """The last run's own time span, or None when that run published no figures.

    Jobs publish their metrics only after their commit, so a run that has not
    SUCCEEDED (failed, stopped, still running) has none; CloudWatch's minute
    buckets would otherwise hand it an earlier run's figures from the same minute.
    """
    state = run.get("JobRunState")
    if state is not None and state != "SUCCEEDED":
        return None
    started, completed = _as_datetime(run.get("StartedOn")), _as_datetime(run.get("CompletedOn"))
    if started is None:
        return start, end
    return started, completed or end


def _as_datetime(value: Any) -> datetime | None:
    """Glue answers datetimes, the local runner's record ISO strings."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


def _figure(
    summary: Mapping[str, Any],
    key: str,
    job: str,
    metric: str,
    window: tuple[datetime, datetime] | None,
) -> float | None:
    if summary.get(key) is not None:
        return float(summary[key])
    return None if window is None else _latest(job, metric, *window)


# GetMetricStatistics answers at most this many datapoints per call (CloudWatch, LocalStack).
MAX_DATAPOINTS = 1440


def _period_for(start: datetime, end: datetime) -> int:
    """The smallest whole-minute period that keeps ``start``..``end`` within one call."""
    minutes = math.ceil((end - start).total_seconds() / 60)
    return 60 * max(1, math.ceil(minutes / MAX_DATAPOINTS))


def _latest(job: str, metric: str, start: datetime, end: datetime) -> float | None:
    period = _period_for(start, end)
    # A minute of slack for a datapoint stamped just now; the start gives way to stay in one call.
    end = end + timedelta(minutes=1)
    start = max(start, end - timedelta(seconds=period * MAX_DATAPOINTS))
    points = (
        aws.client("cloudwatch")
        .get_metric_statistics(
            Namespace=metrics.NAMESPACE,
            MetricName=metric,
            Dimensions=[{"Name": metrics.METRIC_CONTRACT["dimension"], "Value": job}],
            StartTime=start,
            EndTime=end,
            Period=period,
            Statistics=["Maximum"],
        )
        .get("Datapoints", [])
    )
    if not points:
        return None
    return float(max(points, key=lambda p: p["Timestamp"])["Maximum"])


def _alarm_states(names: list[str]) -> dict[str, str]:
    states: dict[str, str] = {}
    cloudwatch = aws.client("cloudwatch")
    for start in range(0, len(names), 100):
        found = cloudwatch.describe_alarms(AlarmNames=names[start : start + 100])
        states.update({a["AlarmName"]: a["StateValue"] for a in found.get("MetricAlarms", [])})
    return states


def _committed(store: Watermarks, state_name: str, kind: str) -> dict[str, dict[str, Any]]:
    slots = JOIN_SLOTS if kind == "join" else (DEFAULT_SLOT,)
    found = {}
    for slot in slots:
        state = store.get_watermark(state_name, slot)
        if state is not None:
            found[slot] = dict(state)
    return found


def _iceberg_output(
    committed: Mapping[str, dict[str, Any]], *, local: bool, job: str
) -> str | None:
    """``table: run R (snapshot N)`` for each Iceberg target the state names; None if none.

    A table the catalog cannot serve is shown as such in its cell: status reads, it
    does not fail one pipeline's row for another's table.
    """
    tables = {
        str(name)
        for state in committed.values()
        if (name := (state.get("watermarks") or {}).get("iceberg_table"))
    }
    if not tables:
        return None
    cells = []
    for name in sorted(tables):
        try:
            from glue_incremental_tools import iceberg_catalog

            current = iceberg_catalog.open_target(name, local=local, job=job).current()
        except ImportError:
            cells.append(f"{name}: pyiceberg not installed")
            continue
        except (LookupError, ValueError):
            cells.append(f"{name}: not in the catalog")
            continue
        if current is None:
            cells.append(f"{name}: no snapshot")
        else:
            run = current.run_id or "another writer"
            cells.append(f"{name}: run {run} (snapshot {current.snapshot_id})")
    return "; ".join(cells)


def _pending_upstream(
    store: Watermarks,
    committed: Mapping[str, dict[str, Any]],
    state_names: Mapping[str, str],
    pipeline: Mapping[str, Any],
) -> tuple[int, dict[str, int]]:
    if pipeline["kind"] != "join":
        return 0, {}
    partitions = sum(
        len((state.get("watermarks") or {}).get("pending_partitions") or [])
        for state in committed.values()
    )
    consumed: dict[str, int] = {}
    for state in committed.values():
        upstream = (state.get("watermarks") or {}).get("upstream") or {}
        if upstream.get("job"):
            consumed[upstream["job"]] = int(upstream.get("version") or 0)
    behind = {}
    for name in pipeline.get("upstreams") or []:
        state_name = state_names.get(name, name)
        current = store.get_watermark(state_name)
        if current is not None:
            behind[name] = max(0, int(current["version"]) - consumed.get(state_name, 0))
    return partitions, behind


def _watermark_text(committed: Mapping[str, dict[str, Any]]) -> str | None:
    marks = []
    for state in committed.values():
        values = state.get("watermarks") or {}
        cursor = values.get("cursor")
        high_mark = (values.get("files") or {}).get("high_mark_ms")
        if cursor is not None:
            marks.append(
                run_history.iso_time(cursor) if isinstance(cursor, datetime) else str(cursor)
            )
        elif high_mark is not None:
            marks.append(run_history.iso_time(datetime.fromtimestamp(high_mark / 1000, UTC)))
    # A join is as fresh as its older side.
    return min((mark for mark in marks if mark is not None), default=None)


def _version(committed: Mapping[str, dict[str, Any]]) -> int | None:
    versions = [int(s["version"]) for s in committed.values() if s.get("version") is not None]
    return max(versions) if versions else None


# -- formatting -------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _mixed(worst: list[tuple[str, str]]) -> str:
    return ", ".join(f"{kind} {state}" for kind, state in worst if state != "OK") or "-"


# -- command line -----------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "status",
        help="one table of every pipeline of an environment: runs, rows, watermarks, alarms",
        description=__doc__.split("\n\n", 1)[0].replace("``", ""),
    )
    parser.add_argument("--env", required=True, help="environment (local, dev, prod)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--since",
        type=float,
        default=24.0,
        metavar="HOURS",
        help="how far back to look for run metrics (default 24)",
    )
    parser.set_defaults(handler=_cmd_status)


def _cmd_status(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    try:
        rows = environment_status(args.env, since=timedelta(hours=args.since))
    except deploy.DeployError as error:
        raise CommandError(str(error)) from None
    if args.json:
        out(json.dumps([asdict(row) for row in rows], indent=2, default=str))
    else:
        out(render_table(rows))
        for note in table_notes(rows, args.env):
            out(note)
    return 0
