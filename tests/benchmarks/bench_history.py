"""11. History (SCD type 2): one increment into a history target, against a latest-version
target and against rebuilding the whole history.

A customers dimension of ``history_keys`` keys, partitioned by ``cohort`` (the key's signup
cohort, ``history_cohort_keys`` keys each; a key never moves): a first delivery of every key,
then ``history_deliveries - 1`` deliveries each updating ``history_updated_fraction`` of
the keys drawn over every cohort, each update a new ``value`` (a new version). Both
targets are built from those deliveries by the load job (untimed). Then one new delivery
updates every key of the newest cohort (the same 10,000 keys at every full-scale size: a
day's changes do not grow with the dimension), and three timed runs take it:

- ``history``: the load job with ``--history scd2``, default settings (first);
- ``latest``: the same job without ``--history`` on the latest-version target, same
  increment (target: history <= 1.5x latest);
- ``rebuild``: the hand-written alternative, plain Spark: every delivery read, one window
  per key (``lead`` of the watermark) and the whole history written over a fresh directory
  (target: the history run >= 10x faster at the largest size).

Check: the history target equals the rebuild (``exceptAll`` both ways, every column).
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

from glue_incremental.load.job import main as load_main

from tests.benchmarks.common import Context, Timer, measured, ratio, run_figures
from tests.harness.loads import job_argv

SCHEMA_DDL = "id BIGINT, cohort INT, updated BIGINT, value STRING"
COLUMNS = ("id", "cohort", "updated", "value", "valid_from", "valid_to", "is_current")
SEED = 43


class Deliveries:
    """JSON-lines delivery files of customers under ``root``, each stamped at its time."""

    def __init__(self, root: Path, keys: int, cohort_keys: int, rows_per_file: int) -> None:
        self.root, self.keys, self.cohort_keys = root, keys, cohort_keys
        self.rows_per_file = rows_per_file
        self.count = self.rows = self.bytes = 0
        root.mkdir(parents=True, exist_ok=True)

    def cohort(self, key: int) -> int:
        return (key - 1) // self.cohort_keys

    def cohort_members(self, cohort: int) -> list[int]:
        """The keys of ``cohort`` (keys run from 1 to ``keys``)."""
        first = cohort * self.cohort_keys + 1
        return list(range(first, min(first + self.cohort_keys, self.keys + 1)))

    def deliver(self, keys: list[int], mtime: float) -> None:
        """One delivery: a version of each of ``keys`` at the delivery's watermark."""
        self.count += 1
        number, updated = self.count, self.count * 1_000
        for start in range(0, len(keys), self.rows_per_file):
            chunk = keys[start : start + self.rows_per_file]
            text = "".join(
                json.dumps(
                    {
                        "id": key,
                        "cohort": self.cohort(key),
                        "updated": updated,
                        "value": f"v{key}.{number}",
                    }
                )
                + "\n"
                for key in chunk
            )
            path = self.root / f"delivery-{number:04d}-{start // self.rows_per_file:05d}.json"
            path.write_text(text)
            os.utime(path, (mtime, mtime))
            self.rows += len(chunk)
            self.bytes += len(text)


HISTORY = ("--history", "scd2")


def load_args(ctx: Context, job: str, source: Path, target: Path, *extra: str) -> list[str]:
    """The load job's arguments for ``source`` into ``target``: default settings, plus
    ``extra`` (``HISTORY`` for the history run)."""
    return job_argv(
        "incremental_load.py",
        *extra,
        JOB_NAME=job,
        source=source.as_uri(),
        source_format="json",
        source_schema=SCHEMA_DDL,
        watermark_column="updated",
        primary_key="id",
        partition_by="cohort",
        target_path=target.as_uri(),
        watermarks_table=ctx.watermarks_table,
    )


def _run(ctx: Context, label: str, argv: list[str]) -> dict[str, Any]:
    figures = measured(ctx, label, lambda: load_main(argv, spark=ctx.spark))
    summary = figures.pop("result")
    figures.update(
        **run_figures(summary),
        versions_opened=summary.get("versions_opened"),
        versions_closed=summary.get("versions_closed"),
    )
    return figures


def _rebuild(ctx: Context, source: Path, output: Path) -> dict[str, Any]:
    """The hand-written rebuild: every delivery, a window per key, the whole history written."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def action() -> None:
        rows = ctx.spark.read.schema(SCHEMA_DDL).json(source.as_uri())
        window = Window.partitionBy("id").orderBy("updated")
        history = (
            rows.withColumn("valid_from", F.col("updated"))
            .withColumn("valid_to", F.lead("updated").over(window))
            .withColumn("is_current", F.col("valid_to").isNull())
        )
        history.write.mode("overwrite").partitionBy("cohort").parquet(output.as_uri())

    figures = measured(ctx, "history-rebuild", action)
    figures.pop("result")
    return figures


def _same_history(ctx: Context, ours: Path, rebuilt: Path) -> dict[str, Any]:
    def read(path: Path) -> Any:
        return ctx.spark.read.parquet(path.as_uri()).select(*COLUMNS)

    mine, theirs = read(ours), read(rebuilt)
    return {
        "target_rows": mine.count(),
        "rebuilt_rows": theirs.count(),
        "rows_only_in_target": mine.exceptAll(theirs).count(),
        "rows_only_in_rebuild": theirs.exceptAll(mine).count(),
    }


def dimension(ctx: Context, root: Path, keys: int) -> Deliveries:
    """The section's deliveries of ``keys`` customers under ``root``: a first of every key,
    then the scale's updates, stamped an hour apart, the last two hours ago."""
    scale = ctx.scale
    source = Deliveries(
        root / "source", keys, scale.history_cohort_keys, scale.history_rows_per_file
    )
    draw = random.Random(SEED)
    every = list(range(1, keys + 1))
    start = time.time() - (scale.history_deliveries + 2) * 3_600
    source.deliver(every, start)
    updated = max(1, round(keys * scale.history_updated_fraction))
    for number in range(scale.history_deliveries - 1):
        source.deliver(sorted(draw.sample(every, updated)), start + (number + 1) * 3_600)
    return source


def _point(ctx: Context, keys: int) -> dict[str, Any]:
    root = ctx.section_dir(f"history/{keys}")
    with Timer() as generation:
        source = dimension(ctx, root, keys)
    history_job, latest_job = f"bench_history_{keys}", f"bench_history_latest_{keys}"
    history_target, latest_target = root / "history", root / "latest"
    history_args = load_args(ctx, history_job, source.root, history_target, *HISTORY)
    latest_args = load_args(ctx, latest_job, source.root, latest_target)
    first_history = _run(ctx, "history-first", history_args)
    first_latest = _run(ctx, "history-latest-first", latest_args)
    history_rows = source.rows
    newest = source.cohort_members(source.cohort(keys))
    source.deliver(newest, time.time() - 2.0)
    increment = _run(ctx, "history-increment", history_args)
    latest = _run(ctx, "history-latest-increment", latest_args)
    rebuild = _rebuild(ctx, source.root, root / "rebuilt")
    check = _same_history(ctx, history_target, root / "rebuilt")
    equal = check["rows_only_in_target"] == 0 and check["rows_only_in_rebuild"] == 0
    ctx.log(
        f"history: {keys:,} keys, {source.rows:,} delivered rows; increment of {len(newest):,} "
        f"keys: history {increment['seconds']:.1f}s, latest {latest['seconds']:.1f}s, "
        f"rebuild {rebuild['seconds']:.1f}s; equal {equal}"
    )
    return {
        "keys": keys,
        "deliveries": source.count,
        "delivered_rows": source.rows,
        "rows_before_increment": history_rows,
        "increment_keys": len(newest),
        "source_bytes": source.bytes,
        "generation_seconds": round(generation.seconds, 2),
        "first_history_run": first_history,
        "first_latest_run": first_latest,
        "history": increment,
        "latest": latest,
        "rebuild": rebuild,
        "history_vs_latest": ratio(increment["seconds"], latest["seconds"]),
        "rebuild_vs_history": ratio(rebuild["seconds"], increment["seconds"]),
        "history_check": check,
        "history_equals_rebuild": equal,
    }


def run(ctx: Context) -> dict[str, Any]:
    scale = ctx.scale
    points = [_point(ctx, keys) for keys in scale.history_keys]
    return {
        "description": (
            f"A customers dimension partitioned by signup cohort ({scale.history_cohort_keys:,} "
            "keys each): "
            f"{scale.history_deliveries} deliveries (every key, then "
            f"{scale.history_updated_fraction:.0%} of the keys each), loaded into a history "
            "target and a latest-version target; then one delivery updating every key of the "
            "newest cohort, taken by the history run, the latest-version run and a rebuild of "
            "the whole history from every delivery, at "
            + " / ".join(f"{keys:,}" for keys in scale.history_keys)
            + " keys"
        ),
        "method": (
            "glue_incremental.load.job.main with --history scd2 (default settings, first), then "
            "without --history on its own target, on the same new delivery; the rebuild is plain "
            "Spark: spark.read.json of every delivery, lead(updated) over a window per key, the "
            "whole history written with mode overwrite, partitioned alike. Every update changes "
            "the tracked value, so each delivery of a key is one version in both. Check: the "
            "history target equals the rebuild (exceptAll both ways, every column)"
        ),
        "points": points,
    }
