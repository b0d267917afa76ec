"""8. Bounded batches: a backfill in batches against one unbounded run of the same files.

The smallest ``file_histories`` scale of section 1 (same file layout): one unbounded first
run, then the same backfill from scratch with ``--max_batch_files`` a tenth of the files
(ten batches at full scale, three below; each read, merged, published and committed
before the next). Target: the
batched backfill's total time within 1.2x of the unbounded run.
"""

from __future__ import annotations

import time
from typing import Any

from tests.benchmarks.bench_files import FileSource, run_ours
from tests.benchmarks.common import Context, ratio

BATCHES = 10
# Below full scale a batch's fixed cost is all there is to measure: few batches keep it short.
SMALL_SCALE_BATCHES = 3


def run(ctx: Context) -> dict[str, Any]:
    files = min(ctx.scale.file_histories)
    root = ctx.section_dir("bounded_batches")
    source = FileSource(root / "source", ctx.scale.files_per_directory, ctx.scale.rows_per_file)
    source.write_history(files, time.time())
    batches = BATCHES if ctx.scale.name == "full" else SMALL_SCALE_BATCHES
    per_batch = max(1, -(-files // batches))
    unbounded = run_ours(ctx, "bench_unbounded", source, root / "unbounded")
    bounded = run_ours(
        ctx, "bench_bounded", source, root / "bounded", "--max_batch_files", str(per_batch)
    )
    ctx.log(
        f"bounded_batches: {files} files, unbounded {unbounded['seconds']:.1f}s, "
        f"{per_batch} files per batch {bounded['seconds']:.1f}s"
    )
    return {
        "description": (
            f"A first load of {files} files ({source.rows} rows): one unbounded run, then the "
            f"same backfill in batches of {per_batch} files"
        ),
        "method": (
            "glue_incremental.load.main twice on the same files, each into its own empty target "
            "and state: without a bound, then with --max_batch_files (each batch committed "
            "before the next is read). The unbounded run goes first and pays the JVM warm-up"
        ),
        "points": [
            {
                "files": files,
                "files_per_batch": per_batch,
                "unbounded": unbounded,
                "bounded": bounded,
                "ratio": ratio(bounded["seconds"], unbounded["seconds"]),
            }
        ],
    }
