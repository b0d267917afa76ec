"""Where a load's runs spend their time: Spark jobs by step, driver time, classes compiled.

    python -m tests.benchmarks.profile                       # 20,000 files, then 100 more
    python -m tests.benchmarks.profile --files 1000 --batch-files 20 --python-top 30
    python -m tests.benchmarks.profile --history-keys 100000 --rounds 3
    python -m tests.benchmarks.profile --reconcile-rows 1000000

Files: section 1's source (``bench_files.FileSource``), after a warm-up: a hand-written
correct full load (the anchor), the job's first load, its run over ``--batch-files`` new
files, a full reload. History (``--history-keys``): section 11's dimension, then
``--rounds`` increments, each taken by a history run then a latest-version run. Reconcile
(``--reconcile-rows``): section 10's PostgreSQL table loaded, 1% of it deleted, a run with
``--reconcile true``, then a full reload. Each run's
jobs are grouped by the step that started them (``io.spark_steps``), with the wall time
they covered (steps run side by side overlap); ``driver`` is the rest; the title counts the
classes Spark compiled during the run (again once evicted from its code cache). A Markdown
table per run, for ``tests/benchmarks/results/profiles.md``. Needs a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import pstats
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glue_incremental.load.job import main as load_main

from tests.benchmarks import bench_files, bench_history, bench_jdbc, bench_reconcile, scales
from tests.benchmarks.common import Context

PREFIX = "glue-incremental: "


@dataclass(frozen=True)
class Job:
    step: str
    started_ms: int
    ended_ms: int


@dataclass(frozen=True)
class Profile:
    label: str
    wall_s: float
    jobs: list[Job]
    compiled: int  # classes Spark generated and compiled during the run

    def by_step(self) -> list[tuple[str, int, float]]:
        """(step, jobs, seconds its jobs covered) in the order the steps first ran."""
        steps: dict[str, list[Job]] = {}
        for job in sorted(self.jobs, key=lambda j: j.started_ms):
            steps.setdefault(job.step, []).append(job)
        return [(step, len(jobs), covered(jobs) / 1000) for step, jobs in steps.items()]

    def driver_s(self) -> float:
        return max(0.0, self.wall_s - covered(self.jobs) / 1000)

    def markdown(self) -> str:
        lines = [
            f"**{self.label}**: {self.wall_s:.2f} s, {len(self.jobs)} Spark jobs, "
            f"{self.compiled} classes compiled",
            "",
            "| step | Spark jobs | s in jobs |",
            "|---|---|---|",
        ]
        lines += [
            f"| {step} | {count} | {seconds:.2f} |" for step, count, seconds in self.by_step()
        ]
        lines.append(f"| driver, between jobs | - | {self.driver_s():.2f} |")
        return "\n".join(lines)


def covered(jobs: Sequence[Job]) -> int:
    """Milliseconds covered by at least one of ``jobs`` (side-by-side jobs overlap)."""
    total, end = 0, None
    for job in sorted(jobs, key=lambda j: j.started_ms):
        start = job.started_ms if end is None else max(job.started_ms, end)
        if job.ended_ms > start:
            total += job.ended_ms - start
        end = job.ended_ms if end is None else max(end, job.ended_ms)
    return total


def profiled(spark: Any, label: str, action: Callable[[], Any], *, python_top: int = 0) -> Profile:
    """Run ``action``; the Spark jobs it started, with their steps and times.
    ``python_top``: also print the driver's ``python_top`` costliest calls (cProfile)."""
    before = {job.jobId() for job in _jobs(spark)}
    compiled_before = _compiled(spark)
    profiler = cProfile.Profile() if python_top else None
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    action()
    if profiler is not None:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(python_top)
    wall = time.perf_counter() - started
    jobs = []
    for job in _jobs(spark):
        if job.jobId() in before or not job.completionTime().isDefined():
            continue
        described = job.description().get() if job.description().isDefined() else ""
        step = described[len(PREFIX) :] if described.startswith(PREFIX) else "(Spark's own)"
        jobs.append(
            Job(step, job.submissionTime().get().getTime(), job.completionTime().get().getTime())
        )
    return Profile(label, wall, jobs, _compiled(spark) - compiled_before)


def _compiled(spark: Any) -> int:
    """Classes Spark's code generator has compiled in this JVM (its cache's misses)."""
    metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def _jobs(spark: Any) -> list[Any]:
    """Every job Spark's status store keeps (``spark.ui.retainedJobs``, 1,000 by default)."""
    listed = spark.sparkContext._jsc.sc().statusStore().jobsList(None).iterator()
    found = []
    while listed.hasNext():
        found.append(listed.next())
    return found


def profile_runs(
    ctx: Context, files: int, batch_files: int, python_top: int = 0, *, warm_up: bool = True
) -> list[Profile]:
    """The anchor, the first load, a later batch and a full reload over section 1's source."""
    if warm_up:
        bench_files.warm_up(ctx)
    base = ctx.section_dir("profile")
    source = bench_files.FileSource(base / "source", 25, 5)
    source.write_history(files, time.time())
    spark = ctx.spark
    anchor = profiled(
        spark,
        f"hand-written full load, {files:,} files",
        lambda: bench_files.hand_written_full_load(spark, source, base / "hand"),
    )
    argv = bench_files.load_argv("profile", source, base / "target", ctx.watermarks_table)
    first = profiled(
        spark,
        f"first load, {files:,} files",
        lambda: load_main(argv, spark=spark),
        python_top=python_top,
    )
    source.add_delta(batch_files, time.time())
    later = profiled(
        spark,
        f"later batch, {batch_files:,} new files",
        lambda: load_main(argv, spark=spark),
        python_top=python_top,
    )
    reload = profiled(
        spark,
        f"full reload, {files + batch_files:,} files",
        lambda: load_main([*argv, "--job-bookmark-option", "job-bookmark-disable"], spark=spark),
        python_top=python_top,
    )
    return [anchor, first, later, reload]


def profile_history_runs(
    ctx: Context, keys: int, rounds: int, python_top: int = 0
) -> list[Profile]:
    """Section 11's dimension of ``keys`` keys in a history and a latest-version target, then
    ``rounds`` increments, each every key of another cohort (newest first), taken by a history
    run then a latest-version run. ``python_top``: as ``profiled``, for the last increment."""
    root = ctx.section_dir("profile-history")
    source = bench_history.dimension(ctx, root, keys)
    history = bench_history.load_args(
        ctx, "profile_history", source.root, root / "history", *bench_history.HISTORY
    )
    latest = bench_history.load_args(ctx, "profile_latest", source.root, root / "latest")
    for args in (history, latest):
        load_main(args, spark=ctx.spark)
    profiles = []
    cohort_count = source.cohort(keys) + 1
    for number in range(rounds):
        cohort = (cohort_count - 1 - number) % cohort_count
        source.deliver(source.cohort_members(cohort), time.time() - 2.0)
        for label, args in (("history", history), ("latest", latest)):
            profiles.append(
                profiled(
                    ctx.spark,
                    f"{label} run, increment {number + 1}",
                    functools.partial(load_main, args, spark=ctx.spark),
                    python_top=python_top if number == rounds - 1 else 0,
                )
            )
    return profiles


def profile_reconcile_runs(ctx: Context, rows: int, python_top: int = 0) -> list[Profile]:
    """Section 10's table of ``rows`` rows loaded into Parquet, 1% of its rows deleted, then a
    run with ``--reconcile true`` and a full reload of the same table (needs ``ctx.postgres``)."""
    table = f"profile_reconcile_{rows}"
    target = ctx.section_dir("profile-reconcile") / "target"
    bench_jdbc.create_table(ctx, table, rows)
    argv = bench_reconcile._argv(ctx, table, table, target)
    load_main(argv, spark=ctx.spark)
    ctx.postgres.execute(
        f"DELETE FROM {table} WHERE {bench_reconcile.KEY} %% %s::bigint = 0", (100,)
    )
    runs = [
        ("reconcile, 1% of the keys gone", [*argv, "--reconcile", "true"]),
        ("full reload", [*argv, "--job-bookmark-option", "job-bookmark-disable"]),
    ]
    try:
        return [
            profiled(
                ctx.spark,
                label,
                functools.partial(load_main, args, spark=ctx.spark),
                python_top=python_top,
            )
            for label, args in runs
        ]
    finally:
        ctx.postgres.execute(f"DROP TABLE {table}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--batch-files", type=int, default=100)
    parser.add_argument(
        "--python-top",
        type=int,
        default=0,
        help="print the job runs' N costliest driver calls (history: the last increment's)",
    )
    instead = parser.add_mutually_exclusive_group()  # of file loads
    instead.add_argument(
        "--history-keys",
        type=_positive,
        default=None,
        help="profile history increments at N keys instead of file loads",
    )
    instead.add_argument(
        "--reconcile-rows",
        type=_positive,
        default=None,
        help="profile a reconcile of a PostgreSQL table of N rows and a full reload of it",
    )
    parser.add_argument(
        "--rounds", type=_positive, default=3, help="history increments (with --history-keys)"
    )
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    from glue_incremental.spark import local_spark_session
    from glue_incremental.watermarks import create_table

    from tests.harness.endpoint import running_local_aws

    workdir = Path(tempfile.mkdtemp(prefix="gi-profile-"))
    try:
        with running_local_aws(), contextlib.ExitStack() as stack:
            postgres = None
            if args.reconcile_rows is not None:
                from tests.harness.postgres import running_postgres

                postgres = stack.enter_context(running_postgres())
            spark = local_spark_session(app_name="glue-incremental-profile")
            table = f"profile-watermarks-{uuid.uuid4().hex[:8]}"
            create_table(table)
            ctx = Context(spark, scales.FULL, workdir, table, postgres, print)
            if args.reconcile_rows is not None:
                profiles = profile_reconcile_runs(ctx, args.reconcile_rows, args.python_top)
            elif args.history_keys is not None:
                profiles = profile_history_runs(
                    ctx, args.history_keys, args.rounds, args.python_top
                )
            else:
                profiles = profile_runs(ctx, args.files, args.batch_files, args.python_top)
            for profile in profiles:
                print(profile.markdown(), end="\n\n")
            spark.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
