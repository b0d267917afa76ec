"""``make demo``: the whole platform on this machine, step by step, then cleaned up.

``python -m glue_incremental demo [--keep] [--clean-only]``: start local AWS
(LocalStack, DynamoDB Local, moto for Glue), ``terraform apply`` the ``local``
environment, deploy, generate orders and a daily customer snapshot in S3, run the full
loads, land new and late data (a new column, deleted orders, customers changing segment),
run the loads again (only new files are read; the orders target shows the column and lacks
the deleted orders; the customers' history a closed version and an "as of" answer), show
the Iceberg table's snapshots and a ``watermarks rewind``, run the join and the aggregation
``daily_revenue``, a zero-record run and a failing run, read the pages.

It ends on a summary and the ``status --env local`` table. Every step uses the
library's public API; ``tests/e2e`` drives the same ``Demo`` methods one by one.
Details: ``docs/local-tools.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from glue_incremental import aws
from glue_incremental.targets.iceberg import summary as iceberg_summary

from glue_incremental_tools import deploy, runner, status
from glue_incremental_tools.localendpoint import running_local_aws

DEMO_DIR = ".demo"
ENVIRONMENT = "local"
# The pipelines of terraform/environments/local: two loads feeding a join, the customers
# again with history, an Iceberg load of the same orders, and a custom aggregation of the orders.
ORDERS, CUSTOMERS, ENRICHED = "orders", "customers", "orders_enriched"
CUSTOMERS_HISTORY = "customers_history"
ICEBERG = "orders_iceberg"
DAILY_REVENUE = "daily_revenue"
PIPELINES = (CUSTOMERS, CUSTOMERS_HISTORY, ORDERS, ENRICHED, ICEBERG, DAILY_REVENUE)
LOADS = (CUSTOMERS, CUSTOMERS_HISTORY, ORDERS, ICEBERG)
FIRST_DAY = date(2024, 5, 1)
DAYS = 3
ORDERS_PER_DAY = 20
CUSTOMER_COUNT = 8
# Customers whose segment changes in the new delivery's snapshot (day 4): customers_history
# tracks the segment, so each gets a closed version and a current one.
RESEGMENTED = (1, 2)
# The history's tracked column and the condition docs/history.md's "as of" query uses.
TRACKED = "segment"
AS_OF_CONDITION = "valid_from <= t AND (valid_to IS NULL OR t < valid_to)"
# The new delivery's orders carry a column the first ones lack; two orders of day 2 are
# deleted in the source (CDC `op` = D; environments/local: --delete_marker op=D).
NEW_COLUMN = "channel"
DELETED_ORDERS = (1, 2)
BAD_ARGUMENTS = {"--primary_keys": "order_id"}  # a typo of --primary_key
# What the runs need before they start: the jobs and their rights (the lake key first), the
# buckets, the watermarks table, the catalog. Not the rest: on LocalStack it is mostly the
# AWS provider waiting ~25 s per SQS queue and ~55 s for the scripts bucket's lifecycle
# rules to read back the same (terraform-provider-aws#27393; not settable).
RUNS_NEED = ("aws_glue_", "aws_iam_", "aws_dynamodb_", "aws_s3_bucket")
APPLIED_LATER = ("aws_s3_bucket_lifecycle_configuration",)

Log = Callable[[str], Any]


@dataclass
class RunRow:
    """One run for the summary."""

    label: str
    job: str
    run: runner.JobRun

    @property
    def read(self) -> int | None:
        return (self.run.summary or {}).get("records_read")

    @property
    def written(self) -> int | None:
        return (self.run.summary or {}).get("records_written")


@dataclass
class RunSpec:
    """One run for ``Demo.run_together``: the job's key, a label, the run's arguments."""

    key: str
    label: str
    arguments: Mapping[str, str] | None = None
    # As on a schedule: one alarm period after the orders' last run (``wait_out_alarm_period``).
    wait_out_alarm_period: bool = False
    waited: float = 0.0
    # Done first, in this job's turn: the runs of other jobs go on meanwhile.
    before: Callable[[], object] | None = None


@dataclass(frozen=True)
class IcebergTableState:
    """An Iceberg table as its current metadata file says (read with boto3, no Spark)."""

    snapshots: list[iceberg_summary.Snapshot]
    records: dict[int, int]  # snapshot id -> rows in the table at that snapshot
    current_id: int | None

    @property
    def current(self) -> iceberg_summary.Snapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == self.current_id), None)

    @property
    def rows(self) -> int:
        return self.records.get(self.current_id, 0) if self.current_id is not None else 0


@dataclass(frozen=True)
class CustomersHistory:
    """The customers_history target as the demo shows it: its version rows (by customer, then
    ``valid_from``), a customer whose segment changed, and what holds at ``as_of``."""

    versions: list[dict[str, Any]]
    customer: int | None  # the first RESEGMENTED customer with a closed version, if any
    as_of: datetime | None  # a time inside that closed version
    valid_then: list[dict[str, Any]]  # the rows AS_OF_CONDITION selects at ``as_of``

    def of(self, customer_id: int | None) -> list[dict[str, Any]]:
        return [row for row in self.versions if row["customer_id"] == customer_id]


class TerraformEndpoint(Protocol):
    """Where environments/local points its providers (``LocalAws``, or a running stack's record)."""

    def terraform_vars(self) -> list[str]: ...


@dataclass
class Demo:
    """The demo's steps, in order; each returns what it made (the e2e test asserts on it)."""

    workdir: Path
    endpoint: TerraformEndpoint
    log: Log = print
    root: Path = field(default_factory=deploy.project_root)
    outputs: dict[str, Any] = field(default_factory=dict)
    runs: list[RunRow] = field(default_factory=list)
    alarm_states: dict[str, str] = field(default_factory=dict)
    pages: list[dict[str, Any]] = field(default_factory=list)
    _apply: BackgroundApply | None = field(default=None, repr=False)

    # -- paths -----------------------------------------------------------------------------------

    @cached_property
    def release(self) -> str:
        """The release this checkout builds: the apply pins it, then ``deploy`` publishes it."""
        return deploy.release_id(self.root)

    def terraform_vars(self) -> list[str]:
        return [*self.endpoint.terraform_vars(), f"-var=release={self.release}"]

    @property
    def terraform_dir(self) -> Path:
        return self.root / "terraform" / "environments" / ENVIRONMENT

    @property
    def terraform_env(self) -> dict[str, str]:
        env = {
            "TF_DATA_DIR": str(self.workdir / "terraform" / "data"),
            "TF_IN_AUTOMATION": "1",
            # The AWS provider builds its whole schema at every start: a lazier GC, a
            # quarter faster on this machine.
            "GOGC": os.environ.get("GOGC", "400"),
        }
        # The project's CLI config (local provider mirror), unless one that exists is set.
        rc = self.root / "build" / "terraformrc"
        configured = os.environ.get("TF_CLI_CONFIG_FILE")
        if rc.is_file() and not (configured and os.path.isfile(configured)):
            env["TF_CLI_CONFIG_FILE"] = str(rc)
        return env

    @property
    def state_path(self) -> Path:
        return self.workdir / "terraform" / f"{ENVIRONMENT}.tfstate"

    @property
    def data(self) -> str:
        """The data bucket Terraform created, where the jobs' ``s3://`` paths point."""
        return f"s3://{self.outputs['data_bucket_name']}"

    @property
    def orders(self) -> str:
        return f"{self.data}/raw/orders"

    @property
    def customers(self) -> str:
        return f"{self.data}/raw/customers"

    def job(self, key: str) -> str:
        return self.outputs["job_names"][key]

    def curated(self, key: str) -> str:
        return f"{self.data}/curated/{key}/"

    @property
    def warehouse(self) -> str:
        """The Iceberg pipeline's warehouse: its Terraform target path, in the data bucket."""
        return self.outputs["pipelines"][ICEBERG]["target_path"]

    def iceberg_env(self) -> dict[str, str]:
        """What a local process needs for the Iceberg table: the jars, and the warehouse.

        Locally the table lives in a Hadoop catalog on the pipeline's ``s3://``
        warehouse (through S3A); on Glue, the job's ``--conf`` makes the same catalog
        name the Glue Data Catalog.
        """
        return {
            "GLUE_INCREMENTAL_JARS_DIR": str(self.root / "build" / "jars"),
            "GLUE_INCREMENTAL_ICEBERG_WAREHOUSE": self.warehouse,
        }

    def target(self, key: str) -> str:
        """The job's ``--target_path`` (an ``s3://`` URI in the data bucket)."""
        definition = aws.client("glue").get_job(JobName=self.job(key))["Job"]
        return definition["DefaultArguments"]["--target_path"]

    # -- steps -----------------------------------------------------------------------------------

    def terraform_apply(self, targets: Sequence[str] = ()) -> dict[str, Any]:
        """``terraform init`` + ``apply`` of environments/local (of ``targets`` only, when
        given); returns its outputs."""
        (self.workdir / "terraform").mkdir(parents=True, exist_ok=True)
        self._terraform(["init", "-input=false", f"-backend-config=path={self.state_path}"])
        started = time.monotonic()
        created = self._terraform(
            [
                "apply",
                "-input=false",
                "-auto-approve",
                *self.terraform_vars(),
                *(f"-target={address}" for address in targets),
            ],
            progress=True,
        )
        self.read_outputs()
        self.log(
            f"{created} resources in {time.monotonic() - started:.0f} s: "
            f"jobs {', '.join(self.outputs['job_names'].values())}; "
            f"bucket {self.outputs['scripts_bucket_name']}; table {self.outputs['watermarks_table_name']}"
        )
        self.log(
            f"on-call topic {self.outputs['oncall_topic_arn'].rsplit(':', 1)[-1]}, paging queue "
            f"{self.outputs['oncall_queue_url'].rsplit('/', 1)[-1]}"
        )
        return self.outputs

    def apply_planned(self) -> dict[str, Any]:
        """``terraform apply`` of the plan ``planned_changes`` saved; returns the outputs."""
        self._terraform(["apply", "-input=false", str(self._next_plan)])
        return self.read_outputs()

    @property
    def _next_plan(self) -> Path:
        return self.workdir / "terraform" / "next.tfplan"

    def start_apply(self) -> dict[str, Any]:
        """``terraform init``, ``plan``, then that plan's apply in the background; returns the
        planned outputs once what the runs need exists (``RUNS_NEED``).

        The apply goes on while the demo deploys and runs: ``finish_apply`` joins it (the
        alarms, the on-call topic and queues, the scripts bucket's lifecycle) and reads the
        applied outputs. The plan is the whole environment, as ``terraform_apply`` applies it.
        """
        (self.workdir / "terraform").mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        self._terraform(["init", "-input=false", f"-backend-config=path={self.state_path}"])
        plan = self.workdir / "terraform" / "first.tfplan"
        self._terraform(["plan", "-input=false", f"-out={plan}", *self.terraform_vars()])
        self._apply = BackgroundApply(
            [
                _terraform(),
                f"-chdir={self.terraform_dir}",
                "apply",
                "-input=false",
                "-no-color",
                str(plan),
            ],
            env={**os.environ, **self.terraform_env},
            log_path=self.workdir / "terraform" / "apply.log",
        )
        # Read while the apply starts: the plan's addresses, and its outputs known before apply.
        shown = json.loads(self._terraform_json(["show", "-json", str(plan)]))
        planned = {
            change["address"]: change["type"]
            for change in shown.get("resource_changes") or []
            if "create" in change["change"]["actions"]
        }
        needed = {
            address
            for address, kind in planned.items()
            if kind.startswith(RUNS_NEED) and not kind.startswith(APPLIED_LATER)
        }
        created = self._apply.wait_for(needed)
        self.outputs = deploy.output_values(
            {
                name: {"value": change.get("after")}
                for name, change in shown["output_changes"].items()
            }
        )
        self.log(
            f"{len(created)} of {len(planned)} resources in {time.monotonic() - started:.0f} s: "
            f"jobs {', '.join(self.outputs['job_names'].values())}; "
            f"bucket {self.outputs['scripts_bucket_name']}; table {self.outputs['watermarks_table_name']}"
        )
        self.log(
            f"the other {len(planned) - len(created)} (alarms, the on-call topic and queues, the "
            "scripts bucket's lifecycle) go on in the background: mostly the AWS provider "
            "waiting for SQS attributes and lifecycle rules to settle"
        )
        return self.outputs

    def finish_apply(self) -> dict[str, Any]:
        """Wait for ``start_apply``'s apply to end; returns the applied outputs."""
        if self._apply is None:
            return self.outputs
        created, seconds = self._apply.finish()
        self._apply = None
        self.read_outputs()
        self.log(
            f"terraform apply, begun in step 2, done: {created} resources in {seconds:.0f} s; "
            f"on-call topic {self.outputs['oncall_topic_arn'].rsplit(':', 1)[-1]}, paging queue "
            f"{self.outputs['oncall_queue_url'].rsplit('/', 1)[-1]}"
        )
        return self.outputs

    def stop_apply(self) -> None:
        """End ``start_apply``'s apply if it still runs (the demo failed before joining it)."""
        if self._apply is not None:
            self._apply.stop()
            self._apply = None

    def refresh_outputs(self) -> dict[str, Any]:
        """``terraform apply -refresh-only``: the root outputs brought up to date (a targeted
        apply leaves them as they were); returns them."""
        self._terraform(
            [
                "apply",
                "-refresh-only",
                "-input=false",
                "-auto-approve",
                *self.terraform_vars(),
            ]
        )
        return self.read_outputs()

    def read_outputs(self) -> dict[str, Any]:
        """The applied environment's Terraform outputs (kept in ``outputs``)."""
        completed = subprocess.run(
            [_terraform(), f"-chdir={self.terraform_dir}", "output", "-json", "-no-color"],
            capture_output=True,
            text=True,
            env={**os.environ, **self.terraform_env},
            check=True,
        )
        self.outputs = deploy.output_values(json.loads(completed.stdout))
        return self.outputs

    def _terraform_json(self, args: list[str]) -> str:
        return subprocess.run(
            [_terraform(), f"-chdir={self.terraform_dir}", *args, "-no-color"],
            capture_output=True,
            text=True,
            env={**os.environ, **self.terraform_env},
            check=True,
        ).stdout

    def terraform_plan(self) -> list[str]:
        """A second plan: the addresses it would change (empty: the deploy left it clean)."""
        return sorted(
            f"{address} ({'/'.join(actions)})"
            for address, (actions, _) in self.planned_changes().items()
        )

    def planned_changes(self) -> dict[str, tuple[list[str], set[str]]]:
        """What a plan would change: each address with its actions and changed attributes."""
        plan = self._next_plan
        self._terraform(["plan", "-input=false", f"-out={plan}", *self.terraform_vars()])
        shown = subprocess.run(
            [_terraform(), f"-chdir={self.terraform_dir}", "show", "-json", str(plan)],
            capture_output=True,
            text=True,
            env={**os.environ, **self.terraform_env},
            check=True,
        )
        found = {}
        for change in json.loads(shown.stdout).get("resource_changes") or []:
            actions = change["change"]["actions"]
            if actions in (["no-op"], ["read"]):
                continue
            before = change["change"].get("before") or {}
            after = change["change"].get("after") or {}
            unknown = change["change"].get("after_unknown") or {}
            changed = {
                key
                for key in set(before) | set(after)
                if before.get(key) != after.get(key) or unknown.get(key)
            }
            found[change["address"]] = (actions, changed)
        return found

    def deploy(self) -> deploy.DeployResult:
        """``python -m glue_incremental deploy --env local``, against the demo's Terraform state."""
        lines: list[str] = []
        # Bucket and jobs from the outputs read: while ``start_apply``'s apply runs, the state
        # has no outputs yet for ``terraform output`` to read.
        result = deploy.deploy(
            ENVIRONMENT,
            bucket=self.outputs["scripts_bucket_name"],
            jobs=list(self.outputs["job_names"].values()),
            root=self.root,
            log=lines.append,
        )
        assert result is not None
        for line in lines:  # the release's files, its id and the verify lines; not the JSON
            if line.startswith(("  ", "release ", "verified")):
                self.log(line.strip())
        return result

    def generate_source(self) -> dict[str, int]:
        """Days 1..3 of orders, one JSON file per day and batch; the customers per day."""
        files = rows = 0
        for offset in range(DAYS):
            day = FIRST_DAY + timedelta(days=offset)
            batch = [_order(day, number) for number in range(1, ORDERS_PER_DAY + 1)]
            rows += _write_json(f"{self.orders}/order_date={day}/part-0001.json", batch)
            files += 1
        customer_rows = self._write_customers(range(DAYS))
        self.log(
            f"{rows} orders in {files} JSON objects under {self.orders}/order_date=*/, "
            f"{customer_rows} customer rows under {self.customers}/"
        )
        return {"orders": rows, "files": files, "customers": customer_rows}

    def land_new_and_late_data(self) -> dict[str, int]:
        """A new day (day 4) whose orders carry a new column, late corrections to day 1 (same
        keys, newer ``updated_at``), and deletes of day 2 orders (``op`` = D, newer too)."""
        new_day = FIRST_DAY + timedelta(days=DAYS)
        new = [
            {**_order(new_day, number), NEW_COLUMN: ("web", "store")[number % 2]}
            for number in range(1, ORDERS_PER_DAY // 2 + 1)
        ]
        late = [_order(FIRST_DAY, number, revision=1) for number in (1, 2, 3)]
        deleted = [_deleted(number) for number in DELETED_ORDERS]
        _write_json(f"{self.orders}/order_date={new_day}/part-0001.json", new)
        _write_json(f"{self.orders}/order_date={FIRST_DAY}/part-0002-late.json", late)
        _write_json(f"{self.orders}/order_date={deleted_day()}/part-0002-deletes.json", deleted)
        self._write_customers([DAYS])
        self.log(
            f"{len(new)} new orders for {new_day} with a new column {NEW_COLUMN!r}; "
            f"{len(late)} late corrections for {FIRST_DAY} (orders already loaded, newer "
            f"updated_at); {len(deleted)} orders of {deleted_day()} deleted (op = 'D')"
        )
        return {"new": len(new), "late": len(late), "deleted": len(deleted)}

    def move_a_day_away(self) -> date:
        """Every order of the newest day moves to the day before (its ``order_date``
        corrected, a newer ``updated_at``): the orders load removes the newest day's
        partition, with no new file in it. Returns the day emptied."""
        emptied = FIRST_DAY + timedelta(days=DAYS)
        into = emptied - timedelta(days=1)
        moved = [
            {
                **_order(emptied, number),
                NEW_COLUMN: ("web", "store")[number % 2],
                "op": "U",
                "updated_at": f"{emptied + timedelta(days=1)}T10:00:00Z",
            }
            for number in range(1, ORDERS_PER_DAY // 2 + 1)
        ]
        _write_json(f"{self.orders}/order_date={into}/part-0003-moved.json", moved)
        self.log(f"the {len(moved)} orders of {emptied} moved to {into} (order_date corrected)")
        return emptied

    def recomputed_daily_revenue(self) -> dict[tuple[str, int], tuple[float, int]]:
        """Revenue and orders per (day, customer) recomputed from the whole orders target."""
        totals: dict[tuple[str, int], tuple[float, int]] = {}
        for order in published_rows(self.target(ORDERS)):
            key = (str(order["order_date"]), int(order["customer_id"]))
            revenue, count = totals.get(key, (0.0, 0))
            totals[key] = (revenue + float(order["amount"]), count + 1)
        return {key: (round(revenue, 2), count) for key, (revenue, count) in totals.items()}

    def check_daily_revenue(self, found: list[dict[str, Any]]) -> bool:
        """Log whether the aggregation equals a full recompute of the orders target."""
        seen = {
            (str(row["day"]), int(row["customer_id"])): (
                round(float(row["revenue"]), 2),
                int(row["orders"]),
            )
            for row in found
        }
        same = seen == self.recomputed_daily_revenue()
        self.log(
            f"{DAILY_REVENUE} equals a full recompute of the orders target: {'yes' if same else 'NO'}"
        )
        return same

    def show_orders_target(self) -> list[dict[str, Any]]:
        """Log the orders target after the incremental run: its columns (the new one in the
        Glue Data Catalog too), null in older rows, and the deleted orders gone."""
        target = self.target(ORDERS)
        found = sorted(published_rows(target), key=lambda row: row["order_id"])
        columns = list(dict.fromkeys(name for row in found for name in row))
        database, table = self.outputs["pipelines"][ORDERS]["table"].split(".", 1)
        described = aws.client("glue").get_table(DatabaseName=database, Name=table)["Table"]
        listed = [column["Name"] for column in described["StorageDescriptor"]["Columns"]]
        with_value = [row for row in found if row.get(NEW_COLUMN) is not None]
        present = {row["order_id"] for row in found}
        gone = [order_id for order_id in deleted_order_ids() if order_id not in present]
        self.log(f"{target}: {len(found)} rows, columns {', '.join(columns)}")
        self.log(f"catalog table {database}.{table}: columns {', '.join(listed)}")
        self.log(
            f"{NEW_COLUMN}: set in the {len(with_value)} new rows, null in the "
            f"{len(found) - len(with_value)} older ones; deleted: {', '.join(gone)} (gone)"
        )
        shown = [found[0], *[row for row in found if row["order_date"] == str(deleted_day())][:1]]
        shown += with_value[:2]
        rows = [[_cell(row.get(name)) for name in ("order_id", "op", NEW_COLUMN)] for row in shown]
        for line in _table(["ORDER_ID", "OP", NEW_COLUMN.upper()], rows):
            self.log(f"  {line}")
        return found

    def customers_history(self) -> CustomersHistory:
        """The history target read from its published files; its "as of" answer at midnight
        of the day before a resegmented customer's change, by ``valid_at``."""
        versions = sorted(
            (
                {**row, **{name: _utc(row.get(name)) for name in ("valid_from", "valid_to")}}
                for row in published_rows(self.target(CUSTOMERS_HISTORY))
            ),
            key=lambda row: (row["customer_id"], row["valid_from"]),
        )
        closed = [
            row
            for row in versions
            if row["customer_id"] in RESEGMENTED and row["valid_to"] is not None
        ]
        if not closed:
            return CustomersHistory(versions, None, None, [])
        ended = closed[0]["valid_to"]
        as_of = datetime.combine(ended.date() - timedelta(days=1), datetime.min.time(), UTC)
        valid_then = [row for row in versions if valid_at(row, as_of)]
        return CustomersHistory(versions, closed[0]["customer_id"], as_of, valid_then)

    def show_customers_history(self) -> CustomersHistory:
        """Log the history target: how many versions, one resegmented customer's versions, and
        the "as of" answer for a time between them (docs/history.md's condition)."""
        shown = self.customers_history()
        customers = {row["customer_id"] for row in shown.versions}
        self.log(
            f"{self.target(CUSTOMERS_HISTORY)}: {len(shown.versions)} versions of "
            f"{len(customers)} customers (a new version when the {TRACKED} changes)"
        )
        if shown.as_of is None:
            self.log(f"no customer of {RESEGMENTED} has a closed version")
            return shown
        self.log(f"customer {shown.customer}'s versions:")
        rows = [
            [
                str(row[TRACKED]),
                _when(row["valid_from"]),
                _when(row["valid_to"]),
                str(row["is_current"]).lower(),
            ]
            for row in shown.of(shown.customer)
        ]
        for line in _table([TRACKED.upper(), "VALID_FROM", "VALID_TO", "IS_CURRENT"], rows):
            self.log(f"  {line}")
        then = [row[TRACKED] for row in shown.valid_then if row["customer_id"] == shown.customer]
        self.log(
            f"as of t = {_when(shown.as_of)} ({AS_OF_CONDITION}): customer {shown.customer} "
            f"in {TRACKED} {', '.join(map(str, then)) or '(none)'}; "
            f"{len(shown.valid_then)} rows for {len(customers)} customers"
        )
        return shown

    def run(
        self, key: str, label: str, arguments: Mapping[str, str] | None = None
    ) -> runner.JobRun:
        """Run a deployed job through the local Glue runner."""
        return self.run_together(RunSpec(key, label, arguments))[0]

    def run_together(self, *specs: RunSpec) -> list[runner.JobRun]:
        """Run several jobs at once, as their schedules or triggers start them; the runs of
        one job follow each other in the order given. Each is logged, in that order, once
        all have ended."""
        by_job: dict[str, list[int]] = {}
        for index, spec in enumerate(specs):
            by_job.setdefault(spec.key, []).append(index)
        done: dict[int, runner.JobRun] = {}

        def one_job(indexes: list[int]) -> None:
            ran: list[runner.JobRun] = []
            for index in indexes:
                spec = specs[index]
                if spec.before is not None:
                    spec.before()
                if spec.wait_out_alarm_period:
                    spec.waited = self.wait_out_alarm_period(after=ran)
                ran.append(self._run_job(spec.key, spec.arguments))
                done[index] = ran[-1]

        with ThreadPoolExecutor(max_workers=len(by_job)) as pool:
            for future in [pool.submit(one_job, indexes) for indexes in by_job.values()]:
                future.result()
        for index, spec in enumerate(specs):
            if spec.waited:
                self.log(f"waited {spec.waited:.1f} s: one run per alarm period, as on a schedule")
            self._log_run(spec, done[index])
        return [done[index] for index in range(len(specs))]

    def _run_job(self, key: str, arguments: Mapping[str, str] | None) -> runner.JobRun:
        return runner.run_job(
            self.job(key),
            dict(arguments or {}),
            log_dir=self.workdir / "runs",
            extra_env=self.iceberg_env() if key == ICEBERG else None,
        )

    def _log_run(self, spec: RunSpec, run: runner.JobRun) -> None:
        job = self.job(spec.key)
        first_of_job = all(row.job != job for row in self.runs)
        self.runs.append(RunRow(spec.label, job, run))
        row = self.runs[-1]
        if first_of_job:
            self.log(
                f"from Glue's GetJob: {run.script_location} with --extra-py-files "
                f"{run.arguments.get('--extra-py-files')}; this run's --arguments: "
                f"{', '.join(sorted(spec.arguments or {})) or 'none (its DefaultArguments, from Terraform)'}"
            )
        counts = f": read {row.read}, wrote {row.written}" if row.read is not None else ""
        counts += runner.version_counts(run.summary or {})
        self.log(
            f"{job} ({spec.label}): {run.state} {run.run_id[:15]}... in "
            f"{run.execution_seconds:.1f} s{counts}"
        )
        if run.error_message:
            self.log(f"error: {run.error_message}")
        for warning in run.warnings:
            self.log(f"warning: {warning}")
        watermark = self.watermark(job)
        if watermark and run.succeeded:
            self.log(f"watermark {watermark}")
        if not run.succeeded and run.record_uri:
            self.log(f"recorded {run.state} in {_clip(run.record_uri, 100)}")
        self.log(f"log {self._rel(Path(run.log_path))}" if run.log_path else "")

    def iceberg_table(self) -> IcebergTableState:
        """The Iceberg pipeline's table: every snapshot with its summary, and the current one.

        The Hadoop catalog's ``version-hint.text`` names the current metadata file.
        """
        database, table = self.outputs["pipelines"][ICEBERG]["table"].split(".")
        metadata = f"{self.warehouse.rstrip('/')}/{database}/{table}/metadata"
        version = int(_read_text(f"{metadata}/version-hint.text").strip())
        current = json.loads(_read_text(f"{metadata}/v{version}.metadata.json"))
        found = current.get("snapshots") or []
        return IcebergTableState(
            snapshots=[
                iceberg_summary.Snapshot.from_summary(
                    int(s["snapshot-id"]), s.get("parent-snapshot-id"), s.get("summary") or {}
                )
                for s in found
            ],
            records={int(s["snapshot-id"]): int(s["summary"]["total-records"]) for s in found},
            current_id=current.get("current-snapshot-id"),
        )

    def show_iceberg_table(self) -> IcebergTableState:
        """Log the table's rows and snapshots (run id, watermark) as its metadata says."""
        state = self.iceberg_table()
        current = state.current
        self.log(
            f"table {self.outputs['pipelines'][ICEBERG]['table']}: {state.rows} rows at snapshot "
            f"{state.current_id} (run {_short(current.run_id if current else None)}); "
            f"{len(state.snapshots)} snapshots:"
        )
        for snapshot in state.snapshots:
            marker = "  <- current" if snapshot.snapshot_id == state.current_id else ""
            watermark = describe_state(snapshot.watermark or {})
            self.log(
                f"  {snapshot.snapshot_id}  run {_short(snapshot.run_id)}  {watermark}  "
                f"{state.records[snapshot.snapshot_id]} rows{marker}"
            )
        return state

    def daily_revenue(self) -> list[dict[str, Any]]:
        """The aggregation's published rows: ``day``, ``customer_id``, ``revenue``, ``orders``."""
        return sorted(
            published_rows(self.target(DAILY_REVENUE)),
            key=lambda row: (str(row["day"]), row["customer_id"]),
        )

    def show_daily_revenue(self, run: runner.JobRun) -> list[dict[str, Any]]:
        """Log the output's totals per day (the run's state is logged by ``run``)."""
        found = self.daily_revenue() if run.succeeded else []
        by_day: dict[str, list[dict[str, Any]]] = {}
        for row in found:
            by_day.setdefault(str(row["day"]), []).append(row)
        self.log(f"{self.target(DAILY_REVENUE)}: {len(found)} rows (one per customer and day)")
        table = [
            [
                day,
                str(len(rows)),
                str(sum(int(row["orders"]) for row in rows)),
                f"{sum(float(row['revenue']) for row in rows):.2f}",
            ]
            for day, rows in sorted(by_day.items())
        ]
        for line in _table(["DAY", "CUSTOMERS", "ORDERS", "REVENUE"], table):
            self.log(f"  {line}")
        return found

    def rewind(self, key: str, run: runner.JobRun) -> str:
        """``python -m glue_incremental watermarks rewind <job> <run> --why demo``, as a command."""
        command = [
            sys.executable,
            "-m",
            "glue_incremental",
            "watermarks",
            "rewind",
            self.job(key),
            run.run_id,
            "--why",
            "demo",
            "--table",
            self.outputs["watermarks_table_name"],
        ]
        self.log(f"$ python {' '.join(command[1:6])} {_short(run.run_id)} --why demo")
        path = os.pathsep.join(
            [str(self.root / "lib"), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, **self.iceberg_env(), "PYTHONPATH": path},
            check=False,
        )
        if completed.returncode != 0:
            raise deploy.DeployError(
                f"watermarks rewind failed: {completed.stderr.strip().splitlines()[-1:]}"
            )
        for line in completed.stdout.splitlines():
            self.log(_clip(line))
        return completed.stdout

    def alarm_period(self) -> int:
        """The period of the orders' zero-record alarm (seconds)."""
        name = self.outputs["alarm_names"][ORDERS]["zero_records"]
        alarm = aws.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"][0]
        return int(alarm["Period"])

    def wait_out_alarm_period(self, after: Iterable[runner.JobRun] = ()) -> float:
        """Sleep until one alarm period has passed since the orders' last run ended (of
        ``runs`` and ``after``, runs not logged yet).

        Then the next run's datapoint falls in a period of its own, as with a real
        schedule (one run per period): CloudWatch takes the period's Maximum, and
        an earlier non-empty run in the same period would hide the zero.
        """
        load = self.job(ORDERS)
        ended = [row.run for row in self.runs] + list(after)
        last = max((run for run in ended if run.job_name == load), key=lambda run: run.completed_on)
        remaining = (
            self.alarm_period() + 1 - (datetime.now(UTC) - last.completed_on).total_seconds()
        )
        if remaining > 0:
            time.sleep(remaining)
        return max(remaining, 0.0)

    def evaluate_alarms(self, timeout: float | None = None) -> dict[str, str]:
        """Wait for LocalStack's own evaluation to put the orders' zero-record alarm in ALARM.

        LocalStack evaluates each metric alarm every ``Period x EvaluationPeriods``
        seconds from its creation, over the last few periods, and runs its actions
        (SNS) on a state change. Nothing here sets a state.
        """
        names = sorted(
            name for per_job in self.outputs["alarm_names"].values() for name in per_job.values()
        )
        zero = self.outputs["alarm_names"][ORDERS]["zero_records"]
        period = self.alarm_period()
        deadline = time.monotonic() + (timeout if timeout is not None else 3 * period + 30)
        cloudwatch = aws.client("cloudwatch")
        started = time.monotonic()
        while True:
            described = cloudwatch.describe_alarms(AlarmNames=names)["MetricAlarms"]
            self.alarm_states = {alarm["AlarmName"]: alarm["StateValue"] for alarm in described}
            if self.alarm_states.get(zero) == "ALARM" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.log(
            f"LocalStack evaluates every alarm each period ({period} s here); "
            f"waited {time.monotonic() - started:.1f} s"
        )
        for alarm in sorted(described, key=lambda alarm: alarm["AlarmName"]):
            reason = f": {alarm['StateReason']}" if alarm["StateValue"] != "OK" else ""
            self.log(f"{alarm['AlarmName']}: {alarm['StateValue']}{reason}")
        return self.alarm_states

    def read_pages(self, expected: int = 1, wait_seconds: float = 20.0) -> list[dict[str, Any]]:
        """Drain the on-call queue (what the pager would have received).

        Waits until ``expected`` ALARM or failed-run pages arrived (OK pages, sent
        when an alarm resolves, are kept but not counted).
        """
        sqs = aws.client("sqs")
        url = self.outputs["oncall_queue_url"]
        deadline = time.monotonic() + wait_seconds
        while True:
            messages = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1
            ).get("Messages", [])
            for message in messages:
                self.pages.append(_page(message["Body"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            paging = [page for page in self.pages if page.get("state") != "OK"]
            if (not messages and len(paging) >= expected) or time.monotonic() > deadline:
                break
        for page in self.pages:
            self.log(f"page: {page['summary']}")
        return self.pages

    def status(self) -> str:
        """``status --env local``: one row per pipeline (runs, rows, watermarks, alarms)."""
        return status.render_table(status.environment_status(ENVIRONMENT, outputs=self.outputs))

    # -- reading state ---------------------------------------------------------------------------

    def watermarks(self, job: str) -> dict[str, Mapping[str, Any]]:
        """The job's committed state per slot (``Watermarks.get_watermark``)."""
        from glue_incremental.watermarks import Watermarks

        store = Watermarks(self.outputs["watermarks_table_name"])
        states = {slot: store.get_watermark(job, slot) for slot in sorted(store.slots(job))}
        return {slot: state for slot, state in states.items() if state}

    def watermark(self, job: str) -> str:
        """One line: version and the cursor / file high mark of every slot."""
        parts = []
        for slot, state in self.watermarks(job).items():
            text = f"v{state['version']} {describe_state(state['watermarks'])}"
            parts.append(text if slot == "default" else f"{slot}: {text}")
        return "; ".join(parts)

    def summary(self) -> str:
        """The final table: runs, rows, watermarks, alarm states, pages."""
        lines = []
        runs = [
            [
                row.label,
                row.job,
                row.run.run_id[:15] + "...",
                row.run.state,
                _cell(row.read),
                _cell(row.written),
                f"{row.run.execution_seconds:.1f}s",
            ]
            for row in self.runs
        ]
        lines += _table(["RUN", "JOB", "RUN ID", "STATE", "READ", "WRITTEN", "TIME"], runs)
        lines.append("")
        jobs = [self.job(key) for key in PIPELINES]
        lines += _table(
            ["JOB", "WATERMARK"], [[job, self.watermark(job) or "(none)"] for job in jobs]
        )
        lines.append("")
        lines += _table(
            ["ALARM", "STATE"], [[name, state] for name, state in sorted(self.alarm_states.items())]
        )
        lines.append("")
        lines += _table(
            ["PAGE", "MESSAGE"], [[page["kind"], _clip(page["summary"])] for page in self.pages]
        )
        lines.append(f"{len(self.pages)} page(s) received on the on-call queue")
        return "\n".join(lines)

    # -- internals -------------------------------------------------------------------------------

    def _terraform(self, args: list[str], *, progress: bool = False) -> int:
        command = [_terraform(), f"-chdir={self.terraform_dir}", *args, "-no-color"]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **self.terraform_env},
        )
        output: list[str] = []
        created = 0
        started = last = time.monotonic()
        assert process.stdout is not None
        log_path = self.workdir / "terraform" / f"{args[0]}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = log_path.open("w")
        for line in process.stdout:
            output.append(line)
            log_file.write(f"{time.monotonic() - started:7.1f} {line}")
            if "Creation complete" in line:
                created += 1
                if progress and time.monotonic() - last > 10:
                    last = time.monotonic()
                    self.log(f"... {created} created ({last - started:.0f} s)")
        log_file.close()
        if process.wait() != 0:
            tail = "".join(output[-30:])
            raise deploy.DeployError(f"terraform {args[0]} failed:\n{tail}")
        return created

    def _write_customers(self, offsets: Any) -> int:
        rows = 0
        for offset in offsets:
            day = FIRST_DAY + timedelta(days=offset)
            batch = [_customer(number, day) for number in range(1, CUSTOMER_COUNT + 1)]
            rows += _write_json(f"{self.customers}/order_date={day}/part-0001.json", batch)
        return rows

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


# -- data ----------------------------------------------------------------------------------------


def _order(day: date, number: int, revision: int = 0) -> dict[str, Any]:
    return {
        "order_id": f"{day:%Y%m%d}-{number:03d}",
        "customer_id": (number % CUSTOMER_COUNT) + 1,
        "amount": round(10.5 + number * 3.25 + revision * 100, 2),
        "status": "corrected" if revision else "placed",
        "op": "U" if revision else "I",  # the source's CDC operation; D deletes
        "updated_at": f"{day}T{8 + number % 10:02d}:{(number * 7) % 60:02d}:00Z"
        if not revision
        else f"{day + timedelta(days=DAYS)}T09:00:00Z",
    }


def deleted_day() -> date:
    """The day whose orders ``DELETED_ORDERS`` are deleted by the new delivery."""
    return FIRST_DAY + timedelta(days=1)


def deleted_order_ids() -> list[str]:
    return [_order(deleted_day(), number)["order_id"] for number in DELETED_ORDERS]


def _deleted(number: int) -> dict[str, Any]:
    """A delete of an order of ``deleted_day``, newer than it, below the new day's last order."""
    updated = f"{FIRST_DAY + timedelta(days=DAYS)}T10:00:00Z"
    return {**_order(deleted_day(), number), "op": "D", "updated_at": updated}


def _customer(number: int, day: date) -> dict[str, Any]:
    """One customer in the snapshot of ``day`` (its ``order_date`` comes from the object's path);
    from the new delivery's day on, the ``RESEGMENTED`` customers are in the other segment."""
    moved = number in RESEGMENTED and day >= FIRST_DAY + timedelta(days=DAYS)
    return {
        "customer_id": number,
        "customer_name": f"customer-{number}",
        TRACKED: "ab"[(number + moved) % 2],
        "updated_at": f"{day}T07:00:00Z",
    }


def published_rows(uri: str) -> list[dict[str, Any]]:
    """Every row of the published Parquet objects under an ``s3://`` target, with the
    ``<column>=<value>`` directories of its key as columns (read with boto3 and pyarrow)."""
    import io

    import pyarrow.parquet as pq

    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    s3 = aws.client("s3")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    found = []
    for page in pages:
        for item in page.get("Contents", []):
            parts = item["Key"][len(prefix) :].lstrip("/").split("/")
            # Staged and superseded files live under `_`/`.` folders: not published.
            if not item["Key"].endswith(".parquet") or any(p.startswith(("_", ".")) for p in parts):
                continue
            body = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            columns = dict(part.split("=", 1) for part in parts[:-1] if "=" in part)
            table = pq.read_table(io.BytesIO(body), partitioning=None)
            found += [{**columns, **row} for row in table.to_pylist()]
    return found


def _read_text(uri: str) -> str:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return aws.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read().decode()


def _write_json(uri: str, rows: list[dict[str, Any]]) -> int:
    """One JSON-lines object (an S3 PUT is atomic: a reader never sees half of it)."""
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    body = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    aws.client("s3").put_object(Bucket=bucket, Key=key, Body=body.encode())
    return len(rows)


# -- pages and alarms -----------------------------------------------------------------------------


def _page(body: str) -> dict[str, Any]:
    """A message from the on-call queue: a CloudWatch alarm notification or a failed-run event."""
    try:
        message = json.loads(body)
    except ValueError:
        message = body
    if isinstance(message, dict) and "Type" in message and "Message" in message:  # not raw delivery
        return _page(message["Message"])
    if isinstance(message, dict) and "AlarmName" in message:
        return {
            "kind": "alarm",
            "alarm": message["AlarmName"],
            "state": message.get("NewStateValue"),
            "job": next(
                (
                    d.get("value")
                    for d in message.get("Trigger", {}).get("Dimensions", [])
                    if d.get("name") == "JobName"
                ),
                None,
            ),
            "summary": f"{message.get('NewStateValue')}: {message['AlarmName']} ({message.get('NewStateReason', '')})",
            "message": message,
        }
    text = message if isinstance(message, str) else json.dumps(message)
    return {"kind": "event", "summary": text, "message": text}


# -- formatting ----------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        rows = [["(none)"] + [""] * (len(headers) - 1)]
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    out = []
    for index, line in enumerate([headers, *rows]):
        out.append(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
            ).rstrip()
        )
        if index == 0:
            out.append("  ".join("-" * width for width in widths))
    return out


def _clip(text: str, width: int = 130) -> str:
    text = re.sub(r"\b(jr_[0-9a-f]{12})[0-9a-f]{20,}\b", r"\1...", text)
    return text if len(text) <= width else text[: width - 3] + "..."


def _short(run_id: str | None) -> str:
    return "?" if not run_id else run_id if len(run_id) <= 18 else run_id[:15] + "..."


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _utc(value: Any) -> Any:
    """A timestamp read back from Parquet, as an aware UTC datetime (None stays None)."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC) if isinstance(value, datetime) else value


def _when(value: datetime | None) -> str:
    return "-" if value is None else f"{value:%Y-%m-%d %H:%M:%S}"


def valid_at(version: Mapping[str, Any], t: datetime) -> bool:
    """``AS_OF_CONDITION``, docs/history.md's "as of" condition, on one version row."""
    return version["valid_from"] <= t and (version["valid_to"] is None or t < version["valid_to"])


def describe_state(values: Mapping[str, Any]) -> str:
    """The parts of a load's or a join side's state a person reads: cursor, files, upstream."""
    parts = []
    if values.get("cursor") is not None:
        parts.append(f"cursor={values['cursor']}")
    high_mark = (values.get("files") or {}).get("high_mark_ms")
    if high_mark:
        parts.append(f"files to {datetime.fromtimestamp(high_mark / 1000, UTC):%H:%M:%S}Z")
    upstream = values.get("upstream")
    if isinstance(upstream, Mapping) and upstream.get("job"):
        version = upstream.get("version")
        parts.append(
            f"upstream {upstream['job']}" + (f" v{version}" if version is not None else "")
        )
    pending = values.get("pending_partitions") or []
    if pending:
        parts.append(f"{len(pending)} partitions pending")
    return ", ".join(parts) or "(empty)"


class BackgroundApply:
    """A ``terraform apply`` in the background: its output to ``log_path``, timed; which
    resources it created so far."""

    def __init__(self, command: list[str], *, env: Mapping[str, str], log_path: Path) -> None:
        self.started = self.ended = time.monotonic()
        self.created: set[str] = set()
        self.tail: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(env)
        )
        self.reader = threading.Thread(target=self._read, args=(log_path,), daemon=True)
        self.reader.start()

    def _read(self, log_path: Path) -> None:
        assert self.process.stdout is not None
        with log_path.open("w") as log_file:
            for line in self.process.stdout:
                log_file.write(f"{time.monotonic() - self.started:7.1f} {line}")
                self.tail = [*self.tail[-29:], line]
                if ": Creation complete" in line:
                    with self.changed:
                        self.created.add(line.split(": Creation complete", 1)[0].strip())
                        self.changed.notify_all()
        self.process.wait()
        with self.changed:
            self.ended = time.monotonic()
            self.changed.notify_all()

    def wait_for(self, addresses: set[str]) -> set[str]:
        """Block until every one of ``addresses`` is created; returns what is created by then."""
        with self.changed:
            while not addresses <= self.created:
                if self.process.poll() is not None and not self.reader.is_alive():
                    self._check()
                    break
                self.changed.wait(1.0)
            return set(self.created)

    def finish(self) -> tuple[int, float]:
        """Wait for the apply to end: (resources created, seconds since its start)."""
        self.reader.join()
        self._check()
        return len(self.created), self.ended - self.started

    def _check(self) -> None:
        if self.process.wait() != 0:
            raise deploy.DeployError(f"terraform apply failed:\n{''.join(self.tail)}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.reader.join(timeout=30)


def _terraform() -> str:
    found = shutil.which("terraform")
    if not found:
        raise deploy.DeployError(
            f"terraform is not on PATH: install Terraform >= 1.10 ({deploy.TERRAFORM_INSTALL}); "
            "`make setup` checks for it"
        )
    return found


# -- the command ---------------------------------------------------------------------------------


class Steps:
    """Numbered, timed step headers; ``check(key)`` runs after each step (the e2e test's
    assertions, on the running stack)."""

    def __init__(self, total: int, out: Log, check: Callable[[str], object] | None = None) -> None:
        self.total, self.out, self.number, self.check = total, out, 0, check

    @contextmanager
    def step(self, title: str, key: str = "") -> Iterator[None]:
        self.number += 1
        self.out(f"\n[{self.number:>2}/{self.total}] {title}")
        started = time.monotonic()
        yield
        self.out(f"        ({time.monotonic() - started:.1f} s)")
        if self.check is not None and key:
            self.check(key)

    def detail(self, text: str) -> None:
        for line in str(text).splitlines() or [""]:
            if line:
                self.out(f"        {line}")


# The steps ``check`` is called after (``run_demo``), in order; "end": after the status table.
STEP_KEYS = (
    "local aws",
    "apply",
    "deploy",
    "source",
    "full loads",
    "new data",
    "incremental",
    "rewind, join, aggregation",
    "a day moves, next runs",
    "alarms",
    "pages",
    "end",
)


def run_demo(
    workdir: Path,
    *,
    keep: bool = False,
    out: Log = print,
    check: Callable[[str, Demo], object] | None = None,
) -> int:
    """The demo: every step, the summary, then everything removed (unless ``keep``).

    ``check(key, demo)`` runs after each step (``STEP_KEYS``) while local AWS runs.
    """
    started = time.monotonic()
    clean(workdir, out=lambda _: None)
    workdir.mkdir(parents=True)
    demo: Demo | None = None

    def checked(key: str) -> None:
        if check is not None and demo is not None:
            check(key, demo)

    steps = Steps(len(STEP_KEYS) - 1, out, checked)
    out(f"glue-incremental demo: the platform on this machine (work dir {workdir})")
    try:
        with ExitStack() as stack:
            with steps.step("Start local AWS: LocalStack, DynamoDB Local, moto for Glue"):
                endpoint = stack.enter_context(running_local_aws())
                steps.detail(
                    f"LocalStack at {endpoint.localstack_url} "
                    f"({endpoint.startup_seconds['localstack']:.1f} s): S3, SQS, SNS, CloudWatch, "
                    "EventBridge, IAM, STS, Logs, Secrets Manager, KMS"
                )
                steps.detail(
                    f"DynamoDB Local at {endpoint.dynamodb_url} "
                    f"({endpoint.startup_seconds['dynamodb-local']:.1f} s)"
                )
                steps.detail(f"moto's server at {endpoint.glue_url}, for the Glue API only")
            demo = Demo(workdir, endpoint, log=steps.detail)
            stack.callback(demo.stop_apply)  # before local AWS stops
            checked("local aws")
            _chain(demo, steps)
            out("\n" + "=" * 100)
            out(demo.summary())
            out("=" * 100)
            out(f"\npython -m glue_incremental status --env {ENVIRONMENT}:")
            out(demo.status())
            checked("end")
    finally:
        if not keep:
            clean(workdir, out=lambda _: None)
    where = f"kept in {workdir}" if keep else f"{workdir} removed (--keep keeps data, logs, state)"
    out(f"\ndemo finished in {time.monotonic() - started:.0f} s; {where}")
    return 0


def _chain(demo: Demo, steps: Steps) -> None:
    with steps.step(
        f"terraform apply terraform/environments/{ENVIRONMENT} (state in "
        f"{demo._rel(demo.state_path)}): what the runs need first, the rest in the background",
        "apply",
    ):
        demo.start_apply()
    with steps.step(
        f"Deploy scripts and library: python -m glue_incremental deploy --env {ENVIRONMENT}",
        "deploy",
    ):
        demo.deploy()
    with steps.step("Generate the source: JSON objects partitioned by order_date", "source"):
        demo.generate_source()
    orders, customers, enriched = (demo.job(key) for key in (ORDERS, CUSTOMERS, ENRICHED))
    iceberg_job, daily = demo.job(ICEBERG), demo.job(DAILY_REVENUE)
    history = demo.job(CUSTOMERS_HISTORY)
    with steps.step(
        f"Run {customers}, {history} (with history), {orders} and {iceberg_job} (Iceberg) "
        "through the local Glue runner, at once as their schedules would: full loads",
        "full loads",
    ):
        full = demo.run_together(*(RunSpec(key, "full load") for key in LOADS))[-1]
    with steps.step(
        "Land new and late data: a new column, late corrections, deleted orders", "new data"
    ):
        demo.land_new_and_late_data()
    with steps.step(
        f"Run the four loads at once: incremental (only the new files); the {ORDERS} target "
        f"and the customers' history afterwards",
        "incremental",
    ):
        demo.run_together(*(RunSpec(key, "incremental") for key in LOADS))
        # Joined here, long done: the steps after page, and the runs before sent no page.
        demo.finish_apply()
        demo.show_orders_target()
        demo.show_customers_history()
    with steps.step(
        f"{iceberg_job}: one snapshot per run; rewind it to the full load, then run it again, "
        f"while {enriched} (incremental join of orders with customers) and {daily} (a custom "
        f"script aggregating what {orders} committed, per day), which {orders}' success starts, run",
        "rewind, join, aggregation",
    ):

        def rewind() -> None:
            demo.show_iceberg_table()
            demo.rewind(ICEBERG, full)
            demo.show_iceberg_table()

        # The rewind (its rollback starts Spark) touches only the Iceberg table: the join and
        # the aggregation need not wait for it. Only it logs until the runs end.
        *_, aggregated = demo.run_together(
            RunSpec(ICEBERG, "rerun after rewind", before=rewind),
            RunSpec(ENRICHED, "join"),
            RunSpec(DAILY_REVENUE, "aggregation"),
        )
        demo.show_iceberg_table()
        demo.show_daily_revenue(aggregated)
    with steps.step(
        f"Every order of one day moves to another day: run {orders}, then {daily} (the emptied "
        f"day is recomputed from what the load committed) while {orders} runs on: with no new "
        f"data, then with a bad argument {json.dumps(BAD_ARGUMENTS)}",
        "a day moves, next runs",
    ):
        demo.move_a_day_away()
        demo.run(ORDERS, "a day moves away")
        moved, *_ = demo.run_together(
            RunSpec(DAILY_REVENUE, "after the move"),
            RunSpec(ORDERS, "no new data", wait_out_alarm_period=True),
            RunSpec(ORDERS, "bad argument", BAD_ARGUMENTS),
        )
        steps.detail(
            "the runner emitted Glue's 'Glue Job State Change' event (state FAILED) to EventBridge"
        )
        demo.check_daily_revenue(demo.show_daily_revenue(moved))
    with steps.step("LocalStack evaluates the alarms", "alarms"):
        demo.evaluate_alarms()
    with steps.step(
        "Pages on the on-call topic (read from the SQS queue subscribed to it)", "pages"
    ):
        demo.read_pages(expected=2)


def clean(workdir: Path, *, out: Log = print) -> None:
    """Remove the demo's directory (local AWS itself stops with the demo, state and all)."""
    if not workdir.exists():
        out(f"nothing to clean: {workdir} does not exist")
        return
    shutil.rmtree(workdir)
    out(f"removed {workdir}")


def register(subparsers: Any) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="the whole platform on this machine, step by step (make demo)",
        description=__doc__.split("\n\n")[0].replace("``", "") if __doc__ else None,
    )
    parser.add_argument(
        "--keep", action="store_true", help=f"keep {DEMO_DIR}/ (data, logs, state) afterwards"
    )
    parser.add_argument(
        "--clean-only",
        action="store_true",
        help=f"only remove what a demo left behind ({DEMO_DIR}/)",
    )
    parser.add_argument(
        "--workdir", default=None, help=f"work directory (default: <repo>/{DEMO_DIR})"
    )
    parser.set_defaults(handler=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from glue_incremental_tools.errors import CommandError

    workdir = Path(args.workdir) if args.workdir else deploy.project_root() / DEMO_DIR
    try:
        if args.clean_only:
            clean(workdir)
            return 0
        return run_demo(workdir, keep=args.keep)
    except (deploy.DeployError, runner.RunnerError, subprocess.CalledProcessError) as error:
        raise CommandError(str(error)) from None
