"""``pages --env local`` (the pages that reached the on-call topic) and ``env --env ENV``.

Pages: the local environment subscribes an SQS queue to the on-call SNS topic (raw
delivery; Terraform output ``oncall_queue_url``), standing in for the pager. ``pages``
reads that queue without consuming it: messages stay hidden while it is read (or each
receive returns the same first ten), then all are made visible again for the next reader.
Each page is an alarm notification or a failed-run event. In an account the pager is
whatever subscribes to the topic: ``aws sns list-subscriptions-by-topic``.

Endpoints: ``env --env local`` prints the ``export`` lines that route the AWS CLI and
SDKs to the running local stack (``AWS_ENDPOINT_URL`` and the service-specific
``AWS_ENDPOINT_URL_<SERVICE>``, which the AWS CLI and SDKs honour, the region and the
stack's dummy credentials), and an ``aws`` shell function that gives AWS CLI v1's ``sqs``
commands the endpoint it ignores: ``eval "$(python -m glue_incremental env --env local)"``.
For another environment it prints the ``unset`` of those variables and its region.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import time
from collections.abc import Callable, Mapping
from typing import Any

from glue_incremental import aws

from glue_incremental_tools.errors import CommandError

RECEIVE_ROUNDS = 10
# Long enough to read a busy queue to its end; a reader killed midway hides its pages no longer.
PEEK_SECONDS = 30


def parse_page(body: str) -> dict[str, Any]:
    """A message of the on-call queue: an alarm notification or a failed-run event."""
    try:
        message: Any = json.loads(body)
    except ValueError:
        message = body
    if isinstance(message, dict) and "Type" in message and "Message" in message:
        return parse_page(str(message["Message"]))  # an SNS envelope (not raw delivery)
    if isinstance(message, dict) and "AlarmName" in message:
        reason = " ".join(str(message.get("NewStateReason") or "").split())
        return {
            "kind": "alarm",
            "time": message.get("StateChangeTime"),
            "state": message.get("NewStateValue"),
            "name": message["AlarmName"],
            "summary": reason,
        }
    if isinstance(message, dict) and isinstance(message.get("detail"), dict):
        detail = message["detail"]
        return {
            "kind": "run",
            "time": message.get("time"),
            "state": detail.get("state"),
            "name": detail.get("jobName"),
            "summary": " ".join(
                filter(None, [f"run {detail.get('jobRunId')}", str(detail.get("message") or "")])
            ),
        }
    text = message if isinstance(message, str) else json.dumps(message, sort_keys=True)
    return {"kind": "other", "time": None, "state": None, "name": None, "summary": text}


def read_pages(queue_url: str, wait_seconds: float = 0.0) -> list[dict[str, Any]]:
    """Every message in the queue, oldest first, left in the queue (see the module docstring).

    ``wait_seconds``: keep receiving that long for pages still being delivered.
    """
    sqs = aws.client("sqs")
    seen: dict[str, dict[str, Any]] = {}
    received: dict[str, str] = {}
    deadline = time.monotonic() + wait_seconds
    quiet = 0
    try:
        while True:
            messages = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=PEEK_SECONDS,
                AttributeNames=["SentTimestamp"],
            ).get("Messages", [])
            for message in messages:
                received[message["MessageId"]] = message["ReceiptHandle"]
            new = [m for m in messages if m["MessageId"] not in seen]
            for message in new:
                page = parse_page(message["Body"])
                page["sent"] = int(message.get("Attributes", {}).get("SentTimestamp") or 0)
                seen[message["MessageId"]] = page
            quiet = 0 if new else quiet + 1
            if quiet >= RECEIVE_ROUNDS and time.monotonic() >= deadline:
                break
            if not new:
                time.sleep(0.1)
    finally:
        _show_again(sqs, queue_url, received)
    return sorted(seen.values(), key=lambda page: page["sent"])


def _show_again(sqs: Any, queue_url: str, received: Mapping[str, str]) -> None:
    """Make every received message visible again, so reading the pages consumes none."""
    entries = [
        {"Id": str(number), "ReceiptHandle": handle, "VisibilityTimeout": 0}
        for number, handle in enumerate(received.values())
    ]
    for start in range(0, len(entries), 10):
        sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries[start : start + 10])


def render_pages(pages: list[dict[str, Any]]) -> str:
    if not pages:
        return "no pages"
    lines = []
    for page in pages:
        when = page.get("time") or ""
        lines.append(
            "  ".join(
                str(part)
                for part in (when, page["kind"], page.get("state") or "-", page.get("name") or "-")
            )
        )
        if page.get("summary"):
            lines.append(f"    {page['summary']}")
    return "\n".join(lines)


# -- endpoints ----------------------------------------------------------------------------------

# What routes the AWS CLI and SDKs: endpoints, region, the local stack's dummy credentials.
_PASSED = ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID")
_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def endpoint_exports(environment: Mapping[str, str]) -> list[str]:
    """``export`` lines of the AWS routing variables in ``environment``, sorted."""
    names = sorted(
        name
        for name in environment
        if name.startswith("AWS_ENDPOINT_URL") or name in _PASSED or name in _CREDENTIALS
    )
    return [f"export {name}={shlex.quote(environment[name])}" for name in names]


# AWS CLI v1 sends every `aws sqs` call to queue.amazonaws.com (its SSL common-name
# customization) unless --endpoint-url is given, ignoring AWS_ENDPOINT_URL*: this shell
# function passes it. With no SQS endpoint set (an account) it calls `aws` as it is.
AWS_CLI_V1_SQS = (
    'aws() { if [ -n "${AWS_ENDPOINT_URL_SQS:-}" ] && [ "$1" = sqs ]; then '
    'command aws --endpoint-url "$AWS_ENDPOINT_URL_SQS" "$@"; else command aws "$@"; fi; }'
)


def account_exports(environment: Mapping[str, str], region: str | None) -> list[str]:
    """Lines that route the AWS CLI to AWS: unset every endpoint override, set the region."""
    names = sorted(name for name in environment if name.startswith("AWS_ENDPOINT_URL"))
    lines = [f"unset {' '.join(names)}"] if names else []
    if region:
        lines.append(f"export AWS_REGION={shlex.quote(region)}")
    return lines


def _local_environment() -> dict[str, str]:
    """The local stack's variables (``make up``), else this process's (the demo, tests)."""
    from glue_incremental_tools import stack

    record = stack.read_stack()
    if record is not None:
        return dict(record["environment"])
    if aws.endpoint_url():
        return dict(os.environ)
    raise CommandError(
        "the local stack is not running: start it with `make up` (stop it with `make down`)"
    )


# -- command line -------------------------------------------------------------------------------


def register_pages(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pages",
        help="the pages (alarms, failed runs) that reached the on-call topic (local stack)",
        description="Show the alarm and failed-run pages the local on-call topic delivered "
        "to its queue, without consuming them (the local stack; in an account it prints how "
        "to list the topic's subscriptions instead).",
    )
    parser.add_argument("--env", required=True, help="environment (local)")
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="keep receiving this long for pages still being delivered (0)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=_cmd_pages)


def register_env(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "env",
        help='export lines routing the aws CLI to an environment (eval "$(... env --env local)")',
        description="Print the AWS_ENDPOINT_URL* / region / credential exports of --env.",
    )
    parser.add_argument("--env", required=True, help="environment (local, dev, prod)")
    parser.set_defaults(handler=_cmd_env)


def _cmd_pages(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    from glue_incremental_tools.pipelines import open_outputs

    outputs = open_outputs(args.env)
    queue_url = outputs.get("oncall_queue_url")
    if not queue_url:
        topic = outputs.get("oncall_topic_arn") or "<oncall_topic_arn>"
        raise CommandError(
            f"environment {args.env!r} pages through the on-call topic's subscriptions, not a "
            f"queue this command can read: aws sns list-subscriptions-by-topic --topic-arn {topic}"
        )
    pages = read_pages(str(queue_url), args.wait)
    out(json.dumps(pages, indent=2) if args.json else render_pages(pages))
    return 0


def _cmd_env(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    from glue_incremental_tools import stack

    if args.env == stack.ENVIRONMENT:
        lines = endpoint_exports(_local_environment())
        if any(line.startswith("export AWS_ENDPOINT_URL_SQS=") for line in lines):
            lines.append(AWS_CLI_V1_SQS)
    else:
        from glue_incremental_tools import deploy, environments

        try:
            deploy.environment_root(args.env)
        except deploy.DeployError as error:
            raise CommandError(str(error)) from None
        lines = account_exports(os.environ, environments.environment_region(args.env))
    for line in lines:
        out(line)
    return 0
