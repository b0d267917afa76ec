"""3. Incremental join with a small share of partitions affected vs a full recompute.

Two Parquet datasets (``left``: id, value, amount; ``right``: id, label,
score), partitioned by ``date=YYYY-MM-DD`` with ``join_rows_per_partition``
rows per partition and side, written with pyarrow (no Spark) and stamped two
days old (files and directories). The join job (``glue_incremental.join.main``,
inner join on ``id`` per ``date``):

- first run over the history (bookmarks enabled): the primed output;
- ``incremental``: ``join_affected_fraction`` of the partitions get new rows
  on both sides (one new file per side and partition), then one incremental
  run; repeated ``join_repeats`` times with fresh partitions, median reported;
- ``full recompute``: the same job with ``--job-bookmark-option
  job-bookmark-disable`` into a second target, and, as the lower bound of what
  any full recompute must read, plain Spark (read both sides, join, overwrite).

"Input bytes" are bytes the JVM read through Hadoop's local file system during
the run (``FileSystem`` statistics): data, footers, listings' side reads and
the staged output's footers alike. The bytes target is judged against the
smaller of the two full recomputes' figures. Output check against the job's
full recompute: the partitions the incremental runs changed, ``exceptAll`` both
ways empty; every other partition's files byte-identical (size and mtime) to
what the first run wrote; the same total row count.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from tests.benchmarks.common import Context, measured, median, ratio, without_memory
from tests.harness.loads import partition_file_snapshot
from tests.harness.targets import partition_values_as_strings

DAY0 = date(2024, 1, 1)
HISTORY_AGE_SECONDS = 2 * 86_400


def _partition(index: int) -> str:
    return (DAY0 + timedelta(days=index)).isoformat()


class JoinSides:
    """Both sides' files; ids are unique per partition and side, and match 1:1 across sides."""

    def __init__(self, root: Path, partitions: int, rows: int) -> None:
        self.root, self.partitions, self.rows = root, partitions, rows
        self.next_file = 0
        self.next_id: dict[int, int] = {}

    def side(self, name: str) -> Path:
        return self.root / name

    def _write(self, name: str, partition: int, first_id: int, count: int, mtime: float) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        ids = list(range(first_id, first_id + count))
        if name == "left":
            table = pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "value": [f"v{i}" for i in ids],
                    "amount": pa.array([i % 1000 for i in ids], pa.int64()),
                }
            )
        else:
            table = pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "label": [f"l{i % 97}" for i in ids],
                    "score": pa.array([i % 13 for i in ids], pa.int64()),
                }
            )
        directory = self.side(name) / f"date={_partition(partition)}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{self.next_file:06d}.parquet"
        self.next_file += 1
        pq.write_table(table, path)
        os.utime(path, (mtime, mtime))

    def write_history(self, now: float) -> None:
        old = now - HISTORY_AGE_SECONDS
        for partition in range(self.partitions):
            for name in ("left", "right"):
                self._write(name, partition, 0, self.rows, old)
            self.next_id[partition] = self.rows
        for name in ("left", "right"):
            for directory in self.side(name).iterdir():
                os.utime(directory, (old, old))
            os.utime(self.side(name), (old, old))

    def add_delta(self, partitions: list[int], rows: int, now: float) -> None:
        for partition in partitions:
            first = self.next_id[partition]
            for name in ("left", "right"):
                self._write(name, partition, first, rows, now - 2.0)
            self.next_id[partition] = first + rows


def _argv(ctx: Context, job: str, sides: JoinSides, target: Path, *extra: str) -> list[str]:
    return [
        "incremental_join.py",
        "--JOB_NAME",
        job,
        "--left_path",
        sides.side("left").as_uri(),
        "--right_path",
        sides.side("right").as_uri(),
        "--join_keys",
        "id",
        "--join_type",
        "inner",
        "--partition_by",
        "date",
        "--target_path",
        target.as_uri(),
        "--watermarks_table",
        ctx.watermarks_table,
        *extra,
    ]


def _run_job(ctx: Context, argv: list[str], label: str, *, memory: bool = False) -> dict:
    from glue_incremental.join import main as join_main

    figures = measured(ctx, label, lambda: join_main(argv, spark=ctx.spark), memory=memory)
    summary = figures.pop("result")
    figures.update(
        input_bytes=figures["fs_bytes_read"],
        affected_partitions=summary.get("affected_partitions"),
        files_read=summary.get("files_read"),
        records_read=summary.get("records_read"),
        records_written=summary.get("records_written"),
        partitions_written=len(summary.get("partitions_written") or []),
        committed=summary.get("committed"),
    )
    return figures


def _plain_recompute(ctx: Context, sides: JoinSides, target: Path, *, memory: bool) -> dict:
    spark = ctx.spark

    def action() -> None:
        left = spark.read.parquet(sides.side("left").as_uri())
        right = spark.read.parquet(sides.side("right").as_uri())
        joined = left.join(right, ["date", "id"], "inner")
        joined.write.mode("overwrite").partitionBy("date").parquet(target.as_uri())

    figures = measured(ctx, "join-plain", action, memory=memory)
    figures.pop("result")
    figures["input_bytes"] = figures["fs_bytes_read"]
    return figures


def _read_output(ctx: Context, target: Path) -> Any:
    with partition_values_as_strings(ctx.spark):
        frame = ctx.spark.read.parquet(target.as_uri())
        return frame.select(*sorted(frame.columns))


def _compare(
    ctx: Context,
    incremental: Path,
    full: Path,
    changed: set[str],
    before: dict[str, tuple[int, int]],
) -> dict[str, Any]:
    """Affected partitions: ``exceptAll`` both ways; the others: byte-identical since the
    first run; and the same total row count as the full recompute."""
    from pyspark.sql import functions as F

    wanted = sorted(changed)
    ours, reference = _read_output(ctx, incremental), _read_output(ctx, full)
    try:
        mine = ours.where(F.col("date").isin(wanted))
        theirs = reference.where(F.col("date").isin(wanted))
        only_ours = mine.exceptAll(theirs).count()
        only_reference = theirs.exceptAll(mine).count()
        affected_rows = mine.count()
        rows, reference_rows = ours.count(), reference.count()
    finally:
        ours.unpersist()
        reference.unpersist()
    after = partition_file_snapshot(incremental)

    def untouched(snapshot: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        return {
            path: entry
            for path, entry in snapshot.items()
            if path.split("/", 1)[0].removeprefix("date=") not in changed
        }

    return {
        "affected_partitions_compared": len(wanted),
        "affected_rows": affected_rows,
        "rows_only_in_incremental": only_ours,
        "rows_only_in_full_recompute": only_reference,
        "rows": rows,
        "full_recompute_rows": reference_rows,
        "untouched_files": len(untouched(before)),
        "untouched_byte_identical": untouched(before) == untouched(after),
    }


def bench_size(ctx: Context, partitions: int, *, largest: bool, seed: int) -> dict[str, Any]:
    scale = ctx.scale
    base = ctx.section_dir(f"join/{partitions}")
    sides = JoinSides(base, partitions, scale.join_rows_per_partition)
    started = time.perf_counter()
    sides.write_history(time.time())
    generation = time.perf_counter() - started
    job = f"bench_join_{partitions}"
    target, full_target = base / "target", base / "target_full"
    first = _run_job(ctx, _argv(ctx, job, sides, target), "join-first")
    before = partition_file_snapshot(target)
    ctx.log(
        f"join: {partitions} partitions x {sides.rows} rows generated in {generation:.1f}s, "
        f"first run {first['seconds']:.1f}s"
    )
    affected = max(1, round(partitions * scale.join_affected_fraction))
    delta_rows = max(1, sides.rows // 10)
    chooser = random.Random(seed)
    runs, changed = [], set()
    for repeat in range(scale.join_repeats):
        chosen = sorted(chooser.sample(range(partitions), affected))
        changed.update(_partition(index) for index in chosen)
        sides.add_delta(chosen, delta_rows, time.time())
        run = _run_job(
            ctx,
            _argv(ctx, job, sides, target),
            "join-incremental",
            memory=largest and repeat == scale.join_repeats - 1,
        )
        run["partitions_changed"] = len(chosen)
        runs.append(run)
        ctx.log(
            f"join: {partitions} partitions, run {repeat + 1}: {run['affected_partitions']} "
            f"affected, {run['seconds']:.2f}s, {run['input_bytes']:,} bytes"
        )
    full = _run_job(
        ctx,
        _argv(ctx, job, sides, full_target, "--job-bookmark-option", "job-bookmark-disable"),
        "join-full",
        memory=largest,
    )
    plain = _plain_recompute(ctx, sides, base / "target_plain", memory=largest)
    ctx.log(
        f"join: {partitions} partitions: full recompute job {full['seconds']:.1f}s, "
        f"plain Spark {plain['seconds']:.1f}s"
    )
    check = _compare(ctx, target, full_target, changed, before)
    incremental_seconds = median([run["seconds"] for run in runs])
    incremental_bytes = median([run["input_bytes"] for run in runs])
    full_bytes = min(full["input_bytes"], plain["input_bytes"])
    full_seconds = min(full["seconds"], plain["seconds"])
    result = {
        "partitions": partitions,
        "rows_per_partition": sides.rows,
        "affected_partitions": affected,
        "delta_rows_per_partition_and_side": delta_rows,
        "generation_seconds": round(generation, 2),
        "first_run": without_memory(first),
        "incremental": {
            "seconds": round(incremental_seconds, 3),
            "input_bytes": incremental_bytes,
            "runs": [without_memory(run) for run in runs],
        },
        "full": {
            "seconds": full_seconds,
            "input_bytes": full_bytes,
            "job_bookmark_disabled": without_memory(full),
            "plain_spark": without_memory(plain),
        },
        "output_check": check,
        "output_identical": check["rows_only_in_incremental"] == 0
        and check["rows_only_in_full_recompute"] == 0
        and check["affected_rows"] > 0
        and check["rows"] == check["full_recompute_rows"]
        and check["untouched_byte_identical"],
        "summary": {
            "incremental_seconds": round(incremental_seconds, 3),
            "full_seconds": full_seconds,
            "speedup": round(ratio(full_seconds, incremental_seconds) or 0, 2),
            "speedup_vs_job": round(ratio(full["seconds"], incremental_seconds) or 0, 2),
            "bytes_share": round(ratio(incremental_bytes, full_bytes) or 0, 5),
            "bytes_share_vs_job": round(ratio(incremental_bytes, full["input_bytes"]) or 0, 5),
        },
    }
    if largest:
        result["memory"] = {
            "incremental": runs[-1].get("memory"),
            "full_recompute_job": full.get("memory"),
            "full_recompute_plain": plain.get("memory"),
        }
    shutil.rmtree(base, ignore_errors=True)
    return result


def run(ctx: Context) -> dict[str, Any]:
    scale = ctx.scale
    sizes = sorted(scale.join_partitions)
    return {
        "description": (
            f"Inner join of two Parquet datasets partitioned by date, "
            f"{scale.join_rows_per_partition:,} rows per partition and side; "
            f"{scale.join_affected_fraction:.0%} of the partitions get new rows on both sides; "
            f"incremental run (median of {scale.join_repeats}) vs full recompute; the output "
            "checked against the full recompute"
        ),
        "method": (
            "Full recompute = the faster / smaller of the join job with bookmarks disabled and "
            "plain Spark (read both sides, join, overwrite); both are in results.json. Input "
            "bytes = Hadoop local-filesystem bytes read by the JVM during the run."
        ),
        "points": [
            bench_size(ctx, n, largest=n == sizes[-1], seed=index) for index, n in enumerate(sizes)
        ],
    }
