"""The join on ``s3://`` sides lists by the S3 discovery rules (LocalStack S3, Spark through S3A).

An incremental run lists each side from its recent partitions on (ordered listing), so
its list requests do not grow with history; every ``full_listing_every``-th run lists
everything and reads what landed in old partitions meanwhile. Objects are put with
boto3 and S3 stamps them, so runs start on the real clock (``after_last_write``).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from datetime import timedelta

import pytest
from glue_incremental.args import BookmarkOption
from glue_incremental.join import JoinJobConfig, JoinSpec, run_join
from glue_incremental.run.context import BookmarkControl, IncrementalRun, hooks
from glue_incremental.targets.parquet import writer
from glue_incremental.watermarks import Watermarks
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from tests.harness.faults import Crash, crash_at
from tests.harness.joins import OUT_COLUMNS, OUT_SCHEMA, reference
from tests.harness.loads import FixedClock
from tests.harness.s3 import after_last_write, keys_under, put_json_lines
from tests.harness.targets import partition_values_as_strings

pytestmark = [pytest.mark.spark, pytest.mark.s3]

SIDES = ("left", "right")


class Landing:
    """Two S3 sides under a fresh root; remembers every row for the reference."""

    def __init__(self, s3_root: str, **options) -> None:
        self.root = f"{s3_root}/{uuid.uuid4().hex[:8]}"
        self.job = f"join-{uuid.uuid4().hex[:8]}"
        self.rows: dict[str, list[tuple]] = {"left": [], "right": []}
        self.runs = 0
        defaults = {
            "left_path": f"{self.root}/left/",
            "right_path": f"{self.root}/right/",
            "left_format": "json",
            "right_format": "json",
            "spec": JoinSpec(("id",), "full", ("date",)),
            "target_path": f"{self.root}/target/",
            "lookback": timedelta(seconds=1),  # S3 times are whole seconds: a band of one
        }
        self.config = JoinJobConfig(**{**defaults, **options})

    def land(self, side: str, date: str, key: int) -> None:
        if side == "left":
            put_json_lines(
                f"{self.root}/left/date={date}", [{"id": key, "value": "l", "amount": key}]
            )
            self.rows["left"].append((date, key, "l", key))
        else:
            put_json_lines(
                f"{self.root}/right/date={date}", [{"id": key, "value": "r", "label": "x"}]
            )
            self.rows["right"].append((date, key, "r", "x"))

    def run(self, spark, store, hook=None) -> dict:
        self.runs += 1
        run = IncrementalRun(
            spark=spark,
            job_name=self.job,
            run_id=f"jr_{self.runs}",
            store=store,
            bookmark=BookmarkControl(BookmarkOption.ENABLE),
            clock=FixedClock(after_last_write()),
            publish_metrics=False,
        )
        with hooks.installed(hook) if hook else contextlib.nullcontext(), run:
            run_join(run, self.config)
        return run.summary

    def assert_equals_full_recompute(self, spark, only: list[str] | None = None) -> None:
        expected = reference(self.rows["left"], self.rows["right"], "full")
        if only is not None:
            expected = [row for row in expected if row[0] in only]
        published = [k for k in keys_under(f"{self.root}/target") if k.endswith(".parquet")]
        assert published
        with partition_values_as_strings(spark):
            output = spark.read.parquet(self.config.target_path).select(*OUT_COLUMNS)
            if only is not None:
                output = output.where(F.col("date").isin(only))
            actual = output.collect()
        assertDataFrameEqual(actual, spark.createDataFrame(expected, OUT_SCHEMA).collect())


def day(number: int) -> str:
    return f"2024-{1 + number // 28:02d}-{1 + number % 28:02d}"


def s3a_list_requests(spark, uri: str) -> int:
    """LIST requests S3A sent so far (Spark's reads and the writer's, on the same bucket)."""
    path = spark._jvm.org.apache.hadoop.fs.Path(uri)
    statistics = path.getFileSystem(spark._jsc.hadoopConfiguration()).getStorageStatistics()
    return int(statistics.getLong("object_list_request") or 0)


def _incremental_listing(spark, store, s3_root, history: int) -> tuple[dict, int]:
    """(the incremental run's file plans, its S3A list requests) after ``history`` old partitions."""
    landing = Landing(s3_root)
    for number in range(history):
        for side in SIDES:
            landing.land(side, day(number), number)
    time.sleep(2)  # history is older than the band when the recent partition lands
    for side in SIDES:
        landing.land(side, day(history), history)
    landing.run(spark, store)
    for side in SIDES:
        landing.land(side, day(history + 1), history + 1)
    before = s3a_list_requests(spark, landing.root)
    summary = landing.run(spark, store)
    requests = s3a_list_requests(spark, landing.root) - before
    landing.assert_equals_full_recompute(spark)
    return summary["file_plans"], requests


# Partitions per side of the long history: four times the short one (each costs S3 uploads).
LONG_HISTORY = 12


def test_an_incremental_join_run_on_s3_lists_as_much_with_a_long_history_as_with_a_short_one(
    spark, store, s3_root
):
    short, short_s3a = _incremental_listing(spark, store, s3_root, history=3)
    long, long_s3a = _incremental_listing(spark, store, s3_root, history=LONG_HISTORY)

    for side in SIDES:
        # The recent partition and the new one: history is not listed.
        assert (short[side]["files_listed"], long[side]["files_listed"]) == (2, 2)
        assert short[side]["discovery"] == long[side]["discovery"] == "ordered"
        assert short[side]["listing_requests"] == long[side]["listing_requests"] == 1
    assert short_s3a == long_s3a  # Spark's reads and the writer's listings do not grow either


def test_a_file_in_an_old_partition_is_joined_by_the_scheduled_full_listing_even_after_a_crash(
    spark, store, s3_root
):
    landing = Landing(s3_root, full_listing_every=2)
    for number in range(6):
        landing.land("right", day(number), number)
        if number < 4:
            landing.land("left", day(number), number)
    time.sleep(2)
    landing.land("left", day(4), 4)
    landing.land("right", day(8), 8)  # the right side's recent partition is later than the left's
    first = landing.run(spark, store)
    assert {first["file_plans"][side]["discovery"] for side in SIDES} == {"full"}

    landing.land("right", day(1), 100)  # an old partition: below where ordered runs list from
    time.sleep(2)  # older than the band by the time the full listing finds it
    landing.land("left", day(5), 50)  # above the left's start, below the right's
    landing.land("right", day(8), 80)  # moves the right's high mark past the old-partition file
    with pytest.raises(Crash):
        landing.run(spark, store, hook=crash_at("commit.before"))
    second = landing.run(spark, store)  # the crashed run again: same plan, nothing lost
    assert second["file_plans"]["left"]["discovery"] == "ordered"
    assert second["file_plans"]["right"]["files_found_by_full_listing"] == 0
    # The right side's day 5 was not in its ordered listing: it is listed, then read whole.
    assert second["affected_partitions"] == 2
    assert second["file_plans"]["right"]["listing_requests"] == 2

    third = landing.run(spark, store)
    assert third["file_plans"]["right"]["discovery"] == "full"
    assert third["file_plans"]["right"]["files_found_by_full_listing"] == 1
    landing.assert_equals_full_recompute(spark)


def test_a_join_rewound_to_an_earlier_run_lists_both_sides_in_full_next(spark, store, s3_root):
    landing = Landing(s3_root)
    for side in SIDES:
        landing.land(side, day(0), 0)
    landing.run(spark, store)
    for side in SIDES:
        landing.land(side, day(1), 1)
    assert {landing.run(spark, store)["file_plans"][side]["discovery"] for side in SIDES} == {
        "ordered"
    }
    for side in SIDES:
        store.rewind(landing.job, "jr_1", side, why="reprocess what came after the first run")

    after_rewind = landing.run(spark, store)

    # The rewound state predates what later runs listed: nothing below its start is trusted.
    assert {after_rewind["file_plans"][side]["discovery"] for side in SIDES} == {"full"}
    landing.assert_equals_full_recompute(spark)


UPSTREAM = "payments_load"


def upstream_publish(spark, root: str, run_id: str, rows: dict[str, list[tuple]]) -> None:
    """An upstream job of the platform replaces partitions of ``root`` ((id, value, label) rows)."""
    data = [(d, i, v, lb) for d, part in rows.items() for i, v, lb in part]
    frame = spark.createDataFrame(data, "date string, id long, value string, label string")
    writer.replace_partitions(
        spark, frame, root, partition_by=["date"], affected=[(d,) for d in rows], run_id=run_id
    )


def upstream_commit(run_id: str) -> None:
    time.sleep(1.1)  # S3 times are whole seconds: the commit is after every object written
    store = Watermarks()
    store.add_watermark(
        store.create_watermark_item(
            UPSTREAM, run_id, published_at_ms=int(time.time() * 1000), cursor=run_id
        )
    )
    time.sleep(1.1)  # and the next upstream write is after the commit


def test_an_upstream_write_below_the_ordered_start_keeps_its_partition_pending_until_committed(
    spark, store, s3_root
):
    landing = Landing(s3_root, upstream_jobs={"right": UPSTREAM}, right_format="parquet")
    right = landing.config.right_path
    committed = {day(0): [(0, "r", "x")], day(1): [(1, "r", "x")]}
    upstream_publish(spark, right, "u1", committed)
    landing.land("left", day(0), 0)
    upstream_commit("u1")
    time.sleep(1)
    upstream_publish(spark, right, "u2", {day(5): [(5, "r", "x")]})
    committed[day(5)] = [(5, "r", "x")]
    landing.land("left", day(1), 1)
    upstream_commit("u2")
    landing.run(spark, store)  # full listings; the right side's ordered start is day 5

    upstream_publish(spark, right, "u3", {day(1): [(1, "r", "new")]})  # not committed yet
    time.sleep(1.1)
    landing.land("left", day(1), 11)
    second = landing.run(spark, store)
    assert second["file_plans"]["right"]["discovery"] == "ordered"
    assert second["pending_partitions"]["right"] == [[day(1)]]
    landing.rows["right"] = [(d, i, v, lb) for d, part in committed.items() for i, v, lb in part]
    landing.assert_equals_full_recompute(spark, only=[day(0), day(5)])
    with partition_values_as_strings(spark):
        seen = spark.read.parquet(landing.config.target_path).where(f"date = '{day(1)}'")
        assert {row["label"] for row in seen.collect()} <= {"x", None}  # u3 is not visible

    upstream_commit("u3")
    committed[day(1)] = [(1, "r", "new")]
    third = landing.run(spark, store)
    assert third["pending_partitions"]["right"] == []
    landing.rows["right"] = [(d, i, v, lb) for d, part in committed.items() for i, v, lb in part]
    landing.assert_equals_full_recompute(spark)
