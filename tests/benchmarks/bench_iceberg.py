"""6. Iceberg targets: the load against Iceberg's own MERGE INTO, and against Parquet.

**Files into Iceberg, judged** (``files``): the file source of section 1 at its smallest
history, with ``ICEBERG_ROWS_PER_FILE`` rows per file at full scale. A first load of every
file against a hand-written one (each key's latest version, the table created partitioned
by ``date``); then ``file_repeats`` rounds of new files (new keys, and updates of keys
already loaded, which move to the new day's partition), each loaded by the job and by a
hand-written ``MERGE INTO`` of the same files' latest versions (told which files are new:
the anchor's best case), in alternating order; then the same first load as a bounded
backfill (``--max_batch_files``, ten batches at full scale). The job's table equals the
hand-written one after every round.

**JDBC into Iceberg and Parquet, for the record**:

The PostgreSQL table and its change rounds are those of section 2 (``bench_jdbc``), at the
smallest ``jdbc_rows`` scale. Each round runs the load job twice on the same source state:
into Parquet (``--target_path``) and into Iceberg (``--target_format iceberg``, the local
Hadoop catalog). Bytes: the target's total data size after the run (Parquet: the files under
the path; Iceberg: ``sum(file_size_in_bytes)`` of the current snapshot's ``files``), and for
Iceberg the run's snapshot ``added-files-size`` (bytes written by the one commit).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from tests.benchmarks.bench_files import FileSource, _schema, run_ours
from tests.benchmarks.bench_jdbc import _argv, _run, apply_changes, create_table
from tests.benchmarks.common import Context, measured, median, ratio

# Full scale: 250,000 rows over the 1,000 files (section 8's backfill size), so a first load
# is more than its fixed cost; below full scale, the scale's own rows per file.
ICEBERG_ROWS_PER_FILE = 250
BACKFILL_BATCHES = 10
SMALL_SCALE_BATCHES = 3
CATALOG = "glue_catalog"


def _parquet_bytes(target: Path) -> int:
    return sum(p.stat().st_size for p in target.rglob("*.parquet"))


def _iceberg_bytes(ctx: Context, table: str) -> tuple[int, int]:
    name = f"glue_catalog.{table}"
    total = ctx.spark.sql(f"SELECT coalesce(sum(file_size_in_bytes), 0) FROM {name}.files").first()[
        0
    ]
    added = ctx.spark.sql(
        f"SELECT summary['added-files-size'] FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).first()[0]
    return int(total), int(added or 0)


def _ours(ctx: Context, job: str, source: FileSource, table: str, *extra: str) -> dict[str, Any]:
    iceberg = ("--target_format", "iceberg", "--target_table", table, *extra)
    unused = ctx.section_dir("iceberg/files") / f"unused_{job}"  # the table is the target
    return run_ours(ctx, job, source, unused, *iceberg)


def _latest(frame: Any) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    latest_first = Window.partitionBy("id").orderBy(F.col("updated").desc())
    return frame.withColumn("_n", F.row_number().over(latest_first)).where("_n = 1").drop("_n")


def _hand_written_create(ctx: Context, source: FileSource, table: str) -> dict[str, Any]:
    """Every file read, each key's latest version, the table created partitioned by date."""
    from pyspark.sql import functions as F

    def action() -> None:
        frame = ctx.spark.read.schema(_schema()).json(source.uri)
        writer = _latest(frame).writeTo(f"{CATALOG}.{table}").using("iceberg")
        writer.partitionedBy(F.col("date")).create()

    figures = measured(ctx, "iceberg-hand-create", action)
    figures.pop("result")
    return figures


def _hand_written_merge(
    ctx: Context, source: FileSource, files: list[Path], table: str
) -> dict[str, Any]:
    """The new files' latest versions merged by key: Iceberg's own ``MERGE INTO``."""
    view = f"bench_changes_{uuid.uuid4().hex[:8]}"

    def action() -> None:
        reader = ctx.spark.read.schema(_schema()).option("basePath", source.uri)
        _latest(reader.json([str(path) for path in files])).createOrReplaceTempView(view)
        ctx.spark.sql(
            f"MERGE INTO {CATALOG}.{table} t USING {view} s ON t.id = s.id "
            "WHEN MATCHED AND s.updated > t.updated THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *"
        )

    figures = measured(ctx, "iceberg-merge-into", action)
    figures.pop("result")
    ctx.spark.catalog.dropTempView(view)
    return figures


def _add_updates(source: FileSource, directory: Path, rows: int, now: float) -> Path:
    """A file of newer versions of ``rows`` keys already loaded, spread over the history."""
    stamp, known = int(now * 1000), source.next_id - 1
    step = max(1, known // max(1, rows))
    lines = [
        json.dumps({"id": key, "updated": stamp, "value": f"updated-{key:09d}"})
        for key in range(1, known + 1, step)[:rows]
    ]
    path = directory / "updates.json"
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (now - 1.0, now - 1.0))
    source.files += 1
    source.bytes += path.stat().st_size
    return path


def _same_rows(ctx: Context, one: str, other: str) -> bool:
    columns = "id, updated, value, date"

    def only_in(a: str, b: str) -> int:
        query = (
            f"SELECT {columns} FROM {CATALOG}.{a} EXCEPT ALL SELECT {columns} FROM {CATALOG}.{b}"
        )
        return ctx.spark.sql(query).count()

    return only_in(one, other) == 0 and only_in(other, one) == 0


def _files(ctx: Context) -> dict[str, Any]:
    scale = ctx.scale
    full = scale.name == "full"
    files = min(scale.file_histories)
    rows_per_file = ICEBERG_ROWS_PER_FILE if full else scale.rows_per_file
    batches = BACKFILL_BATCHES if full else SMALL_SCALE_BATCHES
    source = FileSource(
        ctx.section_dir("iceberg/files") / "source", scale.files_per_directory, rows_per_file
    )
    source.write_history(files, time.time())
    suffix = uuid.uuid4().hex[:8]
    ours_table, hand_table, backfill_table = (
        f"bench.files_{name}_{suffix}" for name in ("ours", "hand", "backfill")
    )
    first_ours = _ours(ctx, f"bench_ice_files_{suffix}", source, ours_table)
    first_hand = _hand_written_create(ctx, source, hand_table)
    per_batch = -(-files // batches)
    backfill = _ours(
        ctx,
        f"bench_ice_backfill_{suffix}",
        source,
        backfill_table,
        "--max_batch_files",
        str(per_batch),
    )
    same = [_same_rows(ctx, ours_table, hand_table), _same_rows(ctx, backfill_table, hand_table)]
    ctx.log(
        f"iceberg: first load of {files} files: ours {first_ours['seconds']:.1f}s, hand-written "
        f"{first_hand['seconds']:.1f}s, backfill in {batches} batches {backfill['seconds']:.1f}s"
    )
    ours_runs, merge_runs = [], []
    for round_ in range(scale.file_repeats):
        new = source.add_delta(scale.file_delta, time.time())
        new.append(_add_updates(source, new[0].parent, rows_per_file, time.time()))
        time.sleep(0.01)
        for method in ("ours", "merge") if round_ % 2 == 0 else ("merge", "ours"):
            if method == "ours":
                ours_runs.append(_ours(ctx, f"bench_ice_files_{suffix}", source, ours_table))
            else:
                merge_runs.append(_hand_written_merge(ctx, source, new, hand_table))
        same.append(_same_rows(ctx, ours_table, hand_table))
        ctx.log(
            f"iceberg: round {round_ + 1}: ours {ours_runs[-1]['seconds']:.2f}s, MERGE INTO "
            f"{merge_runs[-1]['seconds']:.2f}s"
        )
    for table in (ours_table, hand_table, backfill_table):
        ctx.spark.sql(f"DROP TABLE IF EXISTS {CATALOG}.{table}")
    ours_median = median([run["seconds"] for run in ours_runs])
    merge_median = median([run["seconds"] for run in merge_runs])
    return {
        "files": files,
        "rows_per_file": rows_per_file,
        "delta_files": scale.file_delta,
        "updated_keys_per_round": rows_per_file,
        "batches": batches,
        "files_per_batch": per_batch,
        "first_load": {"ours": first_ours, "hand_written": first_hand},
        "first_load_ratio": ratio(first_ours["seconds"], first_hand["seconds"]),
        "backfill": backfill,
        "backfill_ratio": ratio(backfill["seconds"], first_ours["seconds"]),
        "incremental": {"ours": ours_runs, "merge_into": merge_runs},
        "incremental_medians": {"ours": ours_median, "merge_into": merge_median},
        "incremental_ratio": ratio(ours_median, merge_median),
        "tables_equal": all(same),
    }


def run(ctx: Context) -> dict[str, Any]:
    if ctx.postgres is None:
        raise RuntimeError("the Iceberg benchmark needs PostgreSQL (tests.harness.postgres)")
    rows = min(ctx.scale.jdbc_rows)
    source = f"bench_iceberg_orders_{rows}"
    iceberg_table = f"bench.orders_{uuid.uuid4().hex[:8]}"
    target = ctx.section_dir("iceberg/parquet") / "target"
    create_table(ctx, source, rows)
    iceberg_args = ("--target_format", "iceberg", "--target_table", iceberg_table)
    points = []
    for round_ in range(ctx.scale.jdbc_repeats + 1):
        if round_:
            apply_changes(ctx, source, rows, round_ - 1)
        label = "first" if not round_ else f"incremental #{round_}"
        parquet = _run(ctx, _argv(ctx, "bench_ice_parquet", source, target), "iceberg-parquet")
        iceberg = _run(
            ctx, _argv(ctx, "bench_ice_iceberg", source, target, *iceberg_args), "iceberg-iceberg"
        )
        total, added = _iceberg_bytes(ctx, iceberg_table)
        points.append(
            {
                "run": label,
                "parquet": {**parquet, "target_bytes": _parquet_bytes(target)},
                "iceberg": {**iceberg, "target_bytes": total, "bytes_committed": added},
            }
        )
        ctx.log(
            f"iceberg: {label}: parquet {parquet['seconds']:.1f}s, iceberg {iceberg['seconds']:.1f}s"
        )
    ctx.postgres.execute(f"DROP TABLE {source}")
    files = _files(ctx)  # after the JDBC rounds: Iceberg's code paths are warm for both methods
    return {
        "description": (
            f"Files into Iceberg: a first load of {files['files']:,} files "
            f"({files['rows_per_file']:,} rows each) by the job and by hand, the same as a "
            f"backfill in {files['batches']} batches, then rounds of {files['delta_files']} new "
            f"files plus {files['updated_keys_per_round']:,} updated keys loaded by the job and "
            "by Iceberg's MERGE INTO. "
            f"Then the JDBC load ({rows} rows, {ctx.scale.jdbc_changed_fraction:.0%} changed per "
            "round) into Parquet and into Iceberg, same source state per round"
        ),
        "method": (
            "Files: the job is glue_incremental.load.job.main with default settings and "
            "--target_format iceberg; the hand-written first load reads every file "
            "(spark.read.json with the schema), keeps row_number() = 1 over id by updated desc "
            "and creates the table (writeTo(...).partitionedBy(date).create()); the hand-written "
            "round reads only the round's new files, keeps each key's latest version and runs "
            "MERGE INTO ... ON t.id = s.id WHEN MATCHED AND s.updated > t.updated THEN UPDATE "
            "SET * WHEN NOT MATCHED THEN INSERT *; the two alternate which goes first; incremental "
            "figures are medians. The backfill is the job from scratch with --max_batch_files. "
            "JDBC: each round runs glue_incremental.load.job.main twice on the same source state, into "
            "Parquet (--target_path) and into Iceberg (--target_format iceberg, local Hadoop "
            "catalog). Target bytes: data files after the run (Parquet: files under the path; "
            "Iceberg: sum(file_size_in_bytes) of the current snapshot's files). Bytes "
            "committed: the Iceberg snapshot's added-files-size. The first Parquet run also "
            "pays the section's JVM warm-up"
        ),
        "table_rows": rows,
        "points": points,
        "files": files,
    }
