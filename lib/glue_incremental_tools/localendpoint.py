"""A local AWS-compatible endpoint for the demo and the tests.

LocalStack is used when it answers at ``LOCALSTACK_ENDPOINT`` (default
``http://localhost:4566``); otherwise moto's standalone server is started
in-process on a free loopback port and stopped afterwards. Dummy credentials
are always set, so nothing is ever read from a real profile.

What moto 5.2.5 does not do, and this module adds to the moto server it starts
(``MOTO_GAPS`` says it in words; the demo prints it). Both are how AWS behaves;
LocalStack does them natively, so nothing is added there:

- EventBridge rules cannot target SNS topics: ``PutEvents`` fails with HTTP 500
  as soon as a matching rule has one. The SNS targets of matching rules are
  delivered here (``InputTransformer`` applied), the other targets stay moto's.
- CloudWatch alarms never run their actions. On a state *change*
  (``SetAlarmState``) the alarm's ``AlarmActions``/``OKActions``/
  ``InsufficientDataActions`` topics receive the notification CloudWatch sends,
  in its documented JSON format and subject line.
- Bucket policies: moto evaluates only ``StringEquals`` conditions and applies a
  statement whose condition it cannot evaluate as if it had none, so a TLS-only
  policy (``Deny`` when ``aws:SecureTransport`` is ``false``, the scripts
  bucket's) denies every object read. ``Bool`` conditions are evaluated here,
  and the endpoint's requests count as secure transport: it stands in for
  AWS's HTTPS endpoints.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_SESSION_TOKEN": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}

MOTO_GAPS = (
    "moto does not deliver EventBridge events to SNS targets (PutEvents fails with HTTP 500): "
    "the local endpoint routes them, InputTransformer applied",
    "moto does not run CloudWatch alarm actions: on a state change the local endpoint publishes "
    "CloudWatch's documented alarm notification to the alarm's SNS actions",
    "moto ignores bucket-policy conditions other than StringEquals (a TLS-only Deny would deny "
    "every read): the local endpoint evaluates Bool conditions, its requests counting as TLS",
)


def use_dummy_credentials() -> None:
    os.environ.update(DUMMY_ENV)
    os.environ.pop("AWS_PROFILE", None)


@dataclass(frozen=True)
class Endpoint:
    url: str
    kind: str  # "localstack" | "moto"

    @property
    def gaps(self) -> tuple[str, ...]:
        """What this endpoint fills in for the emulator (empty for LocalStack)."""
        return MOTO_GAPS if self.kind == "moto" else ()

    def reset(self) -> None:
        """Drop every resource on the endpoint (between tests)."""
        path = "/_localstack/state/reset" if self.kind == "localstack" else "/moto-api/reset"
        request = urllib.request.Request(self.url + path, data=b"", method="POST")
        urllib.request.urlopen(request, timeout=30).read()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def localstack_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_localstack/health", timeout=1.5) as response:
            return "services" in json.loads(response.read() or b"{}")
    except (OSError, ValueError):
        return False


@contextmanager
def running_endpoint() -> Iterator[Endpoint]:
    """Yield an endpoint and export it as ``AWS_ENDPOINT_URL`` for the duration."""
    use_dummy_credentials()
    previous = os.environ.get("AWS_ENDPOINT_URL")
    localstack_url = os.environ.get("LOCALSTACK_ENDPOINT", "http://localhost:4566")
    server = None
    if os.environ.get("GLUE_INCREMENTAL_FORCE_MOTO") != "1" and localstack_answers(localstack_url):
        endpoint = Endpoint(localstack_url, "localstack")
    else:
        from moto.server import ThreadedMotoServer

        # moto's server logs every request through werkzeug; only failures matter.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        fill_moto_gaps()
        port = free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        endpoint = Endpoint(f"http://127.0.0.1:{port}", "moto")
    os.environ["AWS_ENDPOINT_URL"] = endpoint.url
    from glue_incremental import aws

    aws.reset_client_cache()
    try:
        yield endpoint
    finally:
        if server is not None:
            server.stop()
        if previous is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = previous
        aws.reset_client_cache()


# -- what moto does not do -----------------------------------------------------------------------

_patch_lock = threading.Lock()
_patched = False


def fill_moto_gaps() -> None:
    """Teach the in-process moto backends the two deliveries in ``MOTO_GAPS`` (idempotent)."""
    global _patched
    with _patch_lock:
        if _patched:
            return
        _route_eventbridge_to_sns()
        _run_alarm_actions()
        _evaluate_bool_conditions()
        _patched = True


def _route_eventbridge_to_sns() -> None:
    from moto.events.models import Rule
    from moto.utilities.arns import parse_arn

    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        topics = [target for target in self.targets if parse_arn(target["Arn"]).service == "sns"]
        if topics and self.event_pattern.matches_event(original_event):
            for target in topics:
                message = _transform(
                    target.get("InputTransformer"), target.get("Input"), original_event
                )
                _publish(target["Arn"], message)
        others = [target for target in self.targets if target not in topics]
        if not others:
            return
        everything = self.targets
        self.targets = others
        try:
            original(self, original_event, transform_input)
        finally:
            self.targets = everything

    Rule.send_to_targets = send_to_targets


def _transform(
    transformer: dict[str, Any] | None, constant: str | None, event: dict[str, Any]
) -> str:
    """EventBridge's target input: constant ``Input``, an ``InputTransformer``, or the event."""
    if constant is not None:
        return constant
    if not transformer:
        return json.dumps(event, default=str)
    template = transformer.get("InputTemplate", "")
    for name, path in (transformer.get("InputPathsMap") or {}).items():
        value: Any = event
        for part in path.removeprefix("$.").split(".") if path != "$" else []:
            value = value.get(part) if isinstance(value, dict) else None
        # A string is escaped so that it can sit inside a JSON string of the template.
        text = json.dumps(value)[1:-1] if isinstance(value, str) else json.dumps(value, default=str)
        template = template.replace(f"<{name}>", text)
    try:
        rendered = json.loads(template)
    except ValueError:
        return template
    return rendered if isinstance(rendered, str) else json.dumps(rendered)


# The request context a bucket policy sees: the endpoint stands in for AWS's HTTPS endpoints.
SECURE_CONTEXT = {"aws:SecureTransport": "true"}


def _evaluate_bool_conditions() -> None:
    from moto.iam.access_control import IAMPolicy, PermissionResult
    from moto.s3.models import FakeBucket

    def get_permission(self: Any, action: str, resource: str) -> Any:
        if self.policy is None:
            return PermissionResult.NEUTRAL
        document = json.loads(self.policy.decode())
        statements = document.get("Statement", [])
        statements = statements if isinstance(statements, list) else [statements]
        applying = [
            {key: value for key, value in statement.items() if key != "Condition"}
            for statement in statements
            if _conditions_hold(statement.get("Condition") or {})
        ]
        if not applying:
            return PermissionResult.NEUTRAL
        policy = IAMPolicy(json.dumps({**document, "Statement": applying}))
        return policy.is_action_permitted(action, resource)

    FakeBucket.get_permission = get_permission


def _conditions_hold(conditions: dict[str, Any]) -> bool:
    """``Bool``/``StringEquals`` on the keys of ``SECURE_CONTEXT``; anything else holds (as in moto)."""
    for operator, tests in conditions.items():
        if operator not in {"Bool", "StringEquals"}:
            continue
        for key, expected in tests.items():
            if key not in SECURE_CONTEXT:
                continue
            values = expected if isinstance(expected, list) else [expected]
            actual = SECURE_CONTEXT[key]
            if operator == "Bool":
                if actual.lower() not in {str(value).lower() for value in values}:
                    return False
            elif actual not in values:
                return False
    return True


_REGION_NAMES = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)",
    "eu-west-1": "EU (Ireland)",
    "eu-central-1": "EU (Frankfurt)",
}


def _run_alarm_actions() -> None:
    from moto.cloudwatch.models import Alarm

    original = Alarm.update_state

    def update_state(self: Any, reason: str, reason_data: str, state_value: str) -> None:
        old_state = self.state_value
        original(self, reason, reason_data, state_value)
        if state_value == old_state or not self.actions_enabled:
            return
        actions = {
            "ALARM": self.alarm_actions,
            "OK": self.ok_actions,
            "INSUFFICIENT_DATA": self.insufficient_data_actions,
        }[state_value] or []
        for arn in actions:
            if ":sns:" in arn:
                _publish(arn, json.dumps(alarm_notification(self, old_state)), _subject(self))

    Alarm.update_state = update_state


def alarm_notification(alarm: Any, old_state: str) -> dict[str, Any]:
    """The JSON CloudWatch publishes to SNS when an alarm changes state (documented format)."""
    account = alarm.alarm_arn.split(":")[4]
    return {
        "AlarmName": alarm.name,
        "AlarmDescription": alarm.description,
        "AWSAccountId": account,
        "AlarmConfigurationUpdatedTimestamp": _cw_time(alarm.configuration_updated_timestamp),
        "NewStateValue": alarm.state_value,
        "NewStateReason": alarm.state_reason,
        "StateChangeTime": _cw_time(alarm.state_updated_timestamp),
        "Region": _REGION_NAMES.get(alarm.region_name, alarm.region_name),
        "AlarmArn": alarm.alarm_arn,
        "OldStateValue": old_state,
        "OKActions": list(alarm.ok_actions),
        "AlarmActions": list(alarm.alarm_actions or []),
        "InsufficientDataActions": list(alarm.insufficient_data_actions),
        "Trigger": {
            "MetricName": alarm.metric_name,
            "Namespace": alarm.namespace,
            "StatisticType": "Statistic",
            "Statistic": (alarm.statistic or "").upper(),
            "Unit": alarm.unit,
            "Dimensions": [{"value": d.value, "name": d.name} for d in alarm.dimensions],
            "Period": alarm.period,
            "EvaluationPeriods": alarm.evaluation_periods,
            "DatapointsToAlarm": alarm.datapoints_to_alarm or alarm.evaluation_periods,
            "ComparisonOperator": alarm.comparison_operator,
            "Threshold": float(alarm.threshold) if alarm.threshold is not None else None,
            "TreatMissingData": alarm.treat_missing_data or "missing",
            "EvaluateLowSampleCountPercentile": alarm.evaluate_low_sample_count_percentile or "",
        },
    }


def _subject(alarm: Any) -> str:
    region = _REGION_NAMES.get(alarm.region_name, alarm.region_name)
    subject = f'{alarm.state_value}: "{alarm.name}" in {region}'
    return subject if len(subject) <= 100 else subject[:97] + "..."


def _cw_time(value: Any) -> str:
    if isinstance(value, datetime):
        when = value if value.tzinfo else value.replace(tzinfo=UTC)
        return (
            when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.")
            + f"{when.microsecond // 1000:03d}+0000"
        )
    return str(value)


def _publish(topic_arn: str, message: str, subject: str | None = None) -> None:
    from moto.sns.models import sns_backends

    _, _, _, region, account, _ = (topic_arn.split(":", 5) + [""] * 6)[:6]
    try:
        sns_backends[account][region].publish(message=message, arn=topic_arn, subject=subject)
    except Exception as error:  # AWS drops undeliverable notifications; so do we, loudly
        logging.getLogger("glue_incremental_tools.localendpoint").warning(
            "could not deliver to %s: %s", topic_arn, _one_line(error)
        )


def _one_line(error: BaseException) -> str:
    return re.sub(r"\s+", " ", str(error)).strip() or type(error).__name__
