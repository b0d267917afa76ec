"""The platform end to end: ``make demo``'s own command, asserting after every step; and
the quick start's first command, ``make setup``, again on a set-up checkout.

terraform apply of environments/local (pipelines ``customers`` and ``orders`` feeding
``orders_enriched``, ``customers_history`` and ``orders_iceberg``) on LocalStack + DynamoDB
Local + moto (Glue) -> deploy -> sources in S3 -> full loads -> new and late data (a new
column, deleted orders, customers changing segment) -> incremental loads -> the customers'
history against the reference, its "as of" answer -> the Iceberg table's snapshots, a
rewind that rolls it back, a rerun that converges -> incremental join -> the aggregation ->
a second plan that keeps the columns the runs added -> a run with no new data -> a failing
run -> LocalStack's own alarm evaluation (on RecordsNew) -> pages on the on-call queue
(alarm action -> SNS -> SQS, and EventBridge -> SNS -> SQS) -> the status table; the
jobs read and write ``s3://`` through S3A.
The test runs ``run_demo`` (``python -m glue_incremental demo --keep``'s function): its
``check`` hook asserts after each step, on the running stack, then the README's guide
runs on that same stack.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from glue_incremental import aws
from glue_incremental.run.metrics import NAMESPACE, RECORDS_NEW
from glue_incremental.watermarks import Watermarks
from glue_incremental_tools import deploy
from glue_incremental_tools.demo import (
    AS_OF_CONDITION,
    BAD_ARGUMENTS,
    CUSTOMERS,
    CUSTOMERS_HISTORY,
    DAILY_REVENUE,
    DAYS,
    DELETED_ORDERS,
    ENRICHED,
    ICEBERG,
    NEW_COLUMN,
    ORDERS,
    ORDERS_PER_DAY,
    PIPELINES,
    RESEGMENTED,
    STEP_KEYS,
    Demo,
    deleted_order_ids,
    published_rows,
    run_demo,
)
from glue_incremental_tools.runner import JobRun, get_run_record

from tests.harness.history_reference import Made, history
from tests.harness.provider_daemons import reattached
from tests.harness.readme import README, make_targets, readme_commands, run_local_guide

pytestmark = pytest.mark.e2e


@pytest.fixture
def providers(monkeypatch):
    # The demo's terraform commands reattach one running provider (tests/harness/provider_daemons.py).
    with reattached() as provider:
        for name, value in provider.items():
            monkeypatch.setenv(name, value)
        yield


def rows(uri: str) -> list[dict]:
    """Every row of the published Parquet objects under an ``s3://`` target (read with boto3)."""
    assert uri.startswith("s3://"), uri
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    s3 = aws.client("s3")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    keys = [
        item["Key"]
        for page in pages
        for item in page.get("Contents", [])
        if item["Key"].endswith(".parquet")
        and not any(p.startswith(("_", ".")) for p in item["Key"][len(prefix) :].split("/"))
    ]
    return [
        row
        for key in keys
        for row in pq.read_table(
            io.BytesIO(s3.get_object(Bucket=bucket, Key=key)["Body"].read()), partitioning=None
        ).to_pylist()
    ]


def delivered(uri: str) -> list[dict]:
    """Every row of the JSON-lines objects under an ``s3://`` source, with the
    ``<column>=<value>`` directories of its key as columns, as the demo delivered them."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    s3 = aws.client("s3")
    found = []
    for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]:
        columns = dict(part.split("=", 1) for part in item["Key"].split("/") if "=" in part)
        body = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read().decode()
        found += [{**columns, **json.loads(line)} for line in body.splitlines() if line]
    return found


def _normal(row: dict) -> dict:
    """A version row with comparable values: times as aware UTC datetimes, dates as text."""
    out = {}
    for name, value in row.items():
        if name in ("updated_at", "valid_from", "valid_to") and isinstance(value, str):
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if isinstance(value, datetime):
            value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        out[name] = value
    return out


def datapoints(job: str, metric: str) -> list[float]:
    """Every value of ``metric`` the runs of ``job`` published in the last hour."""
    now = datetime.now(UTC)
    stats = aws.client("cloudwatch").get_metric_statistics(
        Namespace=NAMESPACE,
        MetricName=metric,
        Dimensions=[{"Name": "JobName", "Value": job}],
        StartTime=now - timedelta(hours=1),
        EndTime=now + timedelta(minutes=1),
        Period=60,
        Statistics=["Minimum", "Maximum", "SampleCount"],
    )["Datapoints"]
    return sorted(point["Minimum"] for point in stats) + sorted(point["Maximum"] for point in stats)


def _iso(cursor: object) -> str:
    """The JSON watermark's ISO text is typed now: its cursor comes back a timestamp."""
    if not isinstance(cursor, datetime):
        cursor = datetime.fromisoformat(str(cursor).replace("Z", "+00:00"))
    return cursor.astimezone(UTC).isoformat()


def ran(demo: Demo, key: str, label: str) -> JobRun:
    """The run of ``key``'s job the demo labelled ``label``."""
    job = demo.job(key)
    return next(row.run for row in demo.runs if row.job == job and row.label == label)


class Checks:
    """What must hold after each step of the demo (``run_demo``'s ``check`` hook)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.saved: dict[str, object] = {}

    def __call__(self, key: str, demo: Demo) -> None:
        self.seen.append(key)
        getattr(self, key.replace(" ", "_").replace(",", ""), lambda _demo: None)(demo)

    def apply(self, demo: Demo) -> None:
        # -- terraform apply: the environment exists on the endpoint -----------------------------
        outputs = demo.outputs
        load, customers, join = demo.job(ORDERS), demo.job(CUSTOMERS), demo.job(ENRICHED)
        bucket = outputs["scripts_bucket_name"]
        glue = aws.client("glue")
        scripts = ((load, "incremental_load"), (customers, "incremental_load"))
        released = f"s3://{bucket}/releases/{demo.release}"
        for job, script in (*scripts, (join, "incremental_join")):
            definition = glue.get_job(JobName=job)["Job"]
            # The apply pins the release this checkout builds: no mutable alias anywhere.
            assert definition["Command"]["ScriptLocation"] == f"{released}/{script}.py"
            assert definition["DefaultArguments"]["--extra-py-files"] == (
                f"{released}/glue_incremental.zip"
            )
            assert definition["DefaultArguments"]["--release"] == demo.release
        self.saved["applied"] = self.jobs(demo)

    def jobs(self, demo: Demo) -> dict:
        glue = aws.client("glue")
        return {
            name: glue.get_job(JobName=name)["Job"] for name in demo.outputs["job_names"].values()
        }

    def deploy(self, demo: Demo) -> None:
        # -- deploy: the release the apply pinned, its manifest last, verified jobs --------------
        bucket = demo.outputs["scripts_bucket_name"]
        s3 = aws.client("s3")
        manifest = json.loads(
            s3.get_object(Bucket=bucket, Key=f"releases/{demo.release}/manifest.json")[
                "Body"
            ].read()
        )
        # The library and every script of glue_scripts/ (one release: a job may switch to any).
        scripts_shipped = len(list((deploy.project_root() / "glue_scripts").glob("*.py")))
        assert len(manifest["files"]) == 1 + scripts_shipped
        for entry in manifest["files"]:
            assert (
                s3.head_object(Bucket=bucket, Key=entry["key"])["Metadata"]["sha256"]
                == entry["sha256"]
            )
        # Bucket and jobs given: the rest of the apply still runs, its outputs are not written.
        assert (
            deploy.deploy(
                "local",
                bucket=bucket,
                jobs=list(demo.outputs["job_names"].values()),
                verify_only=True,
                log=lambda _: None,
            )
            is None
        )
        # The deploy changed no job definition: each job is exactly what the apply left (the
        # second plan, after the runs, shows it for the whole tree).
        assert self.jobs(demo) == self.saved["applied"]

    def source(self, demo: Demo) -> None:
        s3 = aws.client("s3")
        keys = [
            item["Key"]
            for item in s3.list_objects_v2(Bucket=demo.outputs["data_bucket_name"], Prefix="raw/")[
                "Contents"
            ]
        ]
        assert len([key for key in keys if key.startswith("raw/orders/")]) == DAYS
        assert len([key for key in keys if key.startswith("raw/customers/")]) == DAYS

    def full_loads(self, demo: Demo) -> None:
        # -- the source, then the full loads through the runner, at once ---------------------------
        outputs, load = demo.outputs, demo.job(ORDERS)
        released = f"s3://{outputs['scripts_bucket_name']}/releases/{demo.release}"
        snapshot = ran(demo, CUSTOMERS, "full load")
        assert snapshot.state == "SUCCEEDED", snapshot.error_message
        assert snapshot.summary["records_written"] == DAYS * 8
        assert snapshot.arguments["--source"] == f"{demo.data}/raw/customers/"
        assert snapshot.arguments["--target_path"] == demo.curated(CUSTOMERS)
        full = ran(demo, ORDERS, "full load")
        assert full.state == "SUCCEEDED", full.error_message
        assert full.summary["records_read"] == DAYS * ORDERS_PER_DAY == 60
        assert full.summary["records_written"] == 60
        # Glue's argument precedence: the job's defaults, the run's format, locked state name.
        assert full.arguments["--watermark_column"] == "updated_at"
        assert full.arguments["--primary_key"] == "order_id"
        assert full.arguments["--source"] == f"s3://{outputs['data_bucket_name']}/raw/orders/"
        assert full.arguments["--source_format"] == "json"
        assert full.arguments["--watermark_name"] == load
        assert full.arguments["--extra-py-files"] == f"{released}/glue_incremental.zip"
        assert full.summary["release"] == demo.release  # the run names its release
        first = demo.watermarks(load)["default"]
        assert _iso(first["watermarks"]["cursor"]) == "2024-05-03T17:13:00+00:00"
        assert first["job_run_id"] == full.run_id
        self.saved["first"] = first
        target = demo.target(ORDERS)
        assert target.startswith("s3://")
        assert len(rows(target)) == 60
        iceberg_full = ran(demo, ICEBERG, "full load")
        assert iceberg_full.state == "SUCCEEDED", iceberg_full.error_message
        assert iceberg_full.summary["records_written"] == 60
        # The same snapshots with history: one version per customer (no segment changed yet).
        versions = ran(demo, CUSTOMERS_HISTORY, "full load")
        assert versions.state == "SUCCEEDED", versions.error_message
        assert versions.arguments["--history"] == "scd2"
        assert versions.arguments["--history_columns"] == "segment"
        assert versions.summary["records_read"] == DAYS * 8
        assert (versions.summary["versions_opened"], versions.summary["versions_closed"]) == (8, 0)
        assert len(demo.customers_history().versions) == 8

    def new_data(self, demo: Demo) -> None:
        assert len(rows(demo.curated(ORDERS))) == 60  # landed, not loaded yet

    def incremental(self, demo: Demo) -> None:
        # -- new and late data: only the new files are read, the late corrections win, a new ----
        # -- column joins the target (null in older rows), deleted orders leave it ----------------
        load, deleted = demo.job(ORDERS), len(DELETED_ORDERS)
        assert ran(demo, CUSTOMERS, "incremental").summary["records_written"] == 8
        assert len(rows(demo.curated(CUSTOMERS))) == (DAYS + 1) * 8
        incremental = ran(demo, ORDERS, "incremental")
        assert incremental.state == "SUCCEEDED", incremental.error_message
        assert incremental.summary["records_read"] == 13 + deleted
        assert incremental.summary["records_deleted"] == deleted
        assert incremental.summary["schema_changes"] == [f"added {NEW_COLUMN} string"]
        second = demo.watermarks(load)["default"]
        assert second["version"] == self.saved["first"]["version"] + 1
        assert _iso(second["watermarks"]["cursor"]) == "2024-05-04T17:03:00+00:00"
        self.saved["second"] = second
        loaded = rows(demo.target(ORDERS))
        assert len(loaded) == 70 - deleted
        assert len({row["order_id"] for row in loaded}) == 70 - deleted
        assert not {row["order_id"] for row in loaded} & set(deleted_order_ids())
        corrected = sorted(row["order_id"] for row in loaded if row["status"] == "corrected")
        assert corrected == ["20240501-001", "20240501-002", "20240501-003"]
        channels = {row["order_id"]: row.get(NEW_COLUMN) for row in loaded}
        assert sorted(k for k, v in channels.items() if v is not None) == [
            f"20240504-{number:03d}" for number in range(1, 11)
        ]
        self.saved["channels"] = channels
        assert [row["order_id"] for row in demo.show_orders_target()] == sorted(channels)
        catalog = demo.outputs["pipelines"][ORDERS]["table"].split(".", 1)
        described = aws.client("glue").get_table(DatabaseName=catalog[0], Name=catalog[1])
        columns = described["Table"]["StorageDescriptor"]["Columns"]
        assert NEW_COLUMN in [c["Name"] for c in columns]
        iceberg_incremental = ran(demo, ICEBERG, "incremental")
        assert iceberg_incremental.state == "SUCCEEDED", iceberg_incremental.error_message

        # -- the customers' history: the resegmented customers' first versions closed, a ----------
        # -- second opened; the target equals the reference built from every delivered snapshot --
        versions = ran(demo, CUSTOMERS_HISTORY, "incremental")
        assert versions.state == "SUCCEEDED", versions.error_message
        assert versions.summary["records_read"] == 8
        changed = len(RESEGMENTED)
        assert (versions.summary["versions_opened"], versions.summary["versions_closed"]) == (
            changed,
            changed,
        )
        made = [Made(row) for row in delivered(f"{demo.data}/raw/customers/")]
        expected = [
            _normal(row) for row in history(made, ["customer_id"], "updated_at", ["segment"])
        ]
        shown = demo.customers_history()
        assert [_normal(row) for row in shown.versions] == expected
        assert len(expected) == 8 + changed
        customer = RESEGMENTED[0]
        assert shown.customer == customer
        assert [
            (row["segment"], row["valid_from"], row["valid_to"], row["is_current"])
            for row in shown.of(customer)
        ] == [
            (
                "ab"[customer % 2],
                datetime(2024, 5, 1, 7, tzinfo=UTC),
                datetime(2024, 5, 4, 7, tzinfo=UTC),
                False,
            ),
            ("ab"[(customer + 1) % 2], datetime(2024, 5, 4, 7, tzinfo=UTC), None, True),
        ]
        # "As of" t, docs/history.md's condition, on the reference: one row per customer, the
        # resegmented ones in their first segment.
        t = shown.as_of
        assert t == datetime(2024, 5, 3, tzinfo=UTC)
        then = [
            r
            for r in expected
            if r["valid_from"] <= t and (r["valid_to"] is None or t < r["valid_to"])
        ]
        assert [_normal(row) for row in shown.valid_then] == then
        assert {r["customer_id"]: r["segment"] for r in then} == {
            number: "ab"[number % 2] for number in range(1, 9)
        }
        self.saved["as_of"] = (customer, t, "ab"[customer % 2])

    def rewind_join_aggregation(self, demo: Demo) -> None:
        # -- Iceberg: one snapshot per run carrying its watermark; the rewind rolled the table ----
        # -- back to the full load's snapshot, and the rerun converged from there ------------------
        iceberg_job, deleted = demo.job(ICEBERG), len(DELETED_ORDERS)
        iceberg_full = ran(demo, ICEBERG, "full load")
        iceberg_incremental = ran(demo, ICEBERG, "incremental")
        rerun = ran(demo, ICEBERG, "rerun after rewind")
        assert rerun.state == "SUCCEEDED", rerun.error_message
        table = demo.iceberg_table()
        full_snapshot, incremental_snapshot, rerun_snapshot = table.snapshots
        assert [s.run_id for s in table.snapshots] == [
            iceberg_full.run_id,
            iceberg_incremental.run_id,
            rerun.run_id,
        ]
        assert table.records[full_snapshot.snapshot_id] == 60
        assert table.records[incremental_snapshot.snapshot_id] == 70 - deleted
        # The rerun committed on top of the full load's snapshot: the rewind had rolled back.
        assert rerun_snapshot.parent_id == full_snapshot.snapshot_id
        assert table.current.run_id == rerun.run_id and table.rows == 70 - deleted
        rewound = [
            state
            for state in Watermarks(demo.outputs["watermarks_table_name"]).iter_history(iceberg_job)
            if state.get("kind") == "rewind"
        ]
        assert [_iso(state["watermarks"]["cursor"]) for state in rewound] == [
            "2024-05-03T17:13:00+00:00"
        ]
        assert table.current.watermark == demo.watermarks(iceberg_job)["default"]["watermarks"]
        second = self.saved["second"]
        assert table.current.watermark["cursor"] == second["watermarks"]["cursor"]

        # -- the incremental join reads what the load committed ------------------------------------
        joined = ran(demo, ENRICHED, "join")
        assert joined.state == "SUCCEEDED", joined.error_message
        assert joined.arguments["--left_path"] == demo.curated(ORDERS)
        assert joined.arguments["--right_path"] == demo.curated(CUSTOMERS)
        enriched = rows(demo.curated(ENRICHED))
        assert len(enriched) == 70 - deleted and all(row["customer_name"] for row in enriched)
        # The column only the newest orders files carry reaches the join's output and its table.
        assert {row["order_id"]: row.get(NEW_COLUMN) for row in enriched} == self.saved["channels"]
        catalog = demo.outputs["pipelines"][ENRICHED]["table"].split(".", 1)
        described = aws.client("glue").get_table(DatabaseName=catalog[0], Name=catalog[1])
        columns = described["Table"]["StorageDescriptor"]["Columns"]
        assert NEW_COLUMN in [c["Name"] for c in columns]
        assert set(demo.watermarks(demo.job(ENRICHED))) == {"left", "right"}

        # -- the custom aggregation: revenue per customer and day of what orders committed --------
        aggregated = ran(demo, DAILY_REVENUE, "aggregation")
        assert aggregated.state == "SUCCEEDED", aggregated.error_message
        assert aggregated.arguments["--upstream_job"] == demo.job(ORDERS)
        expected: dict[tuple[str, int], tuple[float, int]] = {}
        for order in published_rows(demo.curated(ORDERS)):
            key = (order["order_date"], order["customer_id"])
            revenue, count = expected.get(key, (0.0, 0))
            expected[key] = (revenue + order["amount"], count + 1)
        daily = demo.daily_revenue()
        assert len(expected) == (DAYS + 1) * 8 or len(expected) > DAYS * 8
        assert {
            (row["day"], row["customer_id"]): (round(row["revenue"], 2), row["orders"])
            for row in daily
        } == {key: (round(revenue, 2), count) for key, (revenue, count) in expected.items()}
        assert set(demo.watermarks(demo.job(DAILY_REVENUE))) == {"orders"}

    def a_day_moves_next_runs(self, demo: Demo) -> None:
        # -- every order of a day moves to another day: the emptied day leaves the aggregation ---
        load, emptied = demo.job(ORDERS), "2024-05-04"
        moved_load = ran(demo, ORDERS, "a day moves away")
        assert moved_load.state == "SUCCEEDED", moved_load.error_message
        assert {"order_date": emptied} in moved_load.summary["partitions_removed"]
        after_move = ran(demo, DAILY_REVENUE, "after the move")
        assert after_move.state == "SUCCEEDED", after_move.error_message
        revenue = demo.daily_revenue()
        assert emptied not in {str(row["day"]) for row in revenue}
        assert demo.check_daily_revenue(revenue)

        # -- no new data: nothing read, the watermark stays, RecordsNew 0 is published -----------
        # (one alarm period after the move's run, as on a schedule: its own datapoint)
        empty = ran(demo, ORDERS, "no new data")
        assert empty.state == "SUCCEEDED", empty.error_message
        assert empty.summary["records_read"] == 0
        assert (empty.started_on - moved_load.completed_on).total_seconds() > demo.alarm_period()
        # The cursor and the file high mark stay; S3 discovery counts the run towards its next
        # full listing, so the state may gain a version without moving.
        committed = {
            state["job_run_id"]: state["watermarks"]
            for state in Watermarks(demo.outputs["watermarks_table_name"]).iter_history(load)
        }
        stayed = demo.watermarks(load)["default"]["watermarks"]
        assert stayed["cursor"] == committed[moved_load.run_id]["cursor"]
        assert (
            stayed["files"]["high_mark_ms"] == committed[moved_load.run_id]["files"]["high_mark_ms"]
        )
        assert 0.0 in datapoints(load, RECORDS_NEW)

        # -- a failing run: FAILED recorded, Glue's state change event emitted -------------------
        failed = ran(demo, ORDERS, "bad argument")
        assert failed.arguments["--primary_keys"] == BAD_ARGUMENTS["--primary_keys"]
        assert failed.state == "FAILED"
        assert (
            failed.error_message == "unknown argument --primary_keys (did you mean --primary_key?)"
        )
        assert failed.event_id
        assert get_run_record(load, failed.run_id)["JobRunState"] == "FAILED"

    def alarms(self, demo: Demo) -> None:
        # -- LocalStack's alarm evaluation: the zero-record run drives the orders' alarm to ALARM -
        names = demo.outputs["alarm_names"]
        assert demo.alarm_states[names[ORDERS]["zero_records"]] == "ALARM"
        assert demo.alarm_states[names[CUSTOMERS]["zero_records"]] == "OK"
        assert demo.alarm_states[names[CUSTOMERS_HISTORY]["zero_records"]] == "OK"
        assert demo.alarm_states[names[ENRICHED]["zero_records"]] == "OK"

    def pages(self, demo: Demo) -> None:
        # -- pages on the on-call queue, delivered by LocalStack: the alarm and the failed run ---
        load, names, pages = demo.job(ORDERS), demo.outputs["alarm_names"], demo.pages
        alarm_pages = {
            page["alarm"] for page in pages if page["kind"] == "alarm" and page["state"] == "ALARM"
        }
        assert names[ORDERS]["zero_records"] in alarm_pages
        # Besides it, only the missed-run alarms may page (evaluated when created, before any
        # run) and the watermark-stale ones: the demo's data is dated May 2024, so a time
        # cursor is years behind the clock. The count alarms (late files, null/future
        # watermarks, publish failures) stay quiet.
        missed = {
            names[key][alarm] for key in PIPELINES for alarm in ("missed_run", "watermark_stale")
        }
        # The failed run pages as a CloudWatch-alarm-shaped notification (what pagers parse).
        failed_run = f"{load}-run-failed"
        assert alarm_pages - {names[ORDERS]["zero_records"], failed_run} <= missed
        alarm = next(
            page
            for page in pages
            if page["kind"] == "alarm"
            and page["state"] == "ALARM"
            and page["alarm"] == names[ORDERS]["zero_records"]
        )
        assert alarm["job"] == load
        assert alarm["message"]["OldStateValue"] == "OK"
        assert alarm["message"]["Trigger"]["MetricName"] == RECORDS_NEW
        failed = ran(demo, ORDERS, "bad argument")
        failures = [
            page for page in pages if page["kind"] == "alarm" and page["alarm"] == failed_run
        ]
        assert [(page["job"], page["message"]["NewStateReason"]) for page in failures] == [
            (
                load,
                f"Glue job {load} run {failed.run_id} ended FAILED: "
                "unknown argument --primary_keys (did you mean --primary_key?)",
            )
        ]
        assert failures[0]["message"]["AlarmDescription"].endswith("#run-failed")
        assert not [page for page in pages if page["kind"] == "event"]

    def end(self, demo: Demo) -> None:
        summary = demo.summary()
        for text in ("full load", "incremental", "join", "no new data", "bad argument", "ALARM"):
            assert text in summary

        # -- status: one row per pipeline, read from what the runs left ---------------------------
        table = demo.status().splitlines()
        assert [line.split()[0] for line in table[1:]] == sorted(PIPELINES)
        assert "FAILED" in table[4] and "SUCCEEDED" in table[5] and "SUCCEEDED" in table[6]
        assert "SUCCEEDED" in table[2] and "SUCCEEDED" in table[3]

        # -- a second plan: the deploy changed no job definition, and the columns the runs added -
        # -- to the catalog tables stay (Terraform ignores their columns after creation) ----------
        assert not [
            change
            for change in demo.terraform_plan()
            if "aws_glue_job" in change or "aws_glue_catalog_table" in change
        ]

        # -- the README's quick start and local guide, on this same stack -------------------------
        # One demo serves both: the guide's commands run here instead of on `make up`.
        root = deploy.project_root()
        load = demo.job(ORDERS)
        env = {
            **os.environ,
            **demo.terraform_env,
            "PYTHONPATH": os.pathsep.join([str(root / "lib"), str(root)]),
        }
        outputs = run_local_guide(
            env, lambda: demo.watermarks(load)["default"]["job_run_id"], root=root
        )
        run_output = next(out for command, out in outputs.items() if " run " in command)
        assert f"of {load}: SUCCEEDED" in run_output
        shown = next(
            out for command, out in outputs.items() if "watermarks --env local show" in command
        )
        assert "default" in shown and "cursor=" in shown
        reset = next(out for command, out in outputs.items() if " reset " in command)
        assert "the next run starts from nothing" in reset


def test_the_demo_command_end_to_end(providers, tmp_path):
    printed: list[str] = []
    checks = Checks()
    assert run_demo(tmp_path / "demo", keep=True, out=printed.append, check=checks) == 0
    assert checks.seen == list(STEP_KEYS)
    text = "\n".join(printed)
    # Every step printed its header and its time; the summary, the status table, the total.
    for number in range(1, len(STEP_KEYS)):
        assert f"[{number:>2}/{len(STEP_KEYS) - 1}]" in text
    assert "page(s) received on the on-call queue" in text
    # The customers' history: the versions of a resegmented customer, and its "as of" answer.
    customer, t, segment = checks.saved["as_of"]
    before, after = "ab"[customer % 2], "ab"[(customer + 1) % 2]
    assert f"customer {customer}'s versions:" in text
    assert re.search(rf"\n\s+{before}\s+2024-05-01 07:00:00\s+2024-05-04 07:00:00\s+false\n", text)
    assert re.search(rf"\n\s+{after}\s+2024-05-04 07:00:00\s+-\s+true\n", text)
    assert (
        f"as of t = {t:%Y-%m-%d %H:%M:%S} ({AS_OF_CONDITION}): customer {customer} in segment "
        f"{segment};" in text
    )
    assert "python -m glue_incremental status --env local:" in text
    assert "demo finished in " in text and f"kept in {tmp_path / 'demo'}" in text
    assert (tmp_path / "demo" / "runs").is_dir()


def test_make_setup_again_finds_everything_present_and_installs_nothing():
    """``make setup`` on a checkout it set up (CI's, before the tests; a second run on a
    laptop): each step finds what it would install and says only that it is there."""
    (setup, *_) = readme_commands()[0].split("&&")
    assert make_targets(setup) == ["setup"], readme_commands()[0]
    # Run from `make test`, the inner make would announce its directory in its output.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["bash", "-c", setup.strip()],
        cwd=README.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    *steps, last = done.stdout.splitlines()
    assert last == "setup: done", done.stdout
    # "setup: installing ...", "extracting ...", "building ...": anything but "... ok".
    assert [step for step in steps if not re.match(r"setup: [\w -]+ ok\b", step)] == [], done.stdout
