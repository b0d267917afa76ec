"""A chain in the test world: the orders load (JSON files -> Parquet ``orders`` by ``day``)
upstream of the daily revenue aggregation (``glue_scripts/aggregate_daily_revenue.py``
with ``--upstream_job``), run on the real clock (the downstream compares file times with
the upstream's ``published_at_ms``), and the pure-Python daily revenue of whatever the
load's target holds now, read with pyarrow."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from glue_incremental.load.job import LoadConfig
from glue_incremental.run.context import hooks

from tests.harness import reference
from tests.harness.aggregates import OUT_COLUMNS, SCRIPT, script_module
from tests.harness.loads import run_load_at, write_json_file

LOAD_JOB = "orders_load"
AGGREGATE_JOB = "daily_revenue"
ORDER_COLUMNS = ["id", "day", "updated", "customer_id", "amount"]
_names = itertools.count()


def order(key: int, day: str, updated: int, customer: int, amount: int, op: str = "U") -> dict:
    return {
        "id": key,
        "day": day,
        "updated": updated,
        "customer_id": customer,
        "amount": amount,
        "op": op,
    }


class Chain:
    """The load and the aggregation over ``tmp``; ``load_runs`` holds each load's run id."""

    def __init__(
        self,
        spark: Any,
        tmp: Path,
        store: Any,
        names: tuple[str, str] = (LOAD_JOB, AGGREGATE_JOB),
        **load_options: Any,
    ) -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.load_job, self.aggregate_job = names
        self.committed_loads: list[str] = []
        self.source, self.orders, self.daily = tmp / "source", tmp / "orders", tmp / "daily"
        self.config = LoadConfig(
            source=self.source.as_uri(),
            source_format="json",
            watermark_column="updated",
            primary_key=("id",),
            partition_by=("day",),
            target_path=self.orders.as_uri(),
            **load_options,
        )
        self.load_runs: list[str] = []
        self.aggregate_runs = 0
        self.main = script_module().main

    def land(self, *rows: dict) -> None:
        """One source file, modified just now (before the next load starts)."""
        write_json_file(self.source, rows, mtime=time.time() - 0.5, name=f"f{next(_names)}.json")

    def load(self, hook: Any = None) -> dict[str, Any]:
        run_id = f"up_{len(self.load_runs) + 1}"
        self.load_runs.append(run_id)
        summary = run_load_at(
            self.spark,
            self.config,
            job_name=self.load_job,
            run_id=run_id,
            clock=time.time,  # type: ignore[arg-type]
            store=self.store,
            hook=hook,
        )
        if summary["committed"]:
            self.committed_loads.append(run_id)
        return summary

    def aggregate(self, hook: Any = None) -> dict[str, Any]:
        self.aggregate_runs += 1
        argv = [
            str(SCRIPT),
            *("--JOB_NAME", self.aggregate_job, "--JOB_RUN_ID", f"agg_{self.aggregate_runs}"),
            *("--orders_path", self.orders.as_uri(), "--orders_format", "parquet"),
            *("--target_path", self.daily.as_uri(), "--upstream_job", self.load_job),
        ]
        with hooks.installed(hook) if hook else contextlib.nullcontext():
            return dict(self.main(argv, spark=self.spark))

    def expected(self) -> list[tuple]:
        """Daily revenue of the load's target as it is now, in plain Python (pyarrow read)."""
        totals: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
        for row in reference.visible_rows(self.orders, ["day", "customer_id", "amount"]):
            total = totals[(row["day"], row["customer_id"])]
            total[0] += row["amount"]
            total[1] += 1
        return sorted((day, c, s, n) for (day, c), (s, n) in totals.items())

    def output(self) -> list[tuple]:
        """The aggregation's output as published (pyarrow read)."""
        return reference.as_tuples(reference.visible_rows(self.daily, OUT_COLUMNS), OUT_COLUMNS)
