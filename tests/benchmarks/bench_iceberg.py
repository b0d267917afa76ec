"""6. The JDBC load into Iceberg vs Parquet: same data, time and bytes per run (no target yet).

The PostgreSQL table and its change rounds are those of section 2 (``bench_jdbc``), at the
smallest ``jdbc_rows`` scale. Each round runs the load job twice on the same source state:
into Parquet (``--target_path``) and into Iceberg (``--target_format iceberg``, the local
Hadoop catalog). Bytes: the target's total data size after the run (Parquet: the files under
the path; Iceberg: ``sum(file_size_in_bytes)`` of the current snapshot's ``files``), and for
Iceberg the run's snapshot ``added-files-size`` (bytes written by the one commit).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.benchmarks.bench_jdbc import _argv, _run, apply_changes, create_table
from tests.benchmarks.common import Context


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
    return {
        "description": (
            f"The JDBC load ({rows} rows, {ctx.scale.jdbc_changed_fraction:.0%} changed per "
            "round) into Parquet and into Iceberg, same source state per round"
        ),
        "method": (
            "each round runs glue_incremental.load.job.main twice on the same source state, into "
            "Parquet (--target_path) and into Iceberg (--target_format iceberg, local Hadoop "
            "catalog). Target bytes: data files after the run (Parquet: files under the path; "
            "Iceberg: sum(file_size_in_bytes) of the current snapshot's files). Bytes "
            "committed: the Iceberg snapshot's added-files-size. The first Parquet run also "
            "pays the section's JVM warm-up"
        ),
        "table_rows": rows,
        "points": points,
    }
