"""environments/local applied for real to the session's local AWS, then planned, used, destroyed.

The apply (mostly provider waits) starts in the background when the module is set up, in its
own copy of the tree. The module is one xdist group: one worker applies once and runs every
test on that apply; the other worker runs ``test_terraform.py``'s suites meanwhile.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from glue_incremental import aws, join
from glue_incremental.load import job as load
from glue_incremental.run import metrics
from glue_incremental.run.metrics import RunMetrics
from glue_incremental_tools import demo, deploy, status

from tests.harness import catalog
from tests.harness.reference import latest_per_key
from tests.harness.terraform import TF, TIMEOUT, changed_attributes, copy_tree, local_gap, tf

# One worker runs the module: its fixture applies the local environment once.
pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("terraform_apply")]

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)


@dataclass
class LocalEnvironment:
    """environments/local applied to the session's local AWS, in its own copy of the tree."""

    directory: Path
    terraform_vars: list[str]
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=1))
    applied: Future[tuple[dict[str, Any], subprocess.CompletedProcess[str]]] | None = None
    destroyed: bool = False

    @property
    def var(self) -> list[str]:
        return list(self.terraform_vars)

    def start(self) -> None:
        self.applied = self.executor.submit(self._apply)

    def _apply(self) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
        tf(self.directory, "init", "-no-color")
        tf(self.directory, "apply", "-auto-approve", "-no-color", *self.var)
        raw = json.loads(tf(self.directory, "output", "-json").stdout)
        # Planned straight away, still in the background: it only reads.
        plan = tf(
            self.directory,
            "plan",
            "-detailed-exitcode",
            "-no-color",
            "-out=second.tfplan",
            *self.var,
            check=False,
        )
        return deploy.output_values(raw), plan

    def plan_changes(self) -> dict[str, set[str]]:
        """The second plan's changes: resource address -> top-level attributes that differ."""
        self.plan_exit_code()
        shown = json.loads(tf(self.directory, "show", "-json", "second.tfplan").stdout)
        return changed_attributes(shown)

    def outputs(self) -> dict[str, Any]:
        assert self.applied is not None
        return self.applied.result(timeout=2 * TIMEOUT)[0]

    def plan_exit_code(self) -> tuple[int, str]:
        assert self.applied is not None
        plan = self.applied.result(timeout=2 * TIMEOUT)[1]
        return plan.returncode, plan.stdout + plan.stderr

    def planned_changes(self, pipelines_expression: str) -> dict[str, list[str]]:
        """Addresses -> actions of a plan where ``local.pipelines`` is replaced by the expression."""
        self.outputs()
        override = self.directory / "pipelines_override.tf"
        override.write_text(f'module "pipeline" {{\n  pipelines = {pipelines_expression}\n}}\n')
        try:
            tf(
                self.directory,
                "plan",
                "-refresh=false",
                "-out=changed.tfplan",
                "-no-color",
                *self.var,
            )
            shown = json.loads(tf(self.directory, "show", "-json", "changed.tfplan").stdout)
        finally:
            override.unlink()
        gaps = {
            a for a, attributes in changed_attributes(shown).items() if local_gap(a, attributes)
        }
        return {
            change["address"]: change["change"]["actions"]
            for change in shown.get("resource_changes", [])
            if change["change"]["actions"] != ["no-op"] and change["address"] not in gaps
        }

    def destroy(self) -> None:
        self.outputs()
        # The plan above proved state and endpoint agree; refreshing again
        # would only repeat the provider's slow S3 lifecycle read.
        tf(self.directory, "destroy", "-auto-approve", "-refresh=false", "-no-color", *self.var)
        self.destroyed = True

    def close(self) -> None:
        try:
            if self.applied is not None and not self.destroyed:
                self.applied.exception(timeout=2 * TIMEOUT)
                tf(self.directory, "destroy", "-auto-approve", "-no-color", *self.var, check=False)
        finally:
            self.executor.shutdown(wait=True)


@pytest.fixture(scope="module")
def local_env(endpoint, tmp_path_factory) -> Iterator[LocalEnvironment]:
    endpoint.reset()
    tree = copy_tree(tmp_path_factory.mktemp("apply"))
    env = LocalEnvironment(tree / "environments" / "local", endpoint.terraform_vars())
    env.start()
    yield env
    env.close()


@pytest.fixture(scope="module", autouse=True)
def _start_slow_work_first(request):
    """Instantiate the background fixtures before the first test if any selected test needs them."""
    wanted = {
        name
        for item in request.session.items
        if item.module is request.module
        for name in item.fixturenames
    }
    for name in ("local_env",):
        if name in wanted:
            request.getfixturevalue(name)


# --- environments/local against the endpoint -----------------------------------


def test_local_environment_applies_against_the_endpoint(local_env):
    outputs = local_env.outputs()
    assert set(outputs["job_names"]) == {
        "orders",
        "customers",
        "customers_history",
        "orders_enriched",
        "orders_iceberg",
        "daily_revenue",
    }
    for key in (
        "watermarks_table_name",
        "scripts_bucket_name",
        "oncall_topic_arn",
        "oncall_queue_url",
        "alarm_names",
    ):
        assert outputs[key], key

    table = aws.client("dynamodb").describe_table(TableName=outputs["watermarks_table_name"])[
        "Table"
    ]
    assert {k["AttributeName"]: k["KeyType"] for k in table["KeySchema"]} == {
        "job_name": "HASH",
        "sk": "RANGE",
    }

    glue = aws.client("glue")
    load = glue.get_job(JobName=outputs["job_names"]["orders"])["Job"]
    assert load["DefaultArguments"]["--job-bookmark-option"] == "job-bookmark-enable"
    assert load["ExecutionProperty"]["MaxConcurrentRuns"] == 1
    assert load["NonOverridableArguments"]["--watermark_name"] == outputs["job_names"]["orders"]
    join = glue.get_job(JobName=outputs["job_names"]["orders_enriched"])["Job"]
    names = outputs["job_names"]
    assert (
        join["DefaultArguments"]["--upstream_jobs"]
        == f"left={names['orders']},right={names['customers']}"
    )

    # Every Parquet target is a catalog table at its path (an Iceberg target's job creates its
    # own); the join runs when both loads SUCCEEDED.
    database = outputs["catalog_database_name"]
    for pipeline in outputs["pipelines"].values():
        if pipeline["run_arguments"].get("--target_format") == "iceberg":
            continue
        table = glue.get_table(DatabaseName=database, Name=pipeline["table"].split(".", 1)[1])
        assert table["Table"]["StorageDescriptor"]["Location"] == pipeline["target_path"]
    # The customers again with history: every version kept, a new one when the segment
    # changes; its table starts with the three columns a version adds.
    history = outputs["pipelines"]["customers_history"]
    assert history["run_arguments"]["--history"] == "scd2"
    assert history["run_arguments"]["--history_columns"] == "segment"
    assert (
        history["run_arguments"]["--source"]
        == outputs["pipelines"]["customers"]["run_arguments"]["--source"]
    )
    table = glue.get_table(DatabaseName=database, Name=history["table"].split(".", 1)[1])
    assert [(c["Name"], c["Type"]) for c in table["Table"]["StorageDescriptor"]["Columns"]] == [
        ("valid_from", "timestamp"),
        ("valid_to", "timestamp"),
        ("is_current", "boolean"),
    ]
    trigger = glue.get_trigger(Name=outputs["pipelines"]["orders_enriched"]["trigger_name"])
    conditions = trigger["Trigger"]["Predicate"]["Conditions"]
    assert sorted(c["JobName"] for c in conditions) == sorted([names["orders"], names["customers"]])
    assert {c["State"] for c in conditions} == {"SUCCEEDED"}
    # The custom aggregation runs when orders SUCCEEDED, on what orders writes.
    daily = outputs["pipelines"]["daily_revenue"]
    trigger = glue.get_trigger(Name=daily["trigger_name"])["Trigger"]
    assert [(c["JobName"], c["State"]) for c in trigger["Predicate"]["Conditions"]] == [
        (names["orders"], "SUCCEEDED")
    ]
    assert daily["run_arguments"]["--orders_path"] == outputs["pipelines"]["orders"]["target_path"]


def test_second_plan_after_apply_has_no_changes(local_env):
    code, output = local_env.plan_exit_code()
    assert code in (0, 2), output[-6000:]
    changes = local_env.plan_changes()
    unexpected = {
        address: attributes
        for address, attributes in changes.items()
        if not local_gap(address, attributes)
    }
    assert not unexpected, f"plan after apply is not empty: {unexpected}\n{output[-6000:]}"


RETURNS_PIPELINE = """{
    kind             = "load"
    schedule         = "cron(30 * * * ? *)"
    source           = { uri = "${local.data}/raw/returns/" }
    watermark_column = "updated_at"
    primary_key      = ["return_id"]
    target           = { path = "${local.data}/curated/returns/" }
  }"""

# Shared resources a pipeline's arrival or departure may change, in place only: the
# dashboard has a row per pipeline, and the operator roles reach each target's prefix
# (least privilege names every target, so their policies list the pipelines).
SHARED_BY_DESIGN = {
    "module.pipeline.aws_cloudwatch_dashboard.this[0]",
    "module.pipeline.aws_iam_role_policy.oncall",
    "module.pipeline.aws_iam_role_policy.analyst[0]",
}


def shared_changes_are_in_place(changes):
    return all(changes[a] == ["update"] for a in SHARED_BY_DESIGN if a in changes)


def test_adding_a_pipeline_plans_only_its_own_resources(local_env):
    changes = local_env.planned_changes(
        f"merge(local.pipelines, {{ returns = {RETURNS_PIPELINE} }})"
    )
    others = {a: act for a, act in changes.items() if a not in SHARED_BY_DESIGN}
    assert others, "the new pipeline planned nothing"
    foreign = {a: act for a, act in others.items() if "returns" not in a or act != ["create"]}
    assert not foreign, f"adding a pipeline touches other resources: {foreign}"
    assert shared_changes_are_in_place(changes), changes
    assert any('module.job["returns"]' in a for a in others)
    assert any('aws_glue_catalog_table.target["returns"]' in a for a in others)


def test_removing_a_pipeline_plans_only_its_own_resources(local_env):
    changes = local_env.planned_changes(
        '{ for k, p in local.pipelines : k => p if k != "orders_enriched" }'
    )
    others = {a: act for a, act in changes.items() if a not in SHARED_BY_DESIGN}
    foreign = {
        a: act
        for a, act in others.items()
        if not any(s in a for s in ('"orders_enriched"', "orders-enriched")) or act != ["delete"]
    }
    assert others and not foreign, f"removing a pipeline touches other resources: {foreign}"
    assert shared_changes_are_in_place(changes), changes


def test_status_lists_every_applied_pipeline_from_the_outputs(local_env):
    outputs = local_env.outputs()
    rows = status.environment_status("local", outputs=outputs)
    names = sorted(demo.PIPELINES)  # every pipeline of environments/local, by name
    assert [row.pipeline for row in rows] == names
    assert [row.job_name for row in rows] == [outputs["job_names"][name] for name in names]
    assert all(row.last_run_state is None and row.watermark is None for row in rows)
    run_alarms = {"zero_records", "missed_run", "watermark_stale"}
    count_alarms = {"late_files", "null_watermarks", "future_watermarks", "metric_publish_failures"}
    assert all(set(row.alarms) == run_alarms | count_alarms for row in rows)
    assert "MISSING" not in {state for row in rows for state in row.alarms.values()}
    assert rows[2].upstreams == ["orders"]
    assert rows[4].upstreams == ["customers", "orders"]


def test_every_applied_alarm_pages_the_on_call_topic(local_env):
    outputs = local_env.outputs()
    names = [name for per_job in outputs["alarm_names"].values() for name in per_job.values()]
    found = aws.client("cloudwatch").describe_alarms(AlarmNames=names)["MetricAlarms"]
    assert len(found) == len(names) == 42  # 7 per pipeline: 3 run alarms + 4 count alarms
    for alarm in found:
        assert alarm["AlarmActions"] == [outputs["oncall_topic_arn"]], alarm["AlarmName"]
        assert alarm["OKActions"] == [outputs["oncall_topic_arn"]], alarm["AlarmName"]


def test_every_page_rule_retries_into_its_jobs_dead_letter_queue_admitting_exactly_its_rules(
    local_env,
):
    events, sqs = aws.client("events"), aws.client("sqs")
    for job in local_env.outputs()["job_names"].values():
        rules = {
            rule["Name"]: rule["Arn"]
            for rule in events.list_rules(NamePrefix=job)["Rules"]
            if rule["Name"] in {f"{job}-run-failed", f"{job}-run-slow"}
        }
        assert len(rules) == 2, job
        url = sqs.get_queue_url(QueueName=f"{job}-event-dead-letters")["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        for name in rules:
            [target] = events.list_targets_by_rule(Rule=name)["Targets"]
            assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0, name
            assert target["DeadLetterConfig"]["Arn"] == attributes["QueueArn"], name
        assert attributes["SqsManagedSseEnabled"] == "true"
        [statement] = json.loads(attributes["Policy"])["Statement"]
        assert statement["Principal"] == {"Service": "events.amazonaws.com"}
        assert set(statement["Condition"]["ArnEquals"]["aws:SourceArn"]) == set(rules.values())


def test_oncall_topic_delivers_to_the_local_queue(local_env):
    outputs = local_env.outputs()
    aws.client("sns").publish(TopicArn=outputs["oncall_topic_arn"], Message="test page")
    received = aws.client("sqs").receive_message(
        QueueUrl=outputs["oncall_queue_url"], WaitTimeSeconds=1
    )
    assert [m["Body"] for m in received.get("Messages", [])] == ["test page"]


def _alarm(name: str) -> dict[str, Any]:
    return aws.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"][0]


def test_deployed_alarms_follow_the_runtime_metric_contract(local_env):
    outputs = local_env.outputs()
    job = outputs["job_names"]["orders"]
    names = outputs["alarm_names"]["orders"]
    contract = metrics.METRIC_CONTRACT
    dimensions = [{"Name": contract["dimension"], "Value": job}]

    zero = _alarm(names["zero_records"])
    assert zero["Namespace"] == contract["namespace"] == metrics.NAMESPACE
    assert zero["MetricName"] == contract["zero_records_metric"] == metrics.RECORDS_NEW
    assert zero["Dimensions"] == dimensions
    assert zero["Statistic"] == contract["zero_records_statistic"]
    assert (zero["ComparisonOperator"], zero["Threshold"]) == ("LessThanOrEqualToThreshold", 0.0)
    assert zero["TreatMissingData"] == "ignore"

    stale = _alarm(names["watermark_stale"])
    assert (stale["Namespace"], stale["MetricName"]) == (
        contract["namespace"],
        contract["lag_metric"],
    )
    assert stale["Statistic"] == contract["lag_statistic"]
    assert stale["Dimensions"] == dimensions

    missed = _alarm(names["missed_run"])
    assert (missed["MetricName"], missed["Statistic"]) == (metrics.RECORDS_READ, "SampleCount")
    assert missed["TreatMissingData"] == "breaching"

    # What a run publishes is what the alarms watch.
    published = metrics.metric_data(
        RunMetrics(job_name=job, records_read=0, records_written=0, watermark_lag_seconds=1.0)
    )
    watched = {
        (zero["MetricName"], json.dumps(zero["Dimensions"])),
        (stale["MetricName"], json.dumps(dimensions)),
    }
    assert watched <= {(d["MetricName"], json.dumps(d["Dimensions"])) for d in published}


def _wait_for_state(name: str, state: str, timeout: float) -> str:
    """LocalStack evaluates alarms on its own schedule (every period): wait for it."""
    deadline = datetime.now(UTC) + timedelta(seconds=timeout)
    while (current := _alarm(name)["StateValue"]) != state and datetime.now(UTC) < deadline:
        time.sleep(0.5)
    return current


def test_localstack_pages_a_zero_record_run_through_the_on_call_topic(local_env):
    outputs = local_env.outputs()
    job = outputs["job_names"]["orders"]
    name = outputs["alarm_names"]["orders"]["zero_records"]
    period = _alarm(name)["Period"]
    assert period == 10  # environments/local keeps alarm evaluation within seconds

    metrics.publish(RunMetrics(job_name=job, records_read=0, records_written=0))

    assert _wait_for_state(name, "ALARM", timeout=3 * period + 10) == "ALARM"
    deadline = datetime.now(UTC) + timedelta(seconds=20)
    notified = []
    while not notified and datetime.now(UTC) < deadline:
        for message in (
            aws.client("sqs")
            .receive_message(
                QueueUrl=outputs["oncall_queue_url"], MaxNumberOfMessages=10, WaitTimeSeconds=1
            )
            .get("Messages", [])
        ):
            body = json.loads(message["Body"])
            if body.get("AlarmName") == name and body.get("NewStateValue") == "ALARM":
                notified.append(body)
    assert notified, f"no ALARM notification for {name} reached the on-call queue"
    assert notified[0]["Trigger"]["MetricName"] == metrics.RECORDS_NEW
    # No run since: the page stands (it does not resolve itself once the datapoint ages out).
    time.sleep(3 * period)
    assert _alarm(name)["StateValue"] == "ALARM"


def test_a_job_that_never_ran_is_in_missed_run_alarm(local_env):
    outputs = local_env.outputs()
    name = outputs["alarm_names"]["orders_enriched"]["missed_run"]
    # LocalStack evaluates an alarm when it is created: no datapoint, missing data breaching.
    assert _wait_for_state(name, "ALARM", timeout=30) == "ALARM"


# Two days of orders, one key corrected within the batch: the reference keeps its later version.
# (`op`: environments/local's orders load takes `op` = D as a delete; none here.)
CATALOG_ORDERS = {
    "2024-05-01": [
        {"order_id": "o1", "customer_id": 1, "amount": 10.5, "updated_at": "2024-05-01T08:00:00Z"},
        {"order_id": "o2", "customer_id": 2, "amount": 20.0, "updated_at": "2024-05-01T09:00:00Z"},
        {"order_id": "o1", "customer_id": 1, "amount": 11.5, "updated_at": "2024-05-01T10:00:00Z"},
    ],
    "2024-05-02": [
        {"order_id": "o3", "customer_id": 1, "amount": 30.25, "updated_at": "2024-05-02T08:00:00Z"}
    ],
}
# A later delivery whose order carries a column the first ones lacked.
CATALOG_NEW_COLUMN = {
    "2024-05-03": [
        {"order_id": "o4", "customer_id": 2, "amount": 7.0, "updated_at": "2024-05-03T08:00:00Z"}
        | {"channel": "web"}
    ]
}
# The join's right side, a daily snapshot of the customers (written here, not by a load).
CATALOG_CUSTOMERS = {
    day: [{"customer_id": 1, "name": "ada"}, {"customer_id": 2, "name": "bob"}]
    for day in ("2024-05-01", "2024-05-02", "2024-05-03")
}


def _land(uri: str, days: dict[str, list[dict[str, Any]]], name: str) -> None:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    for day, batch in days.items():
        body = "".join(json.dumps({**row, "op": "I"}) + "\n" for row in batch).encode()
        key = f"{prefix.rstrip('/')}/order_date={day}/{name}"
        aws.client("s3").put_object(Bucket=bucket, Key=key, Body=body)


def _run(job: Any, pipeline: dict[str, Any], spark: Any, **overrides: str) -> dict[str, Any]:
    arguments = {**pipeline["run_arguments"], **overrides}
    argv = ["job.py", "--JOB_NAME", pipeline["job_name"]]
    return job.main([*argv, *(item for pair in arguments.items() for item in pair)], spark=spark)


def _through_catalog(spark: Any, pipeline: dict[str, Any], *columns: str) -> list[tuple]:
    """The rows a catalog reader sees, ``columns`` of them, the partition as text."""
    read = catalog.read_through_catalog(spark, *pipeline["table"].split(".", 1))
    assert set(columns) <= set(read.columns), read.columns
    shown = [f"string({name})" if name == "order_date" else name for name in columns]
    return sorted(tuple(row) for row in read.selectExpr(*shown).collect())


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def test_a_target_read_through_the_glue_catalog_returns_exactly_its_rows(local_env, spark):
    """Athena-style reading: the catalog's table (and partition or projection) locations and
    columns only. A column a later run added shows for the readers of the load's table and
    of the join's, null in older rows."""
    outputs = local_env.outputs()
    pipeline, enriched = outputs["pipelines"]["orders"], outputs["pipelines"]["orders_enriched"]
    source = pipeline["run_arguments"]["--source"]
    _land(source, CATALOG_ORDERS, "part-0.json")
    summary = _run(load, pipeline, spark, **{"--source_format": "json"})
    assert summary["records_written"] == 3

    columns = ["order_id", "order_date", "amount", "updated_at"]
    reference = latest_per_key(
        [
            ((0, day), {**row, "order_date": day})
            for day, batch in CATALOG_ORDERS.items()
            for row in batch
        ],
        ["order_id"],
        "updated_at",
    )
    # The JSON watermark's ISO text is typed (a timestamp, read back in the session's UTC).
    typed = [{**row, "updated_at": _utc(row["updated_at"])} for row in reference]
    expected = sorted(tuple(row[name] for name in columns) for row in typed)
    assert _through_catalog(spark, pipeline, *columns) == expected

    # A delivery with a new column: the load adds it to its target and its catalog table.
    _land(source, CATALOG_NEW_COLUMN, "part-1.json")
    summary = _run(load, pipeline, spark, **{"--source_format": "json"})
    assert summary["schema_changes"] == ["added channel string"]
    assert summary["catalog_columns_updated"] == ["channel"]
    with_channel = [("o1", None), ("o2", None), ("o3", None), ("o4", "web")]
    assert _through_catalog(spark, pipeline, "order_id", "channel") == with_channel

    # The join of what the load committed (older files without the column, newer with it)
    # with a customers snapshot: its output and its catalog table carry the column too.
    customers = f"{source.rstrip('/').rsplit('/', 2)[0]}/raw/catalog_customers/"
    _land(customers, CATALOG_CUSTOMERS, "part-0.json")
    sides = {
        "--right_path": customers,
        "--right_format": "json",
        "--upstream_jobs": f"left={pipeline['job_name']}",
    }
    joined = _run(join, enriched, spark, **sides)
    assert joined["records_written"] == 4
    assert "channel" in joined["catalog_columns_updated"]
    assert _through_catalog(spark, enriched, "order_id", "channel") == with_channel
    assert [name for _, name in _through_catalog(spark, enriched, "order_id", "name")] == [
        "ada",
        "bob",
        "ada",
        "bob",
    ]


def test_a_job_reads_sources_encrypted_with_the_lake_key(local_env, spark):
    """A source object written SSE-KMS with the lake key loads like any other.

    Only reading: S3A (AWS SDK v1) refuses to copy SSE-KMS objects over the emulator's
    plain-HTTP endpoint, and its commit renames are copies, so SSE-KMS targets are not
    exercised locally. LocalStack enforces no key policy: the grants are checked on the
    planned policies (modules' tests, tests/terraform/test_aws_limits.py).
    """
    outputs = local_env.outputs()
    key = outputs["lake_kms_key_arn"]
    pipeline = outputs["pipelines"]["customers"]
    arguments = {**pipeline["run_arguments"], "--source_format": "json"}
    s3 = aws.client("s3")
    bucket, _, prefix = arguments["--source"].removeprefix("s3://").partition("/")
    row = {"customer_id": 7, "order_date": "2024-05-01", "updated_at": "2024-05-01T08:00:00Z"}
    source_key = f"{prefix.rstrip('/')}/order_date=2024-05-01/part-0.json"
    s3.put_object(
        Bucket=bucket,
        Key=source_key,
        Body=json.dumps(row).encode(),
        ServerSideEncryption="aws:kms",
        SSEKMSKeyId=key,
    )
    head = s3.head_object(Bucket=bucket, Key=source_key)
    assert (head["ServerSideEncryption"], head["SSEKMSKeyId"].rsplit("/", 1)[-1]) == (
        "aws:kms",
        key.rsplit("/", 1)[-1],
    )

    argv = ["incremental_load.py", "--JOB_NAME", pipeline["job_name"]]
    summary = load.main(
        [*argv, *(item for pair in arguments.items() for item in pair)], spark=spark
    )

    assert summary["records_written"] == 1
    read_back = spark.read.parquet(arguments["--target_path"]).collect()
    assert [r.customer_id for r in read_back] == [7]


def test_local_environment_destroys_cleanly(local_env):
    outputs = local_env.outputs()
    local_env.destroy()
    tables = aws.client("dynamodb").list_tables()["TableNames"]
    assert outputs["watermarks_table_name"] not in tables
    assert not aws.client("glue").get_jobs()["Jobs"]
