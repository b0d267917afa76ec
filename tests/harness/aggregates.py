"""The aggregation script's test world: ``orders`` as JSON lines in ``day=<d>/`` files,
runs of the real ``glue_scripts/aggregate_daily_revenue.py`` (in process or as a
subprocess), and the plain-Python daily revenue every output is compared with."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from glue_incremental.run.context import hooks

from tests.harness.targets import partition_values_as_strings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "glue_scripts" / "aggregate_daily_revenue.py"
OUT_COLUMNS = ["day", "customer_id", "revenue", "orders"]
_files = itertools.count()


def documented_script(page: Path = ROOT / "docs" / "custom-jobs.md") -> str:
    """The ``python`` block between ``<!-- custom-job-example:begin`` and ``:end -->``."""
    section = page.read_text().split("<!-- custom-job-example:begin -->", 1)[1]
    section = section.split("<!-- custom-job-example:end -->", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def script_module() -> Any:
    """The script itself, imported from its file (``glue_scripts`` is no package)."""
    spec = importlib.util.spec_from_file_location("aggregate_daily_revenue", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class World:
    """``orders`` and the output under ``tmp``; files land with chosen ages, in
    ``<day_column>=<d>/`` folders."""

    def __init__(self, tmp: Path, job: str = "daily_revenue", day_column: str = "day") -> None:
        self.tmp, self.job, self.day_column = tmp, job, day_column
        self.orders, self.target = tmp / "orders", tmp / "daily"
        self.main = script_module().main

    def land(self, day: str, rows: Iterable[tuple[int, int]], age: float = 60.0) -> Path:
        """A file of ``(customer_id, amount)`` rows in ``day``, modified ``age`` seconds ago
        (a greater age than files landed before it: a late file)."""
        directory = self.orders / f"{self.day_column}={day}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{next(_files):06d}.json"
        self.rewrite(path, rows, age)
        return path

    def rewrite(self, path: Path, rows: Iterable[tuple[int, int]], age: float = 30.0) -> None:
        """An update: the file's rows replaced (a new modification time)."""
        lines = [json.dumps({"customer_id": c, "amount": a}) + "\n" for c, a in rows]
        path.write_text("".join(lines))
        mtime = time.time() - age
        os.utime(path, (mtime, mtime))

    def argv(self, run_id: str, *extra: str) -> list[str]:
        return [
            str(SCRIPT),
            *("--JOB_NAME", self.job, "--JOB_RUN_ID", run_id),
            *("--orders_path", self.orders.as_uri(), "--orders_format", "json"),
            *("--target_path", self.target.as_uri()),
            *extra,
        ]

    def run(self, spark: Any, run_id: str, *extra: str, hook: Any = None) -> dict[str, Any]:
        """One in-process run of the script; returns its summary."""
        with hooks.installed(hook) if hook else contextlib.nullcontext():
            return dict(self.main(self.argv(run_id, *extra), spark=spark))

    def expected(self) -> list[tuple]:
        """Daily revenue over every order file there is, in plain Python."""
        totals: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
        for path in sorted(self.orders.rglob("*.json")):
            day = path.parent.name.removeprefix(f"{self.day_column}=")
            for line in path.read_text().splitlines():
                row = json.loads(line)
                total = totals[(day, row["customer_id"])]
                total[0] += row["amount"]
                total[1] += 1
        return sorted((day, c, s, n) for (day, c), (s, n) in totals.items())

    def output(self, spark: Any, columns: Iterable[str] = OUT_COLUMNS) -> list[tuple]:
        """The output as published (partition values as strings); [] before any."""
        published = [
            p
            for p in self.target.rglob("*.parquet")
            if not {"_staging", "_delivery"} & set(p.parts)
        ]
        if not published:
            return []
        with partition_values_as_strings(spark):
            rows = spark.read.parquet(self.target.as_uri()).select(*columns).collect()
        return sorted(tuple(row) for row in rows)
