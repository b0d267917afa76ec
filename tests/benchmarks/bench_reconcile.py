"""10. Hard deletes: the reconcile's cost on a large PostgreSQL table, against a full reload.

A table of ``reconcile_rows`` orders (the JDBC section's shape: ``bench_jdbc.create_table``)
is loaded once into Parquet; then ``reconcile_deleted_fraction`` of its rows are deleted in
PostgreSQL and one run with ``--reconcile true`` removes them from the target. Then a full
reload (``--job-bookmark-option job-bookmark-disable``) of the same table into the same
target, for the time ratio.

What the reconcile read, two honest measurements (Spark's JDBC scan reports no input bytes):

- the statements PostgreSQL logged during the run (the harness server runs with
  ``log_statement=all``): the key read must select the key column and nothing else, and no
  other statement may read the table's rows unfiltered;
- the bytes of what it selected: ``sum(pg_column_size(id))`` against
  ``sum(pg_column_size(t.*))`` over the rows the reconcile saw (the datum bytes PostgreSQL
  hands the client before the wire protocol's framing), and the rows returned (the run
  summary's ``source_keys``).

Check: the target afterwards equals the source (``exceptAll`` both ways on every column).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.benchmarks.bench_jdbc import _scalar, _secret_id, create_table
from tests.benchmarks.common import Context, directory_size, measured, ratio, run_figures
from tests.harness.postgres import statements_since

# One execution per statement: the JDBC driver reads a large result through a cursor, and
# PostgreSQL logs each further batch of rows as ``execute fetch from <portal>`` (100 lines
# for 1M keys at the driver's fetch size): those are the same read, not new ones.
EXECUTED = re.compile(r"(?:statement|execute (?!fetch from)[^:]*): (.*)")

KEY = "id"
# Columns the target and the source share (order_day is the target's partition column).
COMPARED = ("id", "order_day", "updated_at", "amount", "note")


def _argv(ctx: Context, job: str, table: str, target: Path, *extra: str) -> list[str]:
    pg = ctx.postgres
    return [
        "incremental_load.py",
        *("--JOB_NAME", job, "--source", pg.jdbc_url, "--source_table", table),
        *("--source_secret_id", _secret_id(ctx), "--watermark_column", "updated_at"),
        *("--primary_key", KEY, "--partition_by", "order_day"),
        *("--jdbc_num_partitions", "2", "--jdbc_partition_column", KEY),
        *("--target_path", target.as_uri(), "--watermarks_table", ctx.watermarks_table),
        *extra,
    ]


def _run(ctx: Context, argv: list[str], label: str) -> dict[str, Any]:
    from glue_incremental.load.job import main as load_main

    figures = measured(ctx, label, lambda: load_main(argv, spark=ctx.spark))
    summary = figures.pop("result")
    figures.update(
        **run_figures(summary),
        records_deleted=summary.get("records_deleted"),
        keys=summary.get("reconcile"),
    )
    return figures


def _executed_since(ctx: Context, offset: int) -> list[str]:
    with open(ctx.postgres.log_path, errors="replace") as handle:
        handle.seek(offset)
        return EXECUTED.findall(handle.read())


def _reads_of(statements: list[str], table: str) -> dict[str, list[str]]:
    """The logged statements naming ``table``, by kind: the key read, schema probes (``WHERE
    1=0``: no rows), watermark-bounded reads (the increment), and anything else (a full read)."""
    quoted = f'"{table}"'
    key_select = re.compile(rf'SELECT\s+"{KEY}"\s+FROM\s+{re.escape(quoted)}', re.IGNORECASE)
    kinds: dict[str, list[str]] = {"key": [], "probe": [], "increment": [], "other": []}
    for sql in statements:
        if quoted not in sql and table not in sql:
            continue
        if "WHERE 1=0" in sql:
            kinds["probe"].append(sql)
        elif key_select.search(sql):
            kinds["key"].append(sql)
        elif "updated_at" in sql and re.search(r"\bWHERE\b", sql, re.IGNORECASE):
            kinds["increment"].append(sql)
        else:
            kinds["other"].append(sql)
    return kinds


def _selects_only_keys(sql: str) -> bool:
    """Every SELECT list in the statement is exactly the key column."""
    lists = re.findall(r"SELECT\s+(.*?)\s+FROM", sql, re.IGNORECASE | re.DOTALL)
    return bool(lists) and all(part.strip() == f'"{KEY}"' for part in lists)


def _bytes(ctx: Context, table: str) -> dict[str, int]:
    row = ctx.postgres.execute(
        f"SELECT count(*), sum(pg_column_size({KEY})), sum(pg_column_size(t.*)), "
        f"pg_relation_size('{table}') FROM {table} AS t"
    )[0]
    return {"rows": row[0], "key_bytes": row[1], "row_bytes": row[2], "heap_bytes": row[3]}


def _target_equals_source(ctx: Context, table: str, target: Path) -> dict[str, Any]:
    pg = ctx.postgres
    columns = ", ".join(COMPARED)
    source = (
        ctx.spark.read.format("jdbc")
        .option("url", pg.jdbc_url)
        .option("user", pg.user)
        .option("password", pg.password)
        .option("driver", "org.postgresql.Driver")
        .option("dbtable", f"(SELECT {columns} FROM {table}) AS compared")
        .load()
    )
    stored = ctx.spark.read.parquet(target.as_uri())
    stored = stored.select(*[stored[name].cast(source.schema[name].dataType) for name in COMPARED])
    only_source = source.exceptAll(stored).count()
    only_target = stored.exceptAll(source).count()
    return {
        "target_rows": stored.count(),
        "rows_only_in_source": only_source,
        "rows_only_in_target": only_target,
    }


def bench_table(ctx: Context, rows: int) -> dict[str, Any]:
    table, job = f"bench_reconcile_{rows}", f"bench_reconcile_{rows}"
    target = ctx.section_dir(f"reconcile/{rows}") / "target"
    generation = create_table(ctx, table, rows)
    first = _run(ctx, _argv(ctx, job, table, target), "reconcile-first")
    ctx.log(f"reconcile: {rows} rows generated {generation:.1f}s, loaded {first['seconds']:.1f}s")
    stride = max(2, round(1 / ctx.scale.reconcile_deleted_fraction))
    ctx.postgres.execute(f"DELETE FROM {table} WHERE {KEY} %% %s::bigint = 0", (stride,))
    deleted = rows - _scalar(ctx, f"SELECT count(*) FROM {table}")
    sizes = _bytes(ctx, table)
    _, offset = statements_since(ctx.postgres, 0)
    reconciled = _run(ctx, _argv(ctx, job, table, target, "--reconcile", "true"), "reconcile")
    kinds = _reads_of(_executed_since(ctx, offset), table)
    check = _target_equals_source(ctx, table, target)
    target_files, target_bytes = directory_size(str(target))
    ctx.log(
        f"reconcile: deleted {deleted}, reconcile run {reconciled['seconds']:.1f}s, "
        f"{len(kinds['key'])} key reads, {len(kinds['other'])} other reads"
    )
    full = _run(
        ctx,
        _argv(ctx, job, table, target, "--job-bookmark-option", "job-bookmark-disable"),
        "reconcile-full",
    )
    ctx.log(f"reconcile: full reload {full['seconds']:.1f}s")
    ctx.postgres.execute(f"DROP TABLE {table}")
    keys_only = bool(kinds["key"]) and all(_selects_only_keys(sql) for sql in kinds["key"])
    return {
        "table_rows": rows,
        "deleted_rows": deleted,
        "generation_seconds": round(generation, 2),
        "first_run": first,
        "reconcile_run": reconciled,
        "full_reload": full,
        "statements": {kind: found for kind, found in kinds.items()},
        "bytes": {
            "method": (
                "sum(pg_column_size(id)) and sum(pg_column_size(t.*)) over the table after "
                "the deletes (datum bytes, before the wire protocol's framing); "
                "heap_bytes = pg_relation_size"
            ),
            **sizes,
            "key_share_of_row_bytes": round(sizes["key_bytes"] / sizes["row_bytes"], 4),
        },
        "target_check": check,
        "target_files": target_files,
        "target_bytes": target_bytes,
        "target_equals_source": check["rows_only_in_source"] == 0
        and check["rows_only_in_target"] == 0,
        "summary": {
            "reads_only_key_columns": keys_only and not kinds["other"],
            "key_reads": len(kinds["key"]),
            "unfiltered_row_reads": len(kinds["other"]),
            "reconcile_seconds": reconciled["seconds"],
            "full_reload_seconds": full["seconds"],
            "reconcile_vs_full_reload": round(
                ratio(reconciled["seconds"], full["seconds"]) or 0, 3
            ),
            "records_deleted": reconciled.get("records_deleted"),
        },
    }


def run(ctx: Context) -> dict[str, Any]:
    if ctx.postgres is None:
        raise RuntimeError("the reconcile benchmark needs PostgreSQL (tests.harness.postgres)")
    scale = ctx.scale
    return {
        "description": (
            f"A PostgreSQL table of {scale.reconcile_rows:,} rows loaded into Parquet, "
            f"{scale.reconcile_deleted_fraction:.0%} of its rows deleted, then one run with "
            "--reconcile true, vs a full reload (bookmark disabled) of the same table"
        ),
        "method": (
            "glue_incremental.load.job.main (no lookback: the reconcile run's increment is empty, "
            "its cost is the reconcile's). What was read: the statements PostgreSQL logged "
            "during the run (log_statement=all) and pg_column_size of the key column against "
            "the whole row (statements counted once per execution: a cursor's further fetches are "
            "the same read); Spark's JDBC scan reports no input bytes. Check: the target equals "
            "the source afterwards (exceptAll both ways, every column)"
        ),
        "points": [bench_table(ctx, scale.reconcile_rows)],
    }
