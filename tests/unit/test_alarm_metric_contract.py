"""The alarms' side of ``METRIC_CONTRACT``, read from terraform/modules/job_alarms' source.

``tests/terraform/test_terraform_local.py`` compares the deployed alarms with the Python
constants after a LocalStack apply (``make test-rest``); the module's tftest pins the names
on the Terraform side only. This reads both sides without Terraform, so a rename in
``glue_incremental.run.metrics`` that the module does not mirror fails ``make test``.
"""

from __future__ import annotations

import re
from pathlib import Path

from glue_incremental.run import metrics

MODULE = Path(__file__).resolve().parents[2] / "terraform" / "modules" / "job_alarms"


def _local(source: str, name: str) -> str:
    found = re.search(rf'^\s*{name}\s*=\s*"([^"]+)"', source, re.MULTILINE)
    assert found, f"job_alarms/main.tf has no local {name}"
    return found.group(1)


def test_the_alarm_module_watches_the_metrics_the_runtime_publishes():
    main = (MODULE / "main.tf").read_text()
    variables = (MODULE / "variables.tf").read_text()
    contract = metrics.METRIC_CONTRACT

    namespace = re.search(
        r'variable "metrics_namespace" \{.*?default\s*=\s*"([^"]+)"', variables, re.DOTALL
    )
    assert namespace and namespace.group(1) == contract["namespace"] == metrics.NAMESPACE
    assert _local(main, "dimension") == contract["dimension"]
    assert _local(main, "records_new") == contract["zero_records_metric"]
    assert _local(main, "records_read") == metrics.RECORDS_READ
    assert _local(main, "watermark_lag") == contract["lag_metric"]
    counted = set(re.findall(r'^\s*metric\s*=\s*"([^"]+)"', main, re.MULTILINE))
    assert {*contract["count_alarms"], contract["publish_failures_metric"]} <= counted
    for metric in ("records_new", "watermark_lag"):
        block = re.search(
            rf"metric_name = local\.{metric}\n.*?statistic\s*=\s*\"(\w+)\"", main, re.DOTALL
        )
        assert block and block.group(1) == "Maximum", metric
    assert contract["zero_records_statistic"] == contract["lag_statistic"] == "Maximum"
