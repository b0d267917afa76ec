"""Run every benchmark in one process and write ``tests/benchmarks/results/``.

    python -m tests.benchmarks.run                 # make bench: full scale
    python -m tests.benchmarks.run --smoke         # make bench-smoke: tiny, < 60 s
    python -m tests.benchmarks.run --sections file_ingestion,watermarks --output /tmp/bench
    python -m tests.benchmarks.run --render tests/benchmarks/results   # README from the JSON
    python -m tests.benchmarks.run --sections reconcile --output /tmp/bench \
        --merge-into tests/benchmarks/results   # a partial run updates the committed results

One SparkSession (``glue_incremental.spark.local_spark_session``: local[2], UI
off, few shuffle partitions), one AWS-compatible endpoint and one PostgreSQL
server (``tests.harness``) serve every section. Each section records what it
measured; ``targets.registry.evaluate`` turns the figures into met/missed verdicts and
``report`` writes ``results.json``, ``README.md`` and the plots. A section that
fails is recorded as an error (the others still run) and the exit code is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.benchmarks.common import Context, Timer
from tests.benchmarks.scales import SCALES, SMOKE, Scale

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = Path(__file__).resolve().parent / "results"
SMOKE_DIR = ROOT / "build" / "bench-smoke"

# Section name -> module with ``run(ctx) -> dict``, in the order they run.
SECTIONS: dict[str, str] = {
    "file_ingestion": "tests.benchmarks.bench_files",
    "jdbc": "tests.benchmarks.bench_jdbc",
    "join": "tests.benchmarks.bench_join",
    "watermarks": "tests.benchmarks.bench_watermarks",
    "predicates": "tests.benchmarks.bench_predicates",
    "iceberg": "tests.benchmarks.bench_iceberg",
    "s3_discovery": "tests.benchmarks.bench_s3_discovery",
    "aggregation": "tests.benchmarks.bench_aggregate",
    "bounded_batches": "tests.benchmarks.bench_batches",
    "reconcile": "tests.benchmarks.bench_reconcile",
    "history": "tests.benchmarks.bench_history",
}
NEEDS_POSTGRES = {"jdbc", "iceberg", "reconcile"}


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# Imported before the first measurement, so one snapshot of the code serves the whole run
# (the jobs import some of these lazily).
LIBRARY_MODULES = (
    "glue_incremental.load.job",
    "glue_incremental.join",
    "glue_incremental.partitions.predicates",
    "glue_incremental.targets.parquet.writer",
    "glue_incremental.sources.files",
    "glue_incremental.sources.jdbc",
    "glue_incremental.sources.discovery",
)


def _uncommitted() -> list[str]:
    """Library files that differ from the commit (the results describe the working tree)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", "lib", "glue_scripts"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line[3:] for line in out.stdout.splitlines() if line.strip()]


def run_benchmarks(
    scale: Scale,
    output: Path,
    sections: Sequence[str] = tuple(SECTIONS),
    *,
    spark: Any = None,
    postgres: Any = None,
    manage_endpoint: bool = True,
    log: Any = _log,
) -> dict[str, Any]:
    """Run ``sections`` at ``scale`` and write the results under ``output``.

    ``spark``/``postgres`` reuse running ones (the test suite's session
    fixtures); ``manage_endpoint=False`` uses the endpoint already exported in
    ``AWS_ENDPOINT_URL``. Returns the results dict also written as JSON.
    """
    from glue_incremental.watermarks import create_table

    from tests.benchmarks import report, targets

    unknown = [name for name in sections if name not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown sections {unknown}; choose from {list(SECTIONS)}")
    modules = {name: importlib.import_module(SECTIONS[name]) for name in sections}
    for module in LIBRARY_MODULES:
        importlib.import_module(module)
    started = datetime.now(UTC)
    workdir = Path(tempfile.mkdtemp(prefix="gi-bench-"))
    results: dict[str, Any] = {
        "meta": {
            "scale": scale.as_dict(),
            "started_at": started.isoformat(timespec="seconds"),
            "git_commit": _git_commit(),
            "library_files_uncommitted": _uncommitted(),
            "python": platform.python_version(),
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "memory_gib": round(
                    os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
                ),
                "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
            },
        },
        "sections": {},
    }
    with Timer() as total, contextlib.ExitStack() as stack:
        if manage_endpoint:
            from tests.harness.endpoint import running_local_aws

            stack.enter_context(running_local_aws())
            results["meta"]["endpoint"] = "LocalStack + DynamoDB Local + moto (Glue)"
        if postgres is None and NEEDS_POSTGRES & set(sections):
            from tests.harness.postgres import running_postgres

            postgres = stack.enter_context(running_postgres())
        if spark is None:
            from glue_incremental.spark import local_spark_session

            # Iceberg tables of section 6 live in the run's scratch directory.
            os.environ["GLUE_INCREMENTAL_ICEBERG_WAREHOUSE"] = (workdir / "iceberg").as_uri()
            spark = local_spark_session(app_name="glue-incremental-bench")
            stack.callback(spark.stop)
        stack.callback(shutil.rmtree, workdir, True)
        results["meta"]["spark"] = {
            "version": spark.version,
            "master": spark.sparkContext.master,
            "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
            "driver_memory": spark.sparkContext.getConf().get("spark.driver.memory", None),
        }
        table = f"bench-watermarks-{uuid.uuid4().hex[:8]}"
        create_table(table)
        ctx = Context(spark, scale, workdir, table, postgres, log)
        for name in sections:
            log(f"section {name}: start")
            with Timer() as timer:
                try:
                    section = modules[name].run(ctx)
                except Exception as error:
                    log(f"section {name}: FAILED: {type(error).__name__}: {error}")
                    section = {
                        "status": "error",
                        "error": f"{type(error).__name__}: {error}",
                        "traceback": traceback.format_exc(),
                    }
            section.setdefault("status", "ok")
            section["section_seconds"] = round(timer.seconds, 1)
            results["sections"][name] = section
            log(f"section {name}: {section['status']} in {timer.seconds:.1f}s")
    results["meta"]["total_wall_seconds"] = round(total.seconds, 1)
    results["meta"]["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    results["targets"] = targets.evaluate(results)
    output.mkdir(parents=True, exist_ok=True)
    (output / "results.json").write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    report.write(results, output)
    log(f"results written to {output} ({total.seconds:.0f}s)")
    return results


def merge_into(directory: Path, partial: dict[str, Any]) -> dict[str, Any]:
    """Merge ``partial`` into ``directory/results.json``, re-judge, rewrite README and plots."""
    from tests.benchmarks import merge, report, targets

    base = json.loads((directory / "results.json").read_text())
    results = merge.merge(base, partial, SECTIONS)
    results["targets"] = targets.evaluate(results)
    (directory / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    report.write(results, directory)
    _log(f"sections {list(partial['sections'])} merged into {directory}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.run", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny scale (same as --scale smoke)")
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    parser.add_argument(
        "--output",
        type=Path,
        help=f"where to write results (default {RESULTS_DIR.relative_to(ROOT)}, "
        f"or {SMOKE_DIR.relative_to(ROOT)} for --smoke)",
    )
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)}",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="DIR",
        help="measure nothing: re-judge DIR/results.json and rewrite its README and plots",
    )
    parser.add_argument(
        "--merge-into",
        type=Path,
        metavar="DIR",
        help="after the run, put its sections into DIR/results.json (the others kept, each "
        "with its own commit, date and load) and rewrite DIR's README and plots",
    )
    args = parser.parse_args(argv)
    from tests.benchmarks import report, targets

    if args.render:
        results = json.loads((args.render / "results.json").read_text())
        results["targets"] = targets.evaluate(results)
        (args.render / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        report.write(results, args.render)
        for line in report.target_lines(results):
            print(line)
        return 0

    scale = SMOKE if args.smoke else SCALES[args.scale]
    output = args.output or (RESULTS_DIR if scale.name == "full" else SMOKE_DIR)
    sections = [name.strip() for name in args.sections.split(",") if name.strip()]
    results = run_benchmarks(scale, output, sections)
    failed = [name for name, body in results["sections"].items() if body["status"] == "error"]
    if args.merge_into:
        results = merge_into(args.merge_into, results)
    for line in report.target_lines(results):
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
