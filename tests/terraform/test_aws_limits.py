"""What AWS refuses and emulators accept: every planned resource of dev, prod and local
against docs/aws-limits.md, and every page's runbook link against docs/runbook.md.

Each environment is planned once (module fixture) against an in-process moto server
that only answers the account-id lookup; nothing is applied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from tests.harness.aws_limits import (
    LIMITS,
    Planned,
    planned_resources,
    table_rows,
    violations,
)
from tests.harness.endpoint import free_port
from tests.harness.environments import ENVIRONMENTS, planned_environment

pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("aws_limits")]

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = ROOT / "docs" / "runbook.md"
RUNBOOK_LINK = re.compile(r"Runbook: (https://\S+?)#([A-Za-z0-9-]+)")


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def plans(moto_endpoint, tmp_path_factory) -> dict[str, dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("limits")
    # Planning mostly waits on the provider: the three environments overlap.
    with ThreadPoolExecutor(max_workers=len(ENVIRONMENTS)) as pool:
        futures = {
            env: pool.submit(planned_environment, env, workdir, moto_endpoint)
            for env in ENVIRONMENTS
        }
        return {env: future.result() for env, future in futures.items()}


def test_every_limit_in_the_table_has_a_check_and_a_source():
    rows = table_rows()
    assert set(rows) == set(LIMITS), (
        f"table only: {sorted(set(rows) - set(LIMITS))}; checks only: {sorted(set(LIMITS) - set(rows))}"
    )
    assert all(url.startswith("https://docs.aws.amazon.com/") for url in rows.values()), rows


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_every_planned_resource_is_within_the_aws_limits(plans, env):
    resources = planned_resources(plans[env])
    assert any(r.type == "aws_cloudwatch_metric_alarm" for r in resources), f"{env} plans no alarm"
    assert any(r.type == "aws_glue_job" for r in resources), f"{env} plans no Glue job"
    broken = violations(resources)
    assert not broken, "\n".join(broken)


def test_yesterdays_dev_and_prod_values_break_the_limits():
    """The checks catch what AWS refused: dev's one 93,600 s missed-run period, prod's queuing with a retry."""
    missed_run = Planned(
        'module.alarms["orders"].aws_cloudwatch_metric_alarm.missed_run',
        "aws_cloudwatch_metric_alarm",
        {"alarm_name": "gi-dev-orders-missed-run", "period": 93_600, "evaluation_periods": 1},
    )
    prod_job = Planned(
        'module.job["orders"].aws_glue_job.this',
        "aws_glue_job",
        {"name": "gi-prod-orders", "job_run_queuing_enabled": True, "max_retries": 1},
    )
    assert [v.split(" ")[0] for v in violations([missed_run, prod_job])] == [
        "alarm-period-max",
        "glue-queuing-retries",
    ]


def _runbook_anchors() -> set[str]:
    text = RUNBOOK.read_text()
    explicit = set(re.findall(r"""<a\s+(?:id|name)=["']([^"']+)["']""", text))
    headings = {
        re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+\s+(.+)$", text, flags=re.MULTILINE)
    }
    return explicit | headings


def _page_links(resources: list[Planned]) -> dict[str, tuple[str, str]]:
    """address -> (base, anchor) of the runbook link of every alarm and page."""
    links = {}
    for resource in resources:
        text = ""
        if resource.type == "aws_cloudwatch_metric_alarm":
            text = resource.values.get("alarm_description") or ""
        elif resource.type == "aws_cloudwatch_event_target":
            if resource.values.get("target_id") == "start-dependent":
                continue  # modules/glue_event_chain starts a job: it pages nobody
            for transformer in resource.values.get("input_transformer") or []:
                text = json.loads(transformer["input_template"]).get("AlarmDescription", "")
        else:
            continue
        match = RUNBOOK_LINK.search(text)
        links[resource.address] = (match.group(1), match.group(2)) if match else ("", "")
    return links


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_every_page_links_a_runbook_section_that_exists(plans, env):
    links = _page_links(planned_resources(plans[env]))
    assert links, f"{env} plans no alarm"
    missing_link = sorted(address for address, (base, _) in links.items() if not base)
    assert not missing_link, f"pages without a runbook link: {missing_link}"
    anchors = _runbook_anchors() if RUNBOOK.exists() else set()
    unknown = sorted({anchor for _, anchor in links.values()} - anchors)
    assert not unknown, f"docs/runbook.md has no section for: {unknown}"


def _logs_key_patterns(plan: dict[str, Any]) -> dict[str, list[str]]:
    """module path -> the log-group ARN patterns its logs key lets CloudWatch Logs use it for."""
    patterns: dict[str, list[str]] = {}
    for change in plan.get("resource_changes", []):
        if change["type"] != "aws_kms_key" or ".module.logs_key[" not in f".{change['address']}":
            continue
        module = change["address"].split("module.logs_key[")[0]
        policy = json.loads(change["change"]["after"]["policy"])
        for statement in policy["Statement"]:
            if str(statement.get("Principal", {}).get("Service", "")).startswith("logs."):
                values = statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
                patterns.setdefault(module, []).extend(
                    [values] if isinstance(values, str) else values
                )
    return patterns


def _arn_like(arn: str, pattern: str) -> bool:
    """IAM's ArnLike: * and ? wildcards within the whole ARN, case-sensitive."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, arn) is not None


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_every_log_group_given_the_logs_key_is_one_the_key_lets_cloudwatch_logs_use_it_for(
    plans, env
):
    """CloudWatch Logs checks the key at CreateLogGroup: a log group outside the key policy's
    ArnLike patterns is refused (no evaluator here matches kms:EncryptionContext:*, so the
    plan's strings are compared). The logs key is created in the apply, so a log group given
    it plans an unknown kms_key_id; one the plan leaves unencrypted plans null."""
    patterns = _logs_key_patterns(plans[env])
    assert patterns, f"{env} plans no logs key"
    account_region = {
        pattern.split(":log-group:")[0] for values in patterns.values() for pattern in values
    }
    assert len(account_region) == 1, account_region
    (arn_prefix,) = account_region
    checked, refused = [], []
    for change in plans[env]["resource_changes"]:
        if change["type"] != "aws_cloudwatch_log_group" or change["change"]["actions"] != [
            "create"
        ]:
            continue
        if not (change["change"].get("after_unknown") or {}).get("kms_key_id"):
            continue
        module = next((m for m in patterns if change["address"].startswith(m)), None)
        arn = f"{arn_prefix}:log-group:{change['change']['after']['name']}"
        checked.append(arn)
        if module is None or not any(_arn_like(arn, p) for p in patterns[module]):
            refused.append(f"{change['address']} ({arn})")
    assert any("/aws/vendedlogs/states/" in arn for arn in checked), checked
    assert any("/aws-glue/jobs/" in arn for arn in checked), checked
    assert not refused, f"the logs key refuses: {refused}; patterns: {patterns}"
