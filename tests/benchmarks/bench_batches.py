"""8. Bounded batches: a backfill in batches against one unbounded run of the same files.

The smallest ``file_histories`` scale of section 1 (same file layout: 1,000 files at full
scale, 25 per date directory): one unbounded first run, then the same backfill from
scratch with ``--max_batch_files`` a tenth of the files (ten batches at full scale, three
below; each read, merged, published and committed before the next). Target: the batched
backfill's total time within 1.2x of the unbounded run.

A backfill is bounded because its data is too big for one run, so at full scale the files
hold ``BACKFILL_ROWS_PER_FILE`` rows (25,000 rows per batch, 250,000 in all; section 1's
5 rows per file would make each batch 500 rows, a size nobody bounds). Further full-scale
points hold ``BIG_BACKFILL_ROWS_PER_FILE`` rows per file each (250,000 and 1,000,000 rows
per batch, the same ten batches): the per-batch fixed cost is the same, the work it is set
against larger. Each point reports the per-batch fixed cost,
``(bounded - unbounded) / (batches - 1)`` (the unbounded run is one batch). A warm-up load
of other files runs first, untimed, so neither timed run pays the JVM's warm-up.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.benchmarks.bench_files import FileSource, run_ours
from tests.benchmarks.common import Context, ratio

BATCHES = 10
BACKFILL_ROWS_PER_FILE = 250
BIG_BACKFILL_ROWS_PER_FILE = (2_500, 10_000)
WARM_UP_FILES = 20
# Below full scale a batch's fixed cost is all there is to measure: few batches keep it short.
SMALL_SCALE_BATCHES = 3


def run(ctx: Context) -> dict[str, Any]:
    files = min(ctx.scale.file_histories)
    root = ctx.section_dir("bounded_batches")
    full = ctx.scale.name == "full"
    rows_per_file = BACKFILL_ROWS_PER_FILE if full else ctx.scale.rows_per_file
    warm_up = FileSource(root / "warm_up", ctx.scale.files_per_directory, rows_per_file)
    warm_up.write_history(min(WARM_UP_FILES, files), time.time())
    run_ours(ctx, "bench_warm_up", warm_up, root / "warm_up_target")
    batches = BATCHES if full else SMALL_SCALE_BATCHES
    points = [_point(ctx, root / "backfill", files, rows_per_file, batches)]
    if full:
        points += [
            _point(ctx, root / f"big_backfill_{rows}", files, rows, batches)
            for rows in BIG_BACKFILL_ROWS_PER_FILE
        ]
    first = points[0]
    per_batch = first["files_per_batch"]
    return {
        "description": (
            f"A first load of {files} files ({first['rows']:,} rows, {rows_per_file} per file, "
            f"{first['source_bytes'] / 2**20:.0f} MiB of JSON): one unbounded run, then the same "
            f"backfill in batches of {per_batch} files ({per_batch * rows_per_file:,} rows per "
            "batch)"
            + "".join(
                f"; then the same with {p['rows_per_file']:,} rows per file ({p['rows']:,} rows, "
                f"{p['source_bytes'] / 2**20:.0f} MiB, {per_batch * p['rows_per_file']:,} rows "
                "per batch)"
                for p in points[1:]
            )
        ),
        "method": (
            "glue_incremental.load.job.main twice on the same files, each into its own empty target "
            "and state: without a bound, then with --max_batch_files (each batch committed "
            f"before the next is read). An untimed load of {min(WARM_UP_FILES, files)} other "
            "files runs first, so neither timed run pays the JVM warm-up. Per-batch fixed cost: "
            "(bounded - unbounded) / (batches - 1)"
        ),
        "points": points,
    }


def _point(
    ctx: Context, root: Path, files: int, rows_per_file: int, batches: int
) -> dict[str, Any]:
    """One backfill of ``files`` files of ``rows_per_file`` rows: unbounded, then batched."""
    source = FileSource(root / "source", ctx.scale.files_per_directory, rows_per_file)
    source.write_history(files, time.time())
    per_batch = max(1, -(-files // batches))
    # Each point's runs under their own job names: their own states, their own first loads.
    unbounded = run_ours(ctx, f"bench_unbounded_{root.name}", source, root / "unbounded")
    bounded = run_ours(
        ctx,
        f"bench_bounded_{root.name}",
        source,
        root / "bounded",
        "--max_batch_files",
        str(per_batch),
    )
    batch_count = -(-files // per_batch)
    fixed = (bounded["seconds"] - unbounded["seconds"]) / max(1, batch_count - 1)
    ctx.log(
        f"bounded_batches: {files} files of {rows_per_file} rows, unbounded "
        f"{unbounded['seconds']:.1f}s, {per_batch} files per batch {bounded['seconds']:.1f}s "
        f"({fixed:.2f}s fixed per batch)"
    )
    return {
        "files": files,
        "files_per_batch": per_batch,
        "rows": source.rows,
        "rows_per_file": rows_per_file,
        "source_bytes": source.bytes,
        "unbounded": unbounded,
        "bounded": bounded,
        "ratio": ratio(bounded["seconds"], unbounded["seconds"]),
        "fixed_seconds_per_batch": round(fixed, 3),
    }
