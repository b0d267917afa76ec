"""2. Incremental load from PostgreSQL: rows read per run, and time against a full reload.

A table of ``rows`` orders spread evenly over ``jdbc_days`` days is generated
server-side (``INSERT ... SELECT generate_series``), with an index on the
watermark column ``updated_at`` as an incremental source would have. The load
job (``glue_incremental.load.job.main``) takes it into Parquet partitioned by
``order_day``: a first run (full load), then, per round, ``jdbc_changed_fraction``
of the table changes (half updates of rows from the last five days, half
inserts on a new day; their new ``updated_at`` values spread over the day
after the previous maximum, as for a daily run) and one incremental run with
``--lookback`` reads it.
Finally a run with ``--job-bookmark-option job-bookmark-disable`` (full reload).

Expected rows per incremental run, counted by PostgreSQL before the run:
``updated_at >= cursor - lookback``, i.e. the changed rows plus the rows
already read that fall in the lookback window (the bound is inclusive).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glue_incremental import aws
from glue_incremental.watermarks import Watermarks

from tests.benchmarks.common import Context, Timer, measured, median, ratio, run_figures

START = datetime(2024, 1, 1, tzinfo=UTC)
RECENT_DAYS = 5


def _secret_id(ctx: Context) -> str:
    """The PostgreSQL credentials as a Secrets Manager secret on the bench's endpoint."""
    pg = ctx.postgres
    name = f"bench/{pg.user}"
    client = aws.client("secretsmanager")
    value = json.dumps({"username": pg.user, "password": pg.password})
    try:
        return client.create_secret(Name=name, SecretString=value)["ARN"]
    except client.exceptions.ResourceExistsException:
        return client.put_secret_value(SecretId=name, SecretString=value)["ARN"]


def _argv(ctx: Context, job: str, table: str, target: Path, *extra: str) -> list[str]:
    pg = ctx.postgres
    return [
        "incremental_load.py",
        "--JOB_NAME",
        job,
        "--source",
        pg.jdbc_url,
        "--source_table",
        table,
        "--source_secret_id",
        _secret_id(ctx),
        "--watermark_column",
        "updated_at",
        "--primary_key",
        "id",
        "--partition_by",
        "order_day",
        "--lookback",
        f"{ctx.scale.jdbc_lookback_hours} hours",
        "--jdbc_num_partitions",
        "2",
        "--jdbc_partition_column",
        "id",
        "--target_path",
        target.as_uri(),
        "--watermarks_table",
        ctx.watermarks_table,
        *extra,
    ]


def _run(ctx: Context, argv: list[str], label: str) -> dict[str, Any]:
    from glue_incremental.load.job import main as load_main

    figures = measured(ctx, label, lambda: load_main(argv, spark=ctx.spark))
    summary = figures.pop("result")
    figures.update(**run_figures(summary), query=summary.get("query"))
    return figures


def _scalar(ctx: Context, sql: str, params: tuple = ()) -> Any:
    return ctx.postgres.execute(sql, params)[0][0]


def create_table(ctx: Context, table: str, rows: int) -> float:
    pg, days = ctx.postgres, ctx.scale.jdbc_days
    with Timer() as timer:
        pg.execute(f"DROP TABLE IF EXISTS {table}")
        pg.execute(
            f"CREATE TABLE {table} (id bigint PRIMARY KEY, order_day date NOT NULL, "
            "updated_at timestamptz NOT NULL, amount numeric(12,2) NOT NULL, note text NOT NULL)"
        )
        step = days * 86_400.0 / rows
        at = "%s::timestamptz + (g - 1) * %s::float8 * interval '1 second'"
        pg.execute(
            f"INSERT INTO {table} SELECT g, (({at}) AT TIME ZONE 'UTC')::date, {at}, "
            "(g %% 100000) / 100.0, md5(g::text) FROM generate_series(1, %s::bigint) AS g",
            (START, step, START, step, rows),
        )
        pg.execute(f"CREATE INDEX ON {table} (updated_at)")
        pg.execute(f"ANALYZE {table}")
    return timer.seconds


def apply_changes(ctx: Context, table: str, rows: int, round_: int) -> int:
    """Update half of the changed share among the last days' rows, insert the other half."""
    changed = max(2, round(rows * ctx.scale.jdbc_changed_fraction))
    updates, inserts = changed // 2, changed - changed // 2
    recent = max(updates, rows * RECENT_DAYS // ctx.scale.jdbc_days)
    stride = max(1, recent // updates)
    top = _scalar(ctx, f"SELECT max(id) FROM {table}")
    base = _scalar(ctx, f"SELECT max(updated_at) FROM {table}")
    pg = ctx.postgres
    pg.execute(
        f"UPDATE {table} SET amount = amount + 1, updated_at = %s::timestamptz"
        " + interval '1 minute' + ((id * 7919) %% 86400) * interval '1 second' WHERE id IN"
        f" (SELECT id FROM {table} WHERE id > %s::bigint AND id %% %s::bigint = %s::bigint"
        " ORDER BY id LIMIT %s::bigint)",
        (base, rows - recent, stride, round_ % stride, updates),
    )
    pg.execute(
        f"INSERT INTO {table} SELECT %s::bigint + g, ((%s::timestamptz + interval '1 day') AT TIME ZONE "
        "'UTC')::date, %s::timestamptz + interval '1 minute' + (g * 86400 / %s::bigint) * interval '1 second',"
        " 1.00, md5(g::text) FROM generate_series(1, %s::bigint) AS g",
        (top, base, base, inserts, inserts),
    )
    return changed


def bench_table(ctx: Context, rows: int) -> dict[str, Any]:
    scale = ctx.scale
    table = f"bench_orders_{rows}"
    job = f"bench_jdbc_{rows}"
    target = ctx.section_dir(f"jdbc/{rows}") / "target"
    generation = create_table(ctx, table, rows)
    ctx.log(f"jdbc: {rows} rows generated in {generation:.1f}s")
    first = _run(ctx, _argv(ctx, job, table, target), "jdbc-first")
    ctx.log(f"jdbc: first run over {rows} rows {first['seconds']:.1f}s")
    store = Watermarks(ctx.watermarks_table)
    runs = []
    for round_ in range(scale.jdbc_repeats):
        cursor = store.get_watermark(job)["watermarks"]["cursor"]
        apply_changes(ctx, table, rows, round_)
        table_rows = _scalar(ctx, f"SELECT count(*) FROM {table}")
        changed = _scalar(ctx, f"SELECT count(*) FROM {table} WHERE updated_at > %s", (cursor,))
        expected = _scalar(
            ctx,
            f"SELECT count(*) FROM {table} WHERE updated_at >= %s::timestamptz - %s::int * "
            "interval '1 hour' OR updated_at IS NULL",
            (cursor, scale.jdbc_lookback_hours),
        )
        run = _run(ctx, _argv(ctx, job, table, target), "jdbc-incremental")
        run.update(
            table_rows=table_rows,
            changed_rows=changed,
            lookback_window_rows=expected - changed,
            expected_rows=expected,
            previous_cursor=cursor.isoformat(),
        )
        runs.append(run)
        ctx.log(
            f"jdbc: {rows} rows, round {round_ + 1}: read {run['records_read']} "
            f"(expected {expected} = {changed} changed + {expected - changed} in the lookback) "
            f"in {run['seconds']:.1f}s"
        )
    full = _run(
        ctx,
        _argv(ctx, job, table, target, "--job-bookmark-option", "job-bookmark-disable"),
        "jdbc-full",
    )
    table_rows = _scalar(ctx, f"SELECT count(*) FROM {table}")
    target_rows = ctx.spark.read.parquet(target.as_uri()).count()
    ctx.log(f"jdbc: full reload of {table_rows} rows {full['seconds']:.1f}s")
    ctx.postgres.execute(f"DROP TABLE {table}")
    incremental_seconds = median([run["seconds"] for run in runs])
    return {
        "table_rows": rows,
        "generation_seconds": round(generation, 2),
        "first_run": first,
        "incremental": runs,
        "full_reload": {**full, "table_rows": table_rows},
        "target_rows_after_full_reload": target_rows,
        "summary": {
            "incremental_seconds_median": round(incremental_seconds, 3),
            "full_reload_seconds": full["seconds"],
            "full_reload_vs_incremental_speedup": round(
                ratio(full["seconds"], incremental_seconds) or 0, 2
            ),
            "rows_read": [run["records_read"] for run in runs],
            "expected_rows": [run["expected_rows"] for run in runs],
            "changed_rows": [run["changed_rows"] for run in runs],
            "lookback_window_rows": [run["lookback_window_rows"] for run in runs],
            "rows_read_share_of_table": [
                round(run["records_read"] / run["table_rows"], 5) for run in runs
            ],
            "full_reload_rows_read": full["records_read"],
        },
    }


def run(ctx: Context) -> dict[str, Any]:
    if ctx.postgres is None:
        raise RuntimeError("the JDBC benchmark needs PostgreSQL (tests.harness.postgres)")
    scale = ctx.scale
    return {
        "description": (
            f"Incremental load of a PostgreSQL table with {scale.jdbc_changed_fraction:.0%} of "
            f"its rows changed per run and a {scale.jdbc_lookback_hours} h lookback, vs a full "
            "reload (bookmark disabled); target Parquet partitioned by order_day"
        ),
        "method": (
            "glue_incremental.load.job.main with --lookback, --jdbc_num_partitions 2 "
            "(--jdbc_partition_column id); rows read = the run summary's records_read; "
            "expected = SELECT count(*) WHERE updated_at >= cursor - lookback, run by "
            "PostgreSQL just before the run (cursor = the committed watermark). Changes: half "
            "updates of rows from the last five days, half inserts on a new day. The table "
            "has an index on updated_at, as an incremental source would."
        ),
        "points": [bench_table(ctx, rows) for rows in sorted(scale.jdbc_rows)],
    }
