"""``README.md`` (tables, verdicts, scaling) and PNG plots from one run's results."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.benchmarks.common import median

PLOTS = {
    "file_ingestion": "file_ingestion.png",
    "jdbc": "jdbc.png",
    "join": "join.png",
    "watermarks": "watermarks.png",
    "predicates": "predicates.png",
}


# --------------------------------------------------------------------------- scaling


def scaling(sizes: Sequence[float], values: Sequence[float | None]) -> str:
    """How ``values`` grow with ``sizes``: the log-log slope from the first to the last point."""
    pairs = [(s, v) for s, v in zip(sizes, values, strict=True) if v is not None]
    if len(pairs) < 2:
        return "one size only"
    (s0, v0), (s1, v1) = pairs[0], pairs[-1]
    if v0 == v1:
        return "constant"
    if v0 <= 0 or v1 <= 0 or s1 == s0:
        return f"{v0:g} -> {v1:g}"
    slope = math.log(v1 / v0) / math.log(s1 / s0)
    growth = f"x{v1 / v0:.2g} for x{s1 / s0:.3g} size"
    if slope < -0.15:
        kind = "falling (noise)"
    elif slope < 0.15:
        kind = "~constant"
    elif slope < 0.75:
        kind = "sublinear"
    elif slope < 1.25:
        kind = "~linear"
    else:
        kind = "superlinear"
    return f"{kind} ({growth}, slope {slope:.2f})"


def _fmt_seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _fmt_int(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "/".join(_fmt_int(item) for item in value)
    return f"{value:,}"


def _fmt_bytes(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "/".join(_fmt_bytes(item) for item in value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _ok(section: dict[str, Any] | None) -> bool:
    return bool(section) and section.get("status") == "ok" and bool(section.get("points"))


def _verdict_word(verdict: dict[str, Any]) -> str:
    if verdict.get("kind") == "report":
        return "reported (no threshold)"
    if verdict["met"] is None and verdict.get("why") == "judged at full scale only":
        return "not judged (smoke scale)"
    return {True: "**met**", False: "**MISSED**", None: "no figure"}[verdict["met"]]


def target_lines(results: dict[str, Any]) -> list[str]:
    return [
        f"[{_verdict_word(v).strip('*')}] {v['section']}: {v['target']} -- {v['measured']}"
        for v in results.get("targets", [])
    ]


# --------------------------------------------------------------------------- sections


def _files_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    points = section["points"]
    sizes = [p["history_files"] for p in points]
    rows = []
    for p in points:
        s = p["summary"]
        inc = p["incremental"]
        for label, runs, method in (
            ("ours, default settings (detect)", inc["ours"], "ours"),
            ("ours, --partition_moves ignore", inc.get("ours_ignore") or [], "ours_ignore"),
            ("Spark AvailableNow", inc["available_now"], "available_now"),
        ):
            if not runs:
                continue
            rows.append(
                [
                    _fmt_int(p["history_files"]),
                    label,
                    _fmt_seconds(s[method]["seconds_median"]),
                    _fmt_int(runs[-1]["files_listed"]),
                    _fmt_int([run["files_read"] for run in runs]),
                    _fmt_bytes(runs[-1]["source_bytes_read"]),
                    _fmt_bytes(s[method]["fs_bytes_read_median"]),
                    _fmt_int(runs[-1]["spark_jobs"]),
                    _fmt_int(runs[-1].get("py4j_round_trips")),
                    _fmt_int(runs[-1].get("filesystems_opened")),
                ]
            )
        full = p["full_reload"]
        for label, run in (
            ("full reload (job, bookmark disabled)", full["job_bookmark_disabled"]),
            ("full reload (plain Spark read + overwrite)", full["plain_spark"]),
            ("full reload (hand-written: latest per key, overwrite)", full.get("hand_written")),
        ):
            if run is None:  # results recorded before the hand-written anchor
                continue
            rows.append(
                [
                    _fmt_int(p["history_files"]),
                    label,
                    _fmt_seconds(run["seconds"]),
                    _fmt_int(run["files_listed"]),
                    _fmt_int(run["files_read"]),
                    _fmt_bytes(run["source_bytes_read"]),
                    _fmt_bytes(run["fs_bytes_read"]),
                    _fmt_int(run["spark_jobs"]),
                    _fmt_int(run.get("py4j_round_trips")),
                    _fmt_int(run.get("filesystems_opened")),
                ]
            )
    out += _table(
        [
            "history files",
            "method",
            "wall s (median)",
            "files listed",
            "files read (per run)",
            "source bytes read",
            "all bytes read (JVM fs)",
            "Spark jobs",
            "py4j round trips",
            "file systems opened",
        ],
        rows,
    )
    ratio_rows = [
        [
            _fmt_int(p["history_files"]),
            _fmt_seconds(p["ours_plan_only"]["seconds"]),
            f"{p['summary']['ours_vs_available_now_time']:.2f}x",
            _ratio_text(p["summary"].get("ignore_vs_available_now_time")),
            f"{p['summary']['full_reload_vs_ours_speedup']:.1f}x",
            f"{p['summary']['full_reload_job_vs_ours_speedup']:.1f}x",
            _fmt_seconds(p["first_run"]["ours"]["seconds"]),
            _fmt_seconds(p["first_run"]["available_now"]["seconds"]),
            _fmt_seconds((p["first_run"].get("plain_spark") or {}).get("seconds")),
            _ratio_text(p["summary"].get("first_run_vs_plain")),
            _ratio_text(p["summary"].get("full_reload_vs_plain")),
            _ratio_text(p["summary"].get("first_run_vs_hand_written")),
            _ratio_text(p["summary"].get("full_reload_vs_hand_written")),
            _fmt_bytes(p["incremental"]["available_now"][-1].get("checkpoint_source_log_bytes")),
            "ok" if p["row_check_ok"] else f"MISMATCH {p['row_check']}",
        ]
        for p in points
    ]
    out += _table(
        [
            "history files",
            "ours: listing + planning only (dry run) s",
            "ours (detect) / AvailableNow time",
            "ours (ignore) / AvailableNow time",
            "full reload (faster one) / ours",
            "full reload (job) / ours",
            "first run ours s",
            "first run AvailableNow s",
            "first run plain Spark s",
            "first run ours / plain",
            "full reload job / plain",
            "first run ours / hand-written (target <= 1.2x)",
            "full reload job / hand-written (target <= 1.2x)",
            "AvailableNow checkpoint file log",
            "row counts (source = target = sink)",
        ],
        ratio_rows,
    )
    memory = points[-1].get("memory")
    if memory:
        out += _memory_table(
            memory, f"Driver memory at history {points[-1]['history_files']:,} (one run each):"
        )
    ours = [p["summary"]["ours"]["seconds_median"] for p in points]
    stream = [p["summary"]["available_now"]["seconds_median"] for p in points]
    full = [p["summary"]["full_reload_job_seconds"] for p in points]
    plain = [p["summary"]["full_reload_plain_seconds"] for p in points]
    listed = [p["incremental"]["ours"][-1]["files_listed"] for p in points]
    stream_listed = [p["incremental"]["available_now"][-1]["files_listed"] for p in points]
    read = [p["incremental"]["ours"][-1]["files_read"] for p in points]
    ours_bytes = [p["summary"]["ours"]["fs_bytes_read_median"] for p in points]
    label = "history " + " / ".join(f"{n:,}" for n in sizes)
    summary += [
        _row(
            "1",
            "ours: files read per run",
            f"{label}: {_fmt_int(read)}",
            sizes,
            read,
            "linear in the delta; constant in history",
        ),
        _row(
            "1",
            "ours: files listed per run",
            _fmt_int(listed),
            sizes,
            listed,
            "files of directories changed within the bookmark's band (15 min: here the earlier "
            "repeats' batches too) + one probe directory: constant in history",
        ),
        _row(
            "1",
            "AvailableNow: files listed per run",
            _fmt_int(stream_listed),
            sizes,
            stream_listed,
            "linear in history (the whole path, on every run)",
        ),
        _row(
            "1",
            "ours: wall s per run",
            _series(ours),
            sizes,
            ours,
            "fixed cost + delta (default detect: the key lookup reads the key index, not the "
            "target)",
        ),
        _row(
            "1",
            "ours: all bytes read per run",
            _fmt_bytes(ours_bytes),
            sizes,
            ours_bytes,
            "new files + the affected target partitions (delta)",
        ),
        _row(
            "1",
            "AvailableNow: wall s per run",
            _series(stream),
            sizes,
            stream,
            "fixed cost + listing: linear in history",
        ),
        _row("1", "full reload (job): wall s", _series(full), sizes, full, "linear in history"),
        _row(
            "1",
            "full reload (plain Spark): wall s",
            _series(plain),
            sizes,
            plain,
            "linear in history",
        ),
    ]
    if memory:
        summary.append(
            _memory_row(
                "1",
                "ours: driver memory at the largest history",
                memory.get("ours_incremental") or {},
                "listing held in Python: linear in files listed (constant in history); bookmark "
                "state bounded (band, tracked directories)",
            )
        )


def _row(
    number: str,
    figure: str,
    measured: str,
    sizes: Sequence[float],
    values: Sequence[Any],
    expected: str,
) -> list[str]:
    return [number, figure, measured, scaling(sizes, values), expected]


def _series(values: Sequence[float | None]) -> str:
    return " / ".join(_fmt_seconds(value) for value in values)


def _memory_row(number: str, figure: str, figures: dict[str, Any], expected: str) -> list[str]:
    """A summary row for one run's driver memory peaks (measured at one size only)."""
    measured = (
        f"JVM heap peak {figures.get('jvm_heap_peak_mib', 0):.0f} MiB, Python RSS peak "
        f"{figures.get('python_rss_peak_mib', 0):.0f} MiB"
    )
    return [number, figure, measured, "one size", expected]


def _memory_table(memory: dict[str, Any], heading: str) -> list[str]:
    """``heading``, then one row per measured run (peak and growth of JVM heap and Python RSS)."""
    rows = []
    method = ""
    for name, figures in memory.items():
        if not figures:
            continue
        method = figures["method"]
        rows.append(
            [
                name.replace("_", " "),
                f"{figures['jvm_heap_peak_mib']:.0f}",
                f"{figures['jvm_heap_growth_mib']:.0f}",
                f"{figures['python_rss_peak_mib']:.0f}",
                f"{figures['python_rss_growth_mib']:.0f}",
            ]
        )
    lines = _table(
        [
            "run",
            "JVM heap peak MiB",
            "JVM heap growth MiB",
            "Python RSS peak MiB",
            "Python RSS growth MiB",
        ],
        rows,
    )
    return [heading, "", *lines, f"Method: {method}.", ""]


def _jdbc_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    points = section["points"]
    rows = []
    for p in points:
        for index, run in enumerate(p["incremental"], 1):
            rows.append(
                [
                    _fmt_int(p["table_rows"]),
                    f"incremental #{index}",
                    _fmt_seconds(run["seconds"]),
                    _fmt_int(run["records_read"]),
                    _fmt_int(run["expected_rows"]),
                    _fmt_int(run["changed_rows"]),
                    _fmt_int(run["lookback_window_rows"]),
                    f"{run['records_read'] / run['table_rows']:.2%}",
                    _fmt_int(run["partitions_written"]),
                ]
            )
        full = p["full_reload"]
        rows.append(
            [
                _fmt_int(p["table_rows"]),
                "full reload (bookmark disabled)",
                _fmt_seconds(full["seconds"]),
                _fmt_int(full["records_read"]),
                _fmt_int(full["table_rows"]),
                "-",
                "-",
                f"{full['records_read'] / full['table_rows']:.0%}",
                _fmt_int(full["partitions_written"]),
            ]
        )
    out += _table(
        [
            "table rows",
            "run",
            "wall s",
            "rows read",
            "rows PostgreSQL counted",
            "changed",
            "in lookback",
            "share of table",
            "partitions written",
        ],
        rows,
    )
    query = points[-1]["incremental"][-1].get("query")
    if query:
        out += ["Query the database received for the last incremental run:", "", f"    {query}", ""]
    sizes = [p["table_rows"] for p in points]
    read = [p["summary"]["rows_read"][-1] for p in points]
    inc = [p["summary"]["incremental_seconds_median"] for p in points]
    full_s = [p["summary"]["full_reload_seconds"] for p in points]
    changed = [p["summary"]["changed_rows"][-1] for p in points]
    window = [p["summary"]["lookback_window_rows"][-1] for p in points]
    summary += [
        _row(
            "2",
            "rows read per incremental run (the delta is 1% of the table, so it grows too)",
            "table "
            + " / ".join(f"{n:,}" for n in sizes)
            + f": {_fmt_int(read)} (= {_fmt_int(changed)} changed + {_fmt_int(window)} "
            "in the lookback)",
            sizes,
            read,
            "linear in the delta (changed + lookback window), not in the table",
        ),
        _row(
            "2",
            "rows read / (changed + lookback rows PostgreSQL counted)",
            " / ".join(
                f"{p['summary']['rows_read'][-1] / p['summary']['expected_rows'][-1]:.2f}"
                for p in points
            ),
            sizes,
            [p["summary"]["rows_read"][-1] / p["summary"]["expected_rows"][-1] for p in points],
            "1 at every size",
        ),
        _row(
            "2",
            "incremental: wall s",
            _series(inc),
            sizes,
            inc,
            "linear in the delta + rewrite of the affected partitions",
        ),
        _row("2", "full reload: wall s", _series(full_s), sizes, full_s, "linear in the table"),
        [
            "2",
            "full reload / incremental",
            " / ".join(
                f"{p['summary']['full_reload_vs_incremental_speedup']:.1f}x" for p in points
            ),
            "",
            "grows with the table",
        ],
    ]


def _join_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    points = section["points"]
    rows = [
        [
            _fmt_int(p["partitions"]),
            _fmt_int(p["affected_partitions"]),
            _fmt_seconds(p["incremental"]["seconds"]),
            _fmt_seconds(p["full"]["seconds"]),
            f"{p['summary']['speedup']:.1f}x",
            _fmt_bytes(p["incremental"]["input_bytes"]),
            _fmt_bytes(p["full"]["input_bytes"]),
            f"{p['summary']['bytes_share']:.2%}",
            "identical" if p["output_identical"] else "DIFFERENT",
        ]
        for p in points
    ]
    out += _table(
        [
            "partitions per side",
            "affected",
            "incremental s",
            "full recompute s",
            "speedup",
            "incremental input bytes",
            "full input bytes",
            "bytes share",
            "output",
        ],
        rows,
    )
    memory = points[-1].get("memory")
    if memory:
        out += _memory_table(memory, f"Driver memory at {points[-1]['partitions']:,} partitions:")
    sizes = [p["partitions"] for p in points]
    inc = [p["incremental"]["seconds"] for p in points]
    full = [p["full"]["seconds"] for p in points]
    inc_bytes = [p["incremental"]["input_bytes"] for p in points]
    full_bytes = [p["full"]["input_bytes"] for p in points]
    summary += [
        _row(
            "3",
            "incremental join: wall s",
            _series(inc),
            sizes,
            inc,
            "affected partitions' data + listing both sides (linear in partitions)",
        ),
        _row("3", "full recompute: wall s", _series(full), sizes, full, "linear in the data"),
        _row(
            "3",
            "incremental input bytes",
            _fmt_bytes(inc_bytes),
            sizes,
            inc_bytes,
            "linear in the affected partitions' data",
        ),
        _row(
            "3",
            "full recompute input bytes",
            _fmt_bytes(full_bytes),
            sizes,
            full_bytes,
            "linear in the data",
        ),
    ]
    if memory:
        summary.append(
            _memory_row(
                "3",
                "incremental join: driver memory at the largest size",
                memory.get("incremental") or {},
                "both sides' listings in Python: linear in files listed",
            )
        )


def _watermarks_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    points = section["points"]
    rows = []
    for p in points:
        for call in ("get_watermark", "commit"):
            figures = p[call]
            rows.append(
                [
                    _fmt_int(p["history_items_stored"]),
                    call,
                    "/".join(str(v) for v in figures["requests_per_call"]),
                    ", ".join(figures["operations"]),
                    f"{figures['latency_ms_p50']:.1f}",
                    f"{figures['latency_ms_p99']:.1f}",
                    figures["samples"],
                ]
            )
    out += _table(
        ["history items", "call", "requests per call", "operations", "p50 ms", "p99 ms", "calls"],
        rows,
    )
    sizes = [p["history_items"] for p in points]
    gets = [p["get_watermark"]["requests_per_call_max"] for p in points]
    commits = [p["commit"]["requests_per_call_max"] for p in points]
    p50 = [p["get_watermark"]["latency_ms_p50"] for p in points]
    commit_p50 = [p["commit"]["latency_ms_p50"] for p in points]
    summary += [
        _row(
            "4",
            "requests per get_watermark",
            "history " + " / ".join(f"{n:,}" for n in sizes) + f": {_fmt_int(gets)}",
            sizes,
            gets,
            "constant (one GetItem of the STATE item)",
        ),
        _row(
            "4",
            "requests per commit",
            _fmt_int(commits),
            sizes,
            commits,
            "constant (one TransactWriteItems)",
        ),
        _row(
            "4", "get_watermark p50 ms", " / ".join(f"{v:.1f}" for v in p50), sizes, p50, "constant"
        ),
        _row(
            "4",
            "commit p50 ms (DynamoDB Local)",
            " / ".join(f"{v:.1f}" for v in commit_p50),
            sizes,
            commit_p50,
            "constant (one TransactWriteItems; local latencies are context)",
        ),
    ]


def _predicates_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    points = section["points"]
    rows = []
    for p in points:
        for label, key in (("per-value collect loop", "seed_001"), ("ours", "ours")):
            figures = p[key]
            rows.append(
                [
                    _fmt_int(p["partitions"]),
                    label,
                    figures["spark_jobs"],
                    figures["collects"],
                    _fmt_seconds(figures["seconds"]),
                    _fmt_int(figures["predicate_chars"]),
                    "yes" if p["same_partitions"] else "NO",
                ]
            )
    out += _table(
        [
            "affected partitions",
            "method",
            "Spark jobs",
            "collects",
            "wall s",
            "predicate chars",
            "same partitions",
        ],
        rows,
    )
    sizes = [p["partitions"] for p in points]
    ours_jobs = [p["ours"]["spark_jobs"] for p in points]
    seed_jobs = [p["seed_001"]["spark_jobs"] for p in points]
    ours_s = [p["ours"]["seconds"] for p in points]
    seed_s = [p["seed_001"]["seconds"] for p in points]
    label = "partitions " + " / ".join(f"{n:,}" for n in sizes)
    summary += [
        _row(
            "5",
            "ours: Spark jobs",
            f"{label}: {_fmt_int(ours_jobs)}",
            sizes,
            ours_jobs,
            "constant (one action)",
        ),
        _row(
            "5",
            "per-value collect loop: Spark jobs",
            _fmt_int(seed_jobs),
            sizes,
            seed_jobs,
            "linear in first-level partitions (2 collects each)",
        ),
        _row(
            "5",
            "ours: wall s",
            _series(ours_s),
            sizes,
            ours_s,
            "one action + string building linear in partitions",
        ),
        _row(
            "5",
            "per-value collect loop: wall s",
            _series(seed_s),
            sizes,
            seed_s,
            "linear in first-level partitions",
        ),
    ]


def _ratio_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


NOTES = (
    "What a run of the load job includes (section 1 'ours', section 2): taking the job's "
    "lease, reading the watermark, listing and planning, reading the new files with the declared schema, "
    "merging by primary key into the affected target partitions (section 1 runs the default, "
    "--partition_moves detect: the partitions holding older versions of the incoming keys are "
    "looked up in the target's key index, a few small key-sorted files, not the target; its "
    "'ignore' row skips the lookup), staging and publishing the affected "
    "partitions and their index segment, committing the watermark and publishing CloudWatch "
    "metrics. Spark's "
    "AvailableNow run appends the new rows (schema given, no merge, no lease, no metrics).",
    "Where a first run and a full reload spend their time (cProfile of the driver and a count "
    "of py4j calls, 5,000 files, before issue 15's fixes): creating the DataFrame of the "
    "listed files took 59% (52.6 s of 88.9 s on a loaded machine): Spark looked up the 5,000 "
    "explicit file paths in a listing job of one task per path (parallelPartitionDiscovery "
    "parallelism defaults to 10,000) and inferred the JSON schema by reading every file; the "
    "read itself (persisted, counted) 15%; merge + staging write 14%; counting the staged "
    "rows from Parquet footers 3%; publishing 200 partitions file by file over py4j 2.5% "
    "(half of it one mkdirs per file); listing the source through py4j one directory at a "
    "time 3% (56,000 py4j round trips, mostly FileStatus getters). Fixed: the path lookups "
    "run in a few tasks per core (sources/bulk.py), one mkdirs per directory, rows written "
    "counted while staging (a Spark Observation, no second read).",
    "The same at 20,000 files, after those fixes (cProfile, full reload, a loaded machine: "
    "shares, not seconds): listing the source through py4j 18% (801 directories, five py4j "
    "calls per file), the read into the cache 19%, the staging write of data and key index "
    "31%, publishing 14% (3,206 files: Spark wrote one file per writer task and partition), "
    "the index base 7%, the 20,000 path lookups 7%; an incremental run at that history spent "
    "1.6 s of 5.4 s finding the target's schema (it listed all 800 target partitions over "
    "py4j to read one footer). Fixed in this round: a file: source is listed in Python "
    "(os.scandir, checked equal to Hadoop's listing by a test), rows are repartitioned by "
    "the partition columns before the write (one file per partition), the schema comes from "
    "the first data file found, the key lookup is a literal filter on the index, and the job "
    "is given the JSON schema (--source_schema) as plain Spark and AvailableNow are. Not "
    "changed: the merge by key, which a first run and a reload need (a key may be delivered "
    "twice), and the publish file by file (the write-ahead protocol's moves).",
    "After those, at 20,000 files (Spark's event log per job and cProfile, a quiet machine): "
    "a full reload took 81 s against plain Spark's 37 s. Handing Spark the 20,100 paths cost "
    "9.4 s (py4j converts a Python list one call per element), the staging write 17 s in one "
    "task (AQE coalesced the small repartition shuffle to one partition, so one task wrote "
    "all 800 partition files alone), and the publish 16 s plus 5 s of partition listings "
    "(about 35,000 py4j calls of FileStatus getters and sizes on the local file system); "
    "the key index read of the staged data ran a listing job of 800 tasks (3.5 s). Fixed: "
    "the paths cross in one call as a Java String[], the write keeps "
    "spark.sql.shuffle.partitions tasks (an explicit count AQE does not coalesce), the "
    "writer reads file: listings and sizes in Python (local_files.py; moves and deletes stay "
    "with Hadoop, which keeps the .crc checksums; a test compares every answer with "
    "Hadoop's), and Spark's listings inside the job take a few tasks per core. The same "
    "profile then: 37 s against plain Spark's 34 s; what remains is the read into the cache "
    "(10.6 s, the same file opens plain Spark pays inside its single job), the merge and the "
    "staging write (14 s), the publish (3 s) and the key index (1.7 s).",
    "Full reloads are measured two ways: the job with --job-bookmark-disable (read "
    "everything, de-duplicate, replace the target) and plain Spark (read everything, "
    "overwrite). Speed-up targets are judged against the faster of the two.",
    "Latencies of section 4 are those of DynamoDB Local (a JVM process on this shared "
    "machine): context, not DynamoDB's. Request counts are the library's and hold on any "
    "endpoint.",
    "Memory: sampled every 100 ms in a thread (JVM heap used via MemoryMXBean, which in "
    "local mode covers driver and executors; Python RSS via /proc/self/statm). Heap 'used' "
    "includes garbage not yet collected, so it is an upper bound of what was live.",
    "Spark jobs are counted per run with setJobGroup and statusTracker().getJobIdsForGroup "
    "(an AvailableNow query runs its batches under its run id's group).",
)


INTRO_NOTES = {
    "iceberg": " The files are judged (targets above); the JDBC rounds are for the record."
}


def _iceberg_files(files: dict[str, Any], out: list[str]) -> None:
    def row(run: str, method: str, figures: list[dict[str, Any]]) -> list[str]:
        seconds = median([f["seconds"] for f in figures])
        jobs = median([f["spark_jobs"] for f in figures])
        return [run, method, _fmt_seconds(seconds), _fmt_int(jobs), _fmt_int(len(figures))]

    first, rounds = files["first_load"], files["incremental"]
    rows = [
        row("first load", "ours", [first["ours"]]),
        row("first load", "hand-written (latest per key, create)", [first["hand_written"]]),
        row(f"backfill, {files['batches']} batches", "ours", [files["backfill"]]),
        row("incremental", "ours", rounds["ours"]),
        row("incremental", "MERGE INTO (latest per key)", rounds["merge_into"]),
    ]
    out += _table(["run", "method", "wall s (median)", "Spark jobs (median)", "runs"], rows)
    out += ["", f"Tables equal after every round: {files['tables_equal']}.", ""]


def _iceberg_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    if section.get("files"):
        _iceberg_files(section["files"], out)
    rows = []
    for p in section["points"]:
        for fmt in ("parquet", "iceberg"):
            figures = p[fmt]
            rows.append(
                [
                    p["run"],
                    fmt,
                    _fmt_seconds(figures["seconds"]),
                    _fmt_int(figures["records_read"]),
                    _fmt_int(figures["target_bytes"]),
                    _fmt_int(figures.get("bytes_committed")),
                ]
            )
    out += _table(["run", "target", "wall s", "rows read", "target bytes", "bytes committed"], rows)


def _s3_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    rows = []
    for p in section["points"]:
        for mode in p["modes"]:
            rows.append(
                [
                    _fmt_int(p["history_objects"]),
                    mode["mode"],
                    _fmt_int(mode["requests_median"]),
                    _fmt_seconds(mode["plan_seconds_median"]),
                    _fmt_seconds(mode.get("plan_seconds_without_requests_median")),
                    _fmt_seconds(p.get("empty_list_request_seconds")),
                    _fmt_int(mode["files_listed"]),
                    _fmt_int(mode["files_planned"]),
                ]
            )
    out += _table(
        [
            "history objects",
            "discovery",
            "requests",
            "plan s",
            "plan s without requests",
            "one empty list request s",
            "objects listed",
            "planned",
        ],
        rows,
    )
    sizes = [p["history_objects"] for p in section["points"]]
    for label in ("full listing", "ordered listing", "notifications"):
        values = [
            next(m for m in p["modes"] if m["mode"] == label)["requests_median"]
            for p in section["points"]
        ]
        out.append(f"- {label}: requests {scaling(sizes, values)}")
    real = section.get("real_run")
    if real:
        out.append(
            f"- one real load run at {real['history_objects']:,} objects (Spark through S3A): "
            f"first run {real['first_run_seconds']:.1f}s, incremental run "
            f"{real['incremental_run_seconds']:.1f}s reading {real['files_read']} files "
            f"({real['discovery']}, {real['listing_requests']} requests)"
        )
    out.append("")


def _aggregation_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    rows = [
        [
            _fmt_int(p["partitions"]),
            _fmt_int(p["affected_partitions"]),
            _fmt_seconds(p["incremental"]["seconds"]),
            _fmt_seconds(p["full"]["seconds"]),
            f"{p['summary']['speedup']:.1f}x",
            "identical" if p["output_identical"] else "DIFFERENT",
        ]
        for p in section["points"]
    ]
    out += _table(
        ["days", "affected", "incremental s", "full recompute s", "speedup", "output"], rows
    )


def _batches_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    rows = [
        [
            _fmt_int(p["files"]),
            _fmt_int(p.get("rows")),
            label,
            _fmt_int(p["files_per_batch"] if label == "bounded" else None),
            _fmt_seconds(p[label]["seconds"]),
            _fmt_int(p[label]["files_read"]),
            _fmt_int(p[label].get("spark_jobs")),
            _fmt_int(p[label].get("dynamodb_requests")),
            _fmt_seconds(p.get("fixed_seconds_per_batch") if label == "bounded" else None),
        ]
        for p in section["points"]
        for label in ("unbounded", "bounded")
    ]
    out += _table(
        [
            "files",
            "rows",
            "run",
            "files per batch",
            "wall s",
            "files read",
            "Spark jobs",
            "DynamoDB requests",
            "fixed s per batch",
        ],
        rows,
    )


def _reconcile_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    rows = []
    for p in section["points"]:
        sizes = p["bytes"]
        for label, run in (("reconcile", p["reconcile_run"]), ("full reload", p["full_reload"])):
            keys = (run.get("keys") or {}).get("source_keys") if label == "reconcile" else None
            rows.append(
                [
                    _fmt_int(p["table_rows"]),
                    label,
                    _fmt_seconds(run["seconds"]),
                    _fmt_int(keys if keys is not None else run["records_read"]),
                    _fmt_bytes(sizes["key_bytes"] if label == "reconcile" else sizes["row_bytes"]),
                    _fmt_int(run.get("records_deleted")),
                    _fmt_int(run.get("partitions_written")),
                ]
            )
    out += _table(
        [
            "table rows",
            "run",
            "wall s",
            "rows read",
            "column bytes read",
            "rows deleted",
            "partitions rewritten",
        ],
        rows,
    )
    for p in section["points"]:
        out.append(
            f"The key read PostgreSQL logged: `{(p['statements']['key'] or ['(none)'])[0].strip()}`; "
            f"other unfiltered reads of the table: {len(p['statements']['other'])}. "
            f"Target afterwards: {'equals' if p['target_equals_source'] else 'DIFFERS FROM'} "
            "the source."
        )
    out.append("")


def _history_section(section: dict[str, Any], out: list[str], summary: list[list[str]]) -> None:
    rows = [
        [
            _fmt_int(p["keys"]),
            _fmt_int(p["delivered_rows"]),
            _fmt_int(p["increment_keys"]),
            label,
            _fmt_seconds(p[name]["seconds"]),
            _fmt_int(p[name]["spark_jobs"]),
            _fmt_bytes(p[name]["fs_bytes_read"]),
            _fmt_int(p[name].get("versions_opened")),
            _fmt_int(p[name].get("versions_closed")),
        ]
        for p in section["points"]
        for name, label in (
            ("history", "history run (--history scd2)"),
            ("latest", "latest-version run"),
            ("rebuild", "rebuild from every delivery (plain Spark)"),
        )
    ]
    out += _table(
        [
            "keys",
            "delivered rows",
            "keys updated",
            "run",
            "wall s",
            "Spark jobs",
            "bytes read",
            "versions opened",
            "versions closed",
        ],
        rows,
    )
    for p in section["points"]:
        out.append(
            f"{p['keys']:,} keys: the history target "
            f"{'equals' if p['history_equals_rebuild'] else 'DIFFERS FROM'} the rebuild."
        )
    out.append("")


RENDERERS = {
    "file_ingestion": ("1. File ingestion", _files_section),
    "jdbc": ("2. Incremental load from PostgreSQL", _jdbc_section),
    "join": ("3. Incremental join", _join_section),
    "watermarks": ("4. Watermark store", _watermarks_section),
    "predicates": ("5. Predicate building", _predicates_section),
    "iceberg": (
        "6. Iceberg targets: the load against MERGE INTO by hand, and against Parquet",
        _iceberg_section,
    ),
    "s3_discovery": ("7. Discovery on S3 (local S3 endpoint, not file://)", _s3_section),
    "aggregation": ("8. Aggregation script (custom job API)", _aggregation_section),
    "bounded_batches": (
        "9. Bounded batches: a backfill against one unbounded run",
        _batches_section,
    ),
    "reconcile": ("10. Reconcile (hard deletes) against a full reload", _reconcile_section),
    "history": (
        "11. History (SCD type 2) against a latest-version run and a rebuild",
        _history_section,
    ),
}


# --------------------------------------------------------------------------- plots


def _plots(results: dict[str, Any], output: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:,.10g}")
    written = []
    sections = results["sections"]

    def style(ax: Any, xlabel: str, ylabel: str, title: str = "", *, ylog: bool = True) -> None:
        ax.set(xscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(NullFormatter())
        if ylog:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(output / PLOTS[name], dpi=110)
        plt.close(fig)
        written.append(PLOTS[name])

    files = sections.get("file_ingestion")
    if _ok(files):
        points = files["points"]
        sizes = [p["history_files"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        for label, values in (
            ("ours (incremental)", [p["summary"]["ours"]["seconds_median"] for p in points]),
            ("AvailableNow", [p["summary"]["available_now"]["seconds_median"] for p in points]),
            ("full reload (job)", [p["summary"]["full_reload_job_seconds"] for p in points]),
            ("full reload (plain)", [p["summary"]["full_reload_plain_seconds"] for p in points]),
        ):
            left.plot(sizes, values, marker="o", label=label)
        style(
            left,
            "history files",
            "wall seconds",
            f"Run taking {points[0]['delta_files']} new files",
        )
        for label, values in (
            ("ours: listed", [p["incremental"]["ours"][-1]["files_listed"] for p in points]),
            ("ours: read", [p["incremental"]["ours"][-1]["files_read"] for p in points]),
            (
                "AvailableNow: listed",
                [p["incremental"]["available_now"][-1]["files_listed"] for p in points],
            ),
            (
                "AvailableNow: read (dashed)",
                [p["incremental"]["available_now"][-1]["files_read"] for p in points],
            ),
            (
                "full reload: read",
                [p["full_reload"]["job_bookmark_disabled"]["files_read"] for p in points],
            ),
        ):
            dashed = "dashed" in label
            right.plot(
                sizes,
                values,
                marker="x" if dashed else "o",
                linestyle="--" if dashed else "-",
                label=label,
            )
        style(right, "history files", "files", "Files listed / read per run")
        save(fig, "file_ingestion")

    jdbc = sections.get("jdbc")
    if _ok(jdbc):
        points = jdbc["points"]
        sizes = [p["table_rows"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        left.plot(
            sizes, [p["summary"]["rows_read"][-1] for p in points], marker="o", label="incremental"
        )
        left.plot(
            sizes,
            [p["summary"]["full_reload_rows_read"] for p in points],
            marker="o",
            label="full reload",
        )
        style(left, "table rows", "rows read", "Rows read per run")
        right.plot(
            sizes,
            [p["summary"]["incremental_seconds_median"] for p in points],
            marker="o",
            label="incremental",
        )
        right.plot(
            sizes,
            [p["summary"]["full_reload_seconds"] for p in points],
            marker="o",
            label="full reload",
        )
        style(right, "table rows", "wall seconds", "Time per run")
        save(fig, "jdbc")

    join = sections.get("join")
    if _ok(join):
        points = join["points"]
        sizes = [p["partitions"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        left.plot(
            sizes, [p["incremental"]["seconds"] for p in points], marker="o", label="incremental"
        )
        left.plot(sizes, [p["full"]["seconds"] for p in points], marker="o", label="full recompute")
        style(left, "partitions per side", "wall seconds", "Time per run")
        right.plot(
            sizes,
            [p["incremental"]["input_bytes"] for p in points],
            marker="o",
            label="incremental",
        )
        right.plot(
            sizes, [p["full"]["input_bytes"] for p in points], marker="o", label="full recompute"
        )
        style(right, "partitions per side", "input bytes", "Bytes read per run")
        save(fig, "join")

    marks = sections.get("watermarks")
    if _ok(marks):
        points = marks["points"]
        sizes = [p["history_items"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        for call in ("get_watermark", "commit"):
            left.plot(
                sizes,
                [p[call]["requests_per_call_max"] for p in points],
                marker="o" if call == "get_watermark" else "x",
                linestyle="-" if call == "get_watermark" else "--",
                label=call,
            )
            right.plot(
                sizes, [p[call]["latency_ms_p50"] for p in points], marker="o", label=f"{call} p50"
            )
            right.plot(
                sizes,
                [p[call]["latency_ms_p99"] for p in points],
                marker="x",
                linestyle="--",
                label=f"{call} p99",
            )
        style(left, "history items", "HTTP requests per call", "Requests per call", ylog=False)
        left.set_ylim(0, 3)
        style(right, "history items", "latency ms (DynamoDB Local)", "Latency per call")
        save(fig, "watermarks")

    preds = sections.get("predicates")
    if _ok(preds):
        points = preds["points"]
        sizes = [p["partitions"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        for label, key in (("per-value collect loop", "seed_001"), ("ours", "ours")):
            left.plot(sizes, [p[key]["spark_jobs"] for p in points], marker="o", label=label)
            right.plot(sizes, [p[key]["seconds"] for p in points], marker="o", label=label)
        style(left, "affected partitions", "Spark jobs", "Spark jobs")
        style(right, "affected partitions", "wall seconds", "Time")
        save(fig, "predicates")
    return written


# --------------------------------------------------------------------------- README


def render(results: dict[str, Any], plots: Sequence[str] = ()) -> str:
    meta = results["meta"]
    scale = meta["scale"]["name"]
    machine = meta["machine"]
    minutes = meta["total_wall_seconds"] / 60
    out = [
        "# Benchmarks",
        "",
        f"Generated by `make bench` (`python -m tests.benchmarks.run --scale {scale}`) on "
        f"{meta['started_at']} at commit `{meta.get('git_commit') or '?'}`; "
        f"total wall time **{minutes:.1f} min**. Everything is in "
        "[`results.json`](results.json); this file and the plots are generated from it.",
        "",
        f"Machine: {machine['cpus']} CPUs, {machine['memory_gib']} GiB, shared with other "
        "test runs (load average at start "
        f"{machine['load_average_at_start']}, at end {meta.get('load_average_at_end')}). "
        f"One SparkSession ({meta['spark']['master']}, Spark {meta['spark']['version']}, "
        f"{meta['spark']['shuffle_partitions']} shuffle partitions, UI off), "
        f"the {meta.get('endpoint', 'local')} endpoint and a local PostgreSQL 15. "
        "**Ratios measured in the same run are the result; absolute seconds are context "
        "only** (a shared 2-core machine).",
        "",
    ]
    merged = _current_merged_runs(meta.get("merged_runs") or [])
    if merged:
        out += [
            "Sections measured later by partial runs (`--merge-into`), each with its own "
            "commit, date and load (given in its section): "
            + "; ".join(
                f"{', '.join(run['sections'])} at `{run.get('git_commit') or '?'}` on "
                f"{run.get('started_at')}"
                for run in merged
            )
            + ".",
            "",
        ]
    dirty = meta.get("library_files_uncommitted") or []
    if dirty:
        out += [
            "The library had uncommitted changes when this ran (the results describe the "
            "working tree): " + ", ".join(f"`{path}`" for path in dirty) + ".",
            "",
        ]
    out += [
        "## Targets",
        "",
    ]
    out += _table(
        ["section", "target", "measured", "verdict", "why (if missed)"],
        [
            [v["section"], v["target"], v["measured"], _verdict_word(v), v["why"]]
            for v in results.get("targets", [])
        ],
    )
    body: list[str] = []
    summary: list[list[str]] = []
    for name, (title, renderer) in RENDERERS.items():
        section = results["sections"].get(name)
        body += [f"## {title}", ""]
        if section is None:
            body += ["Not run.", ""]
            continue
        if section.get("status") == "pending":
            body += [f"**Pending**: {section.get('reason', '')}.", ""]
            summary.append([title[0], "(pending)", section.get("reason", ""), ""])
            continue
        if not _ok(section):
            body += [f"**Error**: `{section.get('error', 'no points')}`", ""]
            summary.append([title[0], "(error)", section.get("error", ""), ""])
            continue
        body += [section["description"] + "." + INTRO_NOTES.get(name, ""), ""]
        body += _measured_by(section, meta)
        renderer(section, body, summary)
        if section.get("method"):
            body += [f"Method: {section['method']}", ""]
        if PLOTS.get(name) in plots:
            body += [f"![{title}]({PLOTS[name]})", ""]
        body += [f"Section wall time: {section.get('section_seconds', 0):.0f} s.", ""]
    out += ["## Summary and scaling", ""]
    out += [
        "Scaling is measured: the log-log slope of the figure between the smallest and the "
        "largest size (0 = constant, 1 = linear in the size).",
        "",
    ]
    out += _table(
        ["#", "figure", "measured (by size)", "measured scaling", "expected by design"], summary
    )
    out += body
    notes = [*NOTES, *(results.get("notes") or [])]
    out += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(out)


def _measured_by(section: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    """A merged section's own run, when it is not the run the header describes."""
    run = section.get("run")
    if not run or (
        run.get("git_commit") == meta.get("git_commit")
        and run.get("started_at") == meta.get("started_at")
    ):
        return []
    dirty = run.get("library_files_uncommitted") or []
    return [
        f"Measured by a partial run at commit `{run.get('git_commit') or '?'}` on "
        f"{run.get('started_at')} ({run.get('scale')} scale; load average at start "
        f"{run.get('load_average_at_start')}, at end {run.get('load_average_at_end')}"
        + (f"; uncommitted: {', '.join(dirty)}" if dirty else "")
        + ").",
        "",
    ]


# Where runs spend their time, by step, before and after a change: written by hand from
# ``python -m tests.benchmarks.profile``'s tables, appended to the README as they are.
PROFILES = "profiles.md"


def write(results: dict[str, Any], output: Path) -> None:
    output.mkdir(parents=True, exist_ok=True)
    for stale in PLOTS.values():
        (output / stale).unlink(missing_ok=True)
    plots = _plots(results, output)
    readme = render(results, plots)
    profiles = output / PROFILES
    if profiles.is_file():  # measured apart (``python -m tests.benchmarks.profile``)
        readme += "\n" + profiles.read_text()
    (output / "README.md").write_text(readme)


def _current_merged_runs(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The merged runs whose sections are still in the results: a section measured again
    by a later partial run is named with that run only."""
    current: list[dict[str, Any]] = []
    seen: set[str] = set()
    for run in reversed(history):
        sections = [name for name in run["sections"] if name not in seen]
        seen.update(sections)
        if sections:
            current.append({**run, "sections": sections})
    return current[::-1]
