"""Helpers to drive the incremental load job in tests: sources, runs at chosen times, targets."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from glue_incremental.args import BookmarkOption
from glue_incremental.load.job import LoadConfig, run_load
from glue_incremental.run.context import BookmarkControl, IncrementalRun, hooks
from glue_incremental.watermarks import Watermarks

from tests.harness.reference import hidden

_counter = itertools.count()


def write_json_file(
    directory: Path, rows: Iterable[Mapping[str, Any]], *, mtime: float, name: str | None = None
) -> Path:
    """One JSON-lines file whose modification time is exactly ``mtime`` (epoch seconds)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or f"batch-{next(_counter):05d}.json")
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
    os.utime(path, (mtime, mtime))
    return path


def json_files_config(tmp: Path, **overrides: Any) -> LoadConfig:
    """A load of the JSON files under ``tmp/source`` (key ``id``, watermark ``updated``) into
    Parquet at ``tmp/target``; ``overrides`` change or add options."""
    options: dict[str, Any] = {
        "source": (tmp / "source").as_uri(),
        "source_format": "json",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "target_path": (tmp / "target").as_uri(),
    }
    return LoadConfig(**{**options, **overrides})


class FixedClock:
    """A clock the test moves: runs start exactly when the test says."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def run_load_at(
    spark: Any,
    config: LoadConfig,
    *,
    job_name: str,
    run_id: str,
    clock: FixedClock,
    store: Watermarks | None = None,
    option: BookmarkOption = BookmarkOption.ENABLE,
    from_run: str | None = None,
    to_run: str | None = None,
    hook: Callable[[str, Mapping[str, Any]], None] | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """One run of the load job with the clock at ``clock.now``; returns its summary.

    ``hook`` (``tests.harness.faults``) is installed on ``run.context.hooks`` during the run.
    """
    run = IncrementalRun(
        spark=spark,
        job_name=job_name,
        run_id=run_id,
        store=store or Watermarks(),
        bookmark=BookmarkControl(option, from_run, to_run),
        clock=clock,
        dry_run=dry_run,
    )
    with hooks.installed(hook) if hook else contextlib.nullcontext(), run:
        run_load(run, config)
    return run.summary


def job_argv(script: str, *extra: str, **options: str) -> list[str]:
    """A Glue job's command line: ``script``, ``--name value`` per option in order, then ``extra``."""
    flags = itertools.chain.from_iterable((f"--{name}", value) for name, value in options.items())
    return [script, *flags, *extra]


def read_parquet(spark: Any, uri: str, columns: Sequence[str] | None = None) -> Any:
    frame = spark.read.parquet(uri)
    return frame.select(*(columns or sorted(frame.columns)))


def partition_file_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every data file under ``root`` with its size and modification time (byte-identity check)."""
    snapshot = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not any(hidden(part) for part in path.relative_to(root).parts):
            stat = path.stat()
            snapshot[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return snapshot
