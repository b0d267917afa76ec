"""The AWS-enforced limits of docs/aws-limits.md, as checks on planned resources.

Each checker takes one planned resource (``type`` and its planned ``values``)
and returns what breaks the limit, or nothing. A value unknown until apply is
``None`` here and is not checked (the Terraform precondition checks it then).
``LIMITS`` is keyed by the table's ``id`` column; the test keeps the two equal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "aws-limits.md"

DAY = 86_400
WEEK = 604_800


@dataclass(frozen=True)
class Planned:
    """One resource of a plan: its address, type and planned values."""

    address: str
    type: str
    values: dict[str, Any]


Check = Callable[[Planned], Iterator[str]]


def _alarms(check: Callable[[dict[str, Any]], Iterator[str]]) -> Check:
    def run(resource: Planned) -> Iterator[str]:
        if resource.type == "aws_cloudwatch_metric_alarm":
            yield from check(resource.values)

    return run


def _glue_jobs(check: Callable[[dict[str, Any]], Iterator[str]]) -> Check:
    def run(resource: Planned) -> Iterator[str]:
        if resource.type == "aws_glue_job":
            yield from check(resource.values)

    return run


def _periods(alarm: dict[str, Any]) -> list[int]:
    """The alarm's period, or each metric's period in a metric-math alarm."""
    if alarm.get("period"):
        return [alarm["period"]]
    return [
        metric["period"]
        for query in alarm.get("metric_query") or []
        for metric in query.get("metric") or []
        if metric.get("period")
    ]


@_alarms
def alarm_period(alarm: dict[str, Any]) -> Iterator[str]:
    for period in _periods(alarm):
        if period not in (10, 20, 30) and period % 60 != 0:
            yield f"period {period} is not 10, 20, 30 or a multiple of 60"


@_alarms
def alarm_period_max(alarm: dict[str, Any]) -> Iterator[str]:
    for period in _periods(alarm):
        if period > DAY:
            yield f"period {period} s is longer than a day"


@_alarms
def alarm_evaluation_range(alarm: dict[str, Any]) -> Iterator[str]:
    for period in _periods(alarm):
        window = period * alarm["evaluation_periods"]
        limit = DAY if period < 3600 else WEEK
        if window > limit:
            yield f"{alarm['evaluation_periods']} x {period} s exceeds {limit} s"


@_alarms
def alarm_datapoints(alarm: dict[str, Any]) -> Iterator[str]:
    datapoints = alarm.get("datapoints_to_alarm") or alarm["evaluation_periods"]
    if not 1 <= datapoints <= alarm["evaluation_periods"]:
        yield f"datapoints_to_alarm {datapoints} is outside 1..{alarm['evaluation_periods']}"


@_alarms
def alarm_name_length(alarm: dict[str, Any]) -> Iterator[str]:
    if not 1 <= len(alarm["alarm_name"]) <= 255:
        yield f"alarm_name is {len(alarm['alarm_name'])} characters"


@_alarms
def alarm_description_length(alarm: dict[str, Any]) -> Iterator[str]:
    description = alarm.get("alarm_description") or ""
    if len(description) > 1024:
        yield f"alarm_description is {len(description)} characters"


@_alarms
def alarm_actions(alarm: dict[str, Any]) -> Iterator[str]:
    for field in ("alarm_actions", "ok_actions", "insufficient_data_actions"):
        actions = alarm.get(field) or []
        if len(actions) > 5:
            yield f"{field} has {len(actions)} actions"


@_glue_jobs
def glue_queuing_retries(job: dict[str, Any]) -> Iterator[str]:
    if job.get("job_run_queuing_enabled") and (
        (job.get("max_retries") or 0) > 0 or job.get("execution_class") == "FLEX"
    ):
        yield (
            f"job run queuing with max_retries {job.get('max_retries')} and "
            f"execution_class {job.get('execution_class')}"
        )


@_glue_jobs
def glue_flex_workers(job: dict[str, Any]) -> Iterator[str]:
    if job.get("execution_class") == "FLEX" and job.get("worker_type") not in ("G.1X", "G.2X"):
        yield f"FLEX on {job.get('worker_type')}"


@_glue_jobs
def glue_job_name(job: dict[str, Any]) -> Iterator[str]:
    if not 1 <= len(job["name"].encode()) <= 255:
        yield f"job name is {len(job['name'].encode())} bytes"


@_glue_jobs
def glue_job_description(job: dict[str, Any]) -> Iterator[str]:
    if len(job.get("description") or "") > 2048:
        yield f"description is {len(job['description'])} characters"


@_glue_jobs
def glue_job_arguments_size(job: dict[str, Any]) -> Iterator[str]:
    arguments = {
        **(job.get("default_arguments") or {}),
        **(job.get("non_overridable_arguments") or {}),
    }
    if any(value is None for value in arguments.values()):
        return
    size = len(json.dumps(arguments, separators=(",", ":")).encode())
    if size > 260 * 1024:
        yield f"arguments are {size} bytes"


@_glue_jobs
def glue_job_timeout(job: dict[str, Any]) -> Iterator[str]:
    timeout = job.get("timeout")
    if timeout is not None and not 1 <= timeout <= 10_080:
        yield f"timeout {timeout} minutes"


def iam_role_name(resource: Planned) -> Iterator[str]:
    if resource.type == "aws_iam_role":
        name = resource.values.get("name") or ""
        if not 1 <= len(name) <= 64:
            yield f"role name {name!r} is {len(name)} characters"


def _document(policy: str | None) -> dict[str, Any] | None:
    return None if policy is None else json.loads(policy)


def iam_inline_policy_size(resource: Planned) -> Iterator[str]:
    if resource.type == "aws_iam_role_policy":
        policy = resource.values.get("policy")
        size = len(re.sub(r"\s", "", policy)) if policy is not None else 0
        if size > 10_240:
            yield f"inline policy is {size} characters"


def sqs_policy(resource: Planned) -> Iterator[str]:
    if resource.type in ("aws_sqs_queue", "aws_sqs_queue_policy"):
        policy = resource.values.get("policy")
        document = _document(policy) if policy else None
        if document is not None and policy is not None:
            if len(policy.encode()) > 8192:
                yield f"queue policy is {len(policy.encode())} bytes"
            if len(document.get("Statement", [])) > 20:
                yield f"queue policy has {len(document['Statement'])} statements"


def sns_topic_policy(resource: Planned) -> Iterator[str]:
    if resource.type == "aws_sns_topic_policy":
        policy = resource.values.get("policy")
        document = _document(policy)
        if document is not None and policy is not None:
            if len(policy.encode()) > 30 * 1024:
                yield f"topic policy is {len(policy.encode())} bytes"
            if len(document.get("Statement", [])) > 100:
                yield f"topic policy has {len(document['Statement'])} statements"


def eventbridge_input_template(resource: Planned) -> Iterator[str]:
    if resource.type == "aws_cloudwatch_event_target":
        for transformer in resource.values.get("input_transformer") or []:
            template = transformer.get("input_template")
            if template is None:
                continue
            if len(template) > 8192:
                yield f"input_template is {len(template)} characters"
            if template.lstrip().startswith("{"):
                keys = re.findall(r'"([^"]*)"\s*:', template)
                if any(re.search(r"<[^>]+>", key) for key in keys):
                    yield "a placeholder is used as an object key"


def dynamodb_item_size(resource: Planned) -> Iterator[str]:
    """Items are the library's: checked once against its constant, not per resource."""
    from glue_incremental.watermarks.keys import MAX_ITEM_BYTES

    if resource.type == "aws_dynamodb_table" and MAX_ITEM_BYTES > 400 * 1024:
        yield f"the library allows items of {MAX_ITEM_BYTES} bytes"


LIMITS: dict[str, Check] = {
    "alarm-period": alarm_period,
    "alarm-period-max": alarm_period_max,
    "alarm-evaluation-range": alarm_evaluation_range,
    "alarm-datapoints": alarm_datapoints,
    "alarm-name-length": alarm_name_length,
    "alarm-description-length": alarm_description_length,
    "alarm-actions": alarm_actions,
    "glue-queuing-retries": glue_queuing_retries,
    "glue-flex-workers": glue_flex_workers,
    "glue-job-name": glue_job_name,
    "glue-job-description": glue_job_description,
    "glue-job-arguments-size": glue_job_arguments_size,
    "glue-job-timeout": glue_job_timeout,
    "iam-role-name": iam_role_name,
    "iam-inline-policy-size": iam_inline_policy_size,
    "sqs-policy": sqs_policy,
    "sns-topic-policy": sns_topic_policy,
    "eventbridge-input-template": eventbridge_input_template,
    "dynamodb-item-size": dynamodb_item_size,
}


def table_rows() -> dict[str, str]:
    """The table's rows: id -> source URL (the first https:// link of the row's last column)."""
    rows = {}
    for line in TABLE.read_text().splitlines():
        match = re.match(r"^\| `([a-z0-9-]+)` \|", line)
        if match:
            source = line.rstrip(" |").rsplit(" | ", 1)[-1]
            url = re.search(r"https://\S+", source)
            rows[match.group(1)] = url.group(0) if url else ""
    return rows


def planned_resources(plan: dict[str, Any]) -> list[Planned]:
    """Every resource a ``terraform show -json`` plan creates or updates, with its planned values."""
    resources = []
    for change in plan.get("resource_changes", []):
        if change["mode"] != "managed" or change["change"]["actions"] in (["delete"], ["no-op"]):
            continue
        after = dict(change["change"].get("after") or {})
        unknown = change["change"].get("after_unknown") or {}
        for name, is_unknown in unknown.items():
            if is_unknown is True:
                after[name] = None
        resources.append(Planned(change["address"], change["type"], after))
    return resources


def violations(resources: list[Planned]) -> list[str]:
    """Every broken limit: `<limit id> <address>: <what>`."""
    return [
        f"{limit} {resource.address}: {problem}"
        for resource in resources
        for limit, check in LIMITS.items()
        for problem in check(resource)
    ]
