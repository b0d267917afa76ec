"""The join over a side written by an upstream job: only committed upstream output is read.

The upstream is simulated with the platform's own pieces: ``targets.parquet.writer.replace_partitions``
publishes its output, and a commit of ``published_at_ms`` (its clock after
publishing) in the watermark store makes it visible - what the platform's jobs
commit. A run that publishes and then fails before committing, or that is
still publishing, must not be read until a committed run covers it. Clocks are
real here (file modification times against the upstream's commit time).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.join import JoinJobConfig, JoinSpec, UpstreamChanged, run_join
from glue_incremental.run.context import BookmarkControl, IncrementalRun, hooks
from glue_incremental.targets.parquet import writer
from glue_incremental.watermarks import Watermarks
from pyspark.testing import assertDataFrameEqual

from tests.harness.faults import Crash, crash_at, on_point
from tests.harness.targets import partition_values_as_strings

pytestmark = pytest.mark.spark

OUT_COLUMNS = ["date", "id", "left_value", "amount", "right_value", "label"]
OUT_SCHEMA = (
    "date string, id long, left_value string, amount long, right_value string, label string"
)
UPSTREAM = "payments_load"


class Upstream:
    """An upstream job's output directory and its commits."""

    def __init__(self, spark, root: Path) -> None:
        self.spark, self.root = spark, root
        self.committed: dict[str, list[tuple]] = {}  # what its committed runs published
        self._written: dict[str, list[tuple]] = {}

    def publish(self, run_id: str, rows: dict[str, list[tuple]], *, crash_after: int | None = None):
        """Replace the given partitions with ``rows`` ((id, value, label) per partition)."""
        data = [(d, i, v, lb) for d, part in rows.items() for i, v, lb in part]
        frame = self.spark.createDataFrame(data, "date string, id long, value string, label string")
        crash = crash_at("publish.move", times=crash_after + 1) if crash_after else None
        try:
            with hooks.installed(crash) if crash else contextlib.nullcontext():
                writer.replace_partitions(
                    self.spark,
                    frame,
                    self.root.as_uri(),
                    partition_by=["date"],
                    affected=[(d,) for d in rows],
                    run_id=run_id,
                )
        except Crash:  # one file per partition: the first ``crash_after`` partitions moved in
            self._written.update({d: rows[d] for d in sorted(rows)[:crash_after]})
            raise
        self._written.update(rows)

    def commit(self, run_id: str) -> None:
        time.sleep(0.01)
        item = Watermarks().create_watermark_item(
            UPSTREAM, run_id, published_at_ms=int(time.time() * 1000), cursor=run_id
        )
        Watermarks().add_watermark(item)
        self.committed.update(self._written)
        self._written = {}
        time.sleep(0.01)  # the next upstream run writes strictly after this commit


def land_left(root: Path, partitions: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """One new JSON file in each ``date=`` partition of the left side, modified a second ago.

    Returns ``partitions``: what the left side now holds, for the expected output.
    """
    for partition, rows in partitions.items():
        directory = root / f"date={partition}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{time.time_ns()}.json"
        path.write_text(
            "".join(json.dumps({"id": i, "value": v, "amount": a}) + "\n" for i, v, a in rows)
        )
        stamp = time.time() - 1
        os.utime(path, (stamp, stamp))
    return partitions


@pytest.fixture
def upstream(spark, tmp_path) -> Upstream:
    """The right side, written by an upstream job under ``tmp_path/right``."""
    return Upstream(spark, tmp_path / "right")


def config_for(tmp: Path) -> JoinJobConfig:
    return JoinJobConfig(
        left_path=(tmp / "left").as_uri(),
        right_path=(tmp / "right").as_uri(),
        left_format="json",
        right_format="parquet",
        spec=JoinSpec(("id",), "left", ("date",)),
        target_path=(tmp / "target").as_uri(),
        upstream_jobs={"right": UPSTREAM},
    )


@pytest.fixture
def config(tmp_path) -> JoinJobConfig:
    return config_for(tmp_path)


def run(spark, config, store, run_id: str, hook=None) -> dict[str, Any]:
    context = IncrementalRun(
        spark=spark,
        job_name="orders_payments",
        run_id=run_id,
        store=store,
        bookmark=BookmarkControl(),
        publish_metrics=False,
    )
    with hooks.installed(hook) if hook else contextlib.nullcontext(), context:
        run_join(context, config)
    return context.summary


def expected_rows(left: dict[str, list[tuple]], right: dict[str, list[tuple]]) -> list[tuple]:
    """Left join per partition of the left rows with the committed upstream rows."""
    out = []
    for date, rows in left.items():
        for i, lv, amount in rows:
            hits = [(v, lb) for j, v, lb in right.get(date, []) if j == i]
            out += [(date, i, lv, amount, v, lb) for v, lb in hits] or [
                (date, i, lv, amount, None, None)
            ]
    return out


def assert_output(spark, config, left, right) -> None:
    with partition_values_as_strings(spark):
        actual = spark.read.parquet(config.target_path).select(*OUT_COLUMNS).collect()
    expected = spark.createDataFrame(expected_rows(left, right), OUT_SCHEMA).collect()
    assertDataFrameEqual(actual, expected)


def test_a_failed_upstream_run_is_not_read_until_a_committed_run_covers_it(
    spark, tmp_path, store, upstream, config
):
    left = land_left(tmp_path / "left", {"d1": [(1, "l1", 10)], "d2": [(2, "l2", 20)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "first")]})
    upstream.commit("up_1")

    summary = run(spark, config, store, "jr_1")
    assert summary["upstream_runs_consumed"] == {"right": ["up_1"]}
    assert_output(spark, config, left, upstream.committed)

    # up_2 rewrites d1 and creates d2, then dies before committing.
    upstream.publish("up_2", {"d1": [(1, "u2", "second")], "d2": [(2, "u2", "second")]})
    left["d2"].append((2, "l2b", 21))
    land_left(tmp_path / "left", {"d2": [(2, "l2b", 21)]})
    summary = run(spark, config, store, "jr_2")
    assert summary["pending_partitions"]["right"] == [["d2"]]
    assert summary["upstream_runs_consumed"] == {"right": []}
    right_state = store.get_watermark("orders_payments", "right")["watermarks"]
    assert right_state["pending_partitions"] == [["d2"]]
    assert right_state["upstream"]["run_id"] == "up_1"
    # d1 still shows up_1's committed rows; d2 is not recomputed from uncommitted data
    assert_output(spark, config, {"d1": left["d1"], "d2": [(2, "l2", 20)]}, upstream.committed)

    # The rerun covers both partitions and commits: now they are read.
    upstream.publish("up_3", {"d1": [(1, "u3", "third")], "d2": [(2, "u3", "third")]})
    upstream.commit("up_3")
    summary = run(spark, config, store, "jr_3")
    assert summary["upstream_runs_consumed"] == {"right": ["up_3"]}
    assert summary["pending_partitions"] == {"left": [], "right": []}
    assert_output(spark, config, left, upstream.committed)


def test_a_partition_caught_mid_publish_waits_for_the_commit(
    spark, tmp_path, store, upstream, config
):
    left = land_left(tmp_path / "left", {"d1": [(1, "l1", 10)], "d2": [(2, "l2", 20)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "a")], "d2": [(2, "u1", "a")]})
    upstream.commit("up_1")
    run(spark, config, store, "jr_1")

    # up_2 publishes d1, then stops: d2 is staged but still holds up_1's files.
    with pytest.raises(Crash):
        upstream.publish("up_2", {"d1": [(1, "u2", "b")], "d2": [(2, "u2", "b")]}, crash_after=1)
    assert list((tmp_path / "right" / "_staging" / "up_2" / "data").glob("date=d2"))
    land_left(tmp_path / "left", {"d1": [(1, "l1b", 11)], "d2": [(2, "l2b", 21)]})
    summary = run(spark, config, store, "jr_2")
    assert summary["pending_partitions"]["right"] == [["d1"], ["d2"]]
    assert summary["affected_partitions"] == 0
    assert_output(spark, config, left, upstream.committed)  # unchanged: left as of jr_1

    # The upstream's next run recovers, rewrites both and commits.
    upstream.publish("up_3", {"d1": [(1, "u3", "c")], "d2": [(2, "u3", "c")]})
    upstream.commit("up_3")
    left["d1"].append((1, "l1b", 11))
    left["d2"].append((2, "l2b", 21))
    summary = run(spark, config, store, "jr_3")
    assert summary["upstream_runs_consumed"] == {"right": ["up_3"]}
    assert_output(spark, config, left, upstream.committed)


def test_several_upstream_commits_are_listed_and_nothing_is_read_before_the_first(
    spark, tmp_path, store, upstream, config
):
    left = land_left(tmp_path / "left", {"d1": [(1, "l1", 10)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "a")]})  # written, never committed yet
    summary = run(spark, config, store, "jr_1")
    assert summary["pending_partitions"]["right"] == [["d1"]]
    assert summary["upstream_runs_consumed"] == {"right": []}

    upstream.commit("up_1")
    upstream.publish("up_2", {"d2": [(2, "u2", "b")]})
    upstream.commit("up_2")
    summary = run(spark, config, store, "jr_2")
    assert summary["upstream_runs_consumed"] == {"right": ["up_1", "up_2"]}
    assert_output(spark, config, left, upstream.committed)


def test_an_upstream_publishing_into_a_partition_being_read_aborts_the_commit(
    spark, tmp_path, store, upstream, config
):
    left = land_left(tmp_path / "left", {"d1": [(1, "l1", 10)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "a")]})
    upstream.commit("up_1")

    def upstream_publishes_meanwhile() -> None:
        upstream.publish("up_2", {"d1": [(1, "u2", "b")]})

    with pytest.raises(UpstreamChanged, match="right side: upstream job 'payments_load'"):
        run(
            spark,
            config,
            store,
            "jr_1",
            on_point("join.published", lambda **_: upstream_publishes_meanwhile()),
        )
    assert store.get_watermark("orders_payments", "right") is None

    upstream.commit("up_2")
    summary = run(spark, config, store, "jr_2")
    assert summary["upstream_runs_consumed"] == {"right": ["up_1", "up_2"]}
    assert_output(spark, config, left, upstream.committed)


@pytest.mark.spark
def test_a_join_side_whose_upstream_rewinds_and_reruns_equals_a_full_recompute(
    spark, tmp_path, store
):
    upstream, config = Upstream(spark, tmp_path / "right"), config_for(tmp_path)
    left = land_left(tmp_path / "left", {"d1": [(1, "l1", 10)], "d2": [(2, "l2", 20)]})
    upstream.publish("up_1", {"d1": [(1, "u1", "first")]})
    upstream.commit("up_1")
    upstream.publish("up_2", {"d2": [(2, "u2", "second")]})
    upstream.commit("up_2")
    run(spark, config, store, "jr_1")

    # The upstream is rewound to up_1 (its Parquet output is kept): its commit time goes back.
    store.rewind(UPSTREAM, "up_1", why="recompute")
    run(spark, config, store, "jr_2")
    assert_output(spark, config, left, upstream.committed)

    upstream.publish("up_3", {"d2": [(2, "u3", "third")]})
    upstream.commit("up_3")
    run(spark, config, store, "jr_3")
    assert_output(spark, config, left, upstream.committed)
