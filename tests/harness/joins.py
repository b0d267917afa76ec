"""The incremental join's test world: JSON-lines sides with chosen file times, runs at
chosen clock times, and the pure-Python full recompute every output is compared with."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from glue_incremental.args import BookmarkOption
from glue_incremental.join import JoinJobConfig, JoinSpec, run_join
from glue_incremental.run.context import BookmarkControl, IncrementalRun, hooks
from glue_incremental.watermarks import Watermarks
from pyspark.testing import assertDataFrameEqual

from tests.harness.loads import FixedClock
from tests.harness.targets import partition_values_as_strings

T0 = 1_700_000_000.0
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
OUT_COLUMNS = ["date", "id", "left_value", "amount", "right_value", "label"]
OUT_SCHEMA = (
    "date string, id long, left_value string, amount long, right_value string, label string"
)
_files = itertools.count()


def land(root: Path, partition: str | None, rows: Iterable[Mapping[str, Any]], mtime: float):
    """One JSON-lines file in ``root/date=<partition>/`` modified exactly at ``mtime``."""
    directory = root / f"date={HIVE_NULL if partition is None else partition}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"part-{next(_files):06d}.json"
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
    os.utime(path, (mtime, mtime))
    return path


def config_for(tmp: Path, join_type: str = "inner", **overrides: Any) -> JoinJobConfig:
    options: dict[str, Any] = {
        "left_path": (tmp / "left").as_uri(),
        "right_path": (tmp / "right").as_uri(),
        "left_format": "json",
        "right_format": "json",
        "spec": JoinSpec(("id",), join_type, ("date",)),
        "target_path": (tmp / "target").as_uri(),
    }
    options.update(overrides)
    return JoinJobConfig(**options)


def run_at(
    spark,
    config: JoinJobConfig,
    store: Watermarks,
    *,
    job_name: str,
    run_id: str,
    now: float,
    hook=None,
    option: BookmarkOption = BookmarkOption.ENABLE,
    clock=None,
) -> dict[str, Any]:
    run = IncrementalRun(
        spark=spark,
        job_name=job_name,
        run_id=run_id,
        store=store,
        bookmark=BookmarkControl(option),
        clock=clock or FixedClock(now),
        publish_metrics=False,
    )
    with hooks.installed(hook) if hook else contextlib.nullcontext(), run:
        run_join(run, config)
    return run.summary


def read_output(spark, uri: str):
    """The target as written (partition values as strings), or None if nothing is there."""
    path = Path(uri.removeprefix("file://"))
    if not any(p.suffix == ".parquet" for p in path.rglob("*") if "_staging" not in p.parts):
        return None
    with partition_values_as_strings(spark):
        return spark.read.parquet(uri).select(*OUT_COLUMNS).collect()


def reference(left: list[tuple], right: list[tuple], join_type: str) -> list[tuple]:
    """Pure-Python full recompute: (date, id, value, own) rows per side; dates null-safe."""
    out, matched = [], set()
    for ld, lid, lv, amount in left:
        hits = [(j, r) for j, r in enumerate(right) if r[0] == ld and r[1] == lid]
        for j, (_, _, rv, label) in hits:
            matched.add(j)
            out.append((ld, lid, lv, amount, rv, label))
        if not hits and join_type in ("left", "full"):
            out.append((ld, lid, lv, amount, None, None))
    if join_type == "full":
        out += [
            (d, i, None, None, rv, lb) for j, (d, i, rv, lb) in enumerate(right) if j not in matched
        ]
    return out


def assert_output(spark, config: JoinJobConfig, left, right, join_type) -> None:
    actual = read_output(spark, config.target_path)
    expected = reference(left, right, join_type) if left and right else []
    if actual is None:
        assert expected == [], "no output, but the full recompute has rows"
        return
    assertDataFrameEqual(actual, spark.createDataFrame(expected, OUT_SCHEMA).collect())


def left_row(key: int, value: str, amount: int) -> dict:
    return {"id": key, "value": value, "amount": amount}


def right_row(key: int, value: str, label: str) -> dict:
    return {"id": key, "value": value, "label": label}
