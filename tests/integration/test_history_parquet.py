"""History targets on Parquet (``--history scd2``), through the load job on local disk.

Each version of a key is one row with ``valid_from``/``valid_to``/``is_current``; the
expected history is always the independent reference's (``tests/harness/history_reference.py``)
built from every delivery the source holds, whatever the runs, batches and crashes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.deletes.markers import DeleteMarker
from glue_incremental.history.errors import (
    HistoryTarget,
    LatestVersionTarget,
    NullWatermark,
    UnknownHistoryColumn,
)
from glue_incremental.targets.parquet import writer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, CrashAtStep, StepCounter, crash_points
from tests.harness.history_reference import Made, history
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import source_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
ADDED = ["valid_from", "valid_to", "is_current"]
OP_D = DeleteMarker("op", ("D",))


class HistoryJob:
    """A JSON-files load into a Parquet history target, run at increasing times."""

    def __init__(
        self, spark: Any, tmp: Path, store: Any, job_name: str = "customers", **overrides: Any
    ) -> None:
        self.spark, self.tmp, self.store, self.job_name = spark, tmp, store, job_name
        self.overrides = {"history": "scd2", **overrides}
        self.clock = FixedClock(T0)
        self.runs = 0

    @property
    def target(self) -> Path:
        return self.tmp / "target"

    def land(self, rows: list[dict], name: str | None = None) -> None:
        self.clock.now += 10
        write_json_file(self.tmp / "source", rows, mtime=self.clock.now, name=name)

    def run(self, hook: Any = None, *, dry_run: bool = False, **overrides: Any) -> dict:
        self.clock.now += 60
        self.runs += 1
        return run_load_at(
            self.spark,
            json_files_config(self.tmp, **{**self.overrides, **overrides}),
            job_name=self.job_name,
            run_id=f"jr_{self.runs}",
            clock=self.clock,
            store=self.store,
            hook=hook,
            dry_run=dry_run,
        )

    def files(self) -> dict[str, tuple[int, int]]:
        """Every file under the target, hidden ones included (side store, index, notes)."""
        return {
            str(path.relative_to(self.target)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(self.target.rglob("*"))
            if path.is_file()
        }

    def versions(self) -> list[dict]:
        """The target's version rows as a reader sees them, sorted by key and ``valid_from``."""
        uri = self.overrides.get("target_path") or self.target.as_uri()  # local, or on S3A
        if not writer.data_exists(self.spark, uri):  # no version left: no data file to read
            return []
        rows = [row.asDict() for row in self.spark.read.parquet(uri).collect()]
        return sorted(rows, key=lambda row: (row["id"], row["valid_from"]))

    def bounds(self) -> list[tuple]:
        return [(r["id"], r["valid_from"], r["valid_to"], r["is_current"]) for r in self.versions()]

    def expected(self, tracked: tuple[str, ...] | None = None) -> list[dict]:
        """The reference's history of every delivery under the source."""
        marker = self.overrides.get("delete_marker")
        made = [
            Made(
                {k: v for k, v in row.items() if v is not None},
                delivery,
                bool(marker and marker.is_delete(row.get(marker.column))),
            )
            for delivery, row in source_rows(self.tmp / "source")
        ]
        return history(made, ["id"], "updated", tracked)

    def assert_equals_reference(self, tracked: tuple[str, ...] | None = None) -> None:
        seen = self.versions()
        columns = sorted({name for row in seen for name in row})
        expected = self.expected(tracked)
        for row in expected:
            if "part" in row:
                row["part"] = str(row["part"])
        normal = [{name: row.get(name) for name in columns} for row in expected]
        assert seen == normal


def row(key: int, updated: int, segment: str, *, note: str = "", op: str = "U") -> dict:
    return {"id": key, "updated": updated, "segment": segment, "note": note, "op": op}


def test_a_first_load_opens_one_current_version_per_key(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(2, 10, "b")])

    summary = job.run()

    assert job.bounds() == [(1, 10, None, True), (2, 10, None, True)]
    assert summary["versions_opened"] == 2
    job.assert_equals_reference()


def test_an_update_of_a_tracked_column_closes_the_version_and_opens_one(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "c")])

    summary = job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, None, True), (2, 10, None, True)]
    assert (summary["versions_opened"], summary["versions_closed"]) == (1, 1)
    job.assert_equals_reference(("segment",))


def test_an_update_of_an_untracked_column_opens_nothing(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a")])
    job.run()
    job.land([row(1, 20, "a", note="moved house")])

    summary = job.run()

    assert job.bounds() == [(1, 10, None, True)]
    assert job.versions()[0]["note"] == "moved house"  # updated in place
    assert (summary["versions_opened"], summary["versions_closed"]) == (0, 0)
    job.assert_equals_reference(("segment",))


def test_a_late_version_slots_into_its_place(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(1, 30, "c")])
    job.run()
    job.land([row(1, 20, "b")])  # older than the current version

    job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, 30, False), (1, 30, None, True)]
    job.assert_equals_reference()


def test_a_soft_delete_closes_the_current_version_and_a_reinsert_opens_one(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "a", op="D")])
    job.run()
    assert job.bounds() == [(1, 10, 20, False), (2, 10, None, True)]  # nothing removed

    job.land([row(1, 30, "a")])
    job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 30, None, True), (2, 10, None, True)]
    job.assert_equals_reference()


def test_history_on_a_target_of_latest_version_rows_is_refused_in_one_line(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a")])
    job.run(history=None)
    before = sorted(p.name for p in job.target.rglob("*.parquet"))
    job.land([row(1, 20, "b")])

    with pytest.raises(LatestVersionTarget) as raised:
        job.run()

    assert "already holds latest-version rows" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert sorted(p.name for p in job.target.rglob("*.parquet")) == before


def test_a_row_without_a_watermark_is_refused_naming_its_key_and_nothing_is_written(
    spark, tmp_path, store
):
    job = HistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a")])
    job.run()
    before = job.files()
    job.land([row(2, 20, "b"), row(3, None, "c")])

    with pytest.raises(NullWatermark) as raised:
        job.run()

    assert "{'id': 3}" in str(raised.value) and "\n" not in str(raised.value)
    assert job.files() == before


def test_a_tracked_column_the_source_lacks_is_refused_in_one_line(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, history_columns=("tier",))
    job.land([row(1, 10, "a")])

    with pytest.raises(UnknownHistoryColumn) as raised:
        job.run()

    assert "'tier' is not a source column" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert not job.target.exists() or not list(job.target.rglob("*.parquet"))


def test_a_backlog_in_one_file_batches_gives_the_versions_of_one_unbounded_run(
    spark, tmp_path, store
):
    # docs/bounded-batches.md: a tracked change, a delete and a late version, one file each.
    files = [
        [row(1, 10, "a"), row(2, 10, "b")],
        [row(1, 30, "c"), row(2, 20, "b", op="D")],
        [row(1, 20, "b")],  # older than key 1's version of the file before
    ]
    one = HistoryJob(spark, tmp_path / "one", store, "one", delete_marker=OP_D)
    batched = HistoryJob(
        spark, tmp_path / "batched", store, "batched", delete_marker=OP_D, max_batch_files=1
    )
    for job in (one, batched):
        for rows in files:
            job.land(rows)

    assert "batches" not in one.run()
    assert batched.run()["batches"] == 3
    versions = [(1, 10, 20, False), (1, 20, 30, False), (1, 30, None, True), (2, 10, 20, False)]
    assert one.bounds() == versions
    assert batched.bounds() == versions
    batched.assert_equals_reference()


def test_a_column_of_the_sources_folder_names_opens_a_version_per_delivery_unless_left_out(
    spark, tmp_path, store
):
    # docs/history.md, "Tracked columns": a daily snapshot's `day=` folder is a column of its
    # rows, different in every delivery; the customer's segment never changes.
    bounds = {}
    for tracked in ((), ("segment",)):
        name = "_".join(tracked) or "default"
        job = HistoryJob(spark, tmp_path / name, store, name, history_columns=tracked)
        for day in (1, 2):
            job.clock.now += 10
            folder = job.tmp / "source" / f"day={day}"
            write_json_file(folder, [row(1, day * 10, "a")], mtime=job.clock.now)
        job.run()
        bounds[name] = job.bounds()

    assert bounds == {
        "default": [(1, 10, 20, False), (1, 20, None, True)],
        "segment": [(1, 10, None, True)],
    }


def partitioned_row(key: int, updated: int, part: str, value: str) -> dict:
    return {"id": key, "updated": updated, "part": part, "value": value}


def test_a_crash_at_each_publish_step_then_a_rerun_equals_the_reference(spark, tmp_path, store):
    # Key 1 moves partition in the crashing run: its versions live in two partitions.
    job = HistoryJob(spark, tmp_path / "sweep", store, partition_by=("part",))
    job.land([partitioned_row(1, 10, "a", "x"), partitioned_row(2, 10, "b", "y")])
    job.run()
    job.land([partitioned_row(1, 20, "b", "x")])
    job.run()
    baseline = tmp_path / "baseline"
    shutil.copytree(job.target, baseline)
    late = [partitioned_row(1, 15, "c", "z"), partitioned_row(2, 30, "b", "w")]
    counter = StepCounter()
    job.land(late, name="late.json")
    job.run(hook=counter)
    job.assert_equals_reference()
    steps = counter.names("publish.")
    for step in crash_points(steps, quick=3):  # every step under make test-deep
        shutil.rmtree(job.target)
        shutil.copytree(baseline, job.target)
        store.rewind("customers", "jr_2", why="next crash point")
        with pytest.raises(Crash):
            job.run(hook=CrashAtStep(step, prefix="publish."))
        job.run()
        job.assert_equals_reference()


made_rows = st.builds(
    lambda key, ts, part, value, deleted: {
        "id": key,
        "updated": ts,
        "part": part,
        "value": value,
        "op": "D" if deleted else "U",
    },
    key=st.sampled_from([1, 1, 2]),
    ts=st.integers(0, 3),
    part=st.sampled_from(["a", "a", "b"]),
    value=st.sampled_from(["x", "x", "y"]),
    deleted=st.sampled_from([False, False, True]),
)


# The target on a local disk, or on S3 through S3A (LocalStack: S3's copy-then-delete
# rename under the publish); the source stays on the local disk.
STORAGES = ["local", pytest.param("s3a", marks=pytest.mark.s3)]


@pytest.mark.parametrize("storage", STORAGES)
@settings(
    max_examples=40 if IN_DEEP_RUN else 2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    batches=st.lists(st.lists(made_rows, min_size=1, max_size=3), min_size=1, max_size=3),
    tracked=st.sampled_from([None, ("value",)]),
)
def test_property_any_deliveries_in_any_batches_give_the_reference_history(
    spark,
    tmp_path_factory,
    store,
    request,
    storage: str,
    batches: list[list[dict]],
    tracked: tuple[str, ...] | None,
):
    tmp = tmp_path_factory.mktemp("history")
    where = {}
    if storage == "s3a":
        root = request.getfixturevalue("s3_root")
        where = {"target_path": f"{root}/{uuid.uuid4().hex[:8]}/target"}
    job = HistoryJob(
        spark,
        tmp,
        store,
        tmp.name,
        partition_by=("part",),
        delete_marker=OP_D,
        history_columns=tracked or (),
        **where,
    )
    for batch in batches:
        job.land(batch)
        job.run()
    job.assert_equals_reference(tracked)


def test_a_delete_at_the_watermark_of_the_only_version_leaves_no_version(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, "gone", partition_by=("part",), delete_marker=OP_D)
    job.land([{"id": 1, "updated": 0, "part": "a", "value": "x", "op": "U"}])
    job.run()
    job.land([{"id": 1, "updated": 0, "part": "a", "value": "x", "op": "D"}])
    job.run()
    assert job.versions() == []
    job.assert_equals_reference()


def test_a_dry_run_reports_the_versions_the_run_then_makes_and_writes_nothing(
    spark, tmp_path, store
):
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a"), row(2, 10, "b"), row(3, 10, "c")])
    job.run()
    job.land([row(1, 20, "x"), row(2, 5, "z"), row(3, 30, "c", note="untracked")])
    files, state = job.files(), store.get_watermark(job.job_name)

    dry = job.run(dry_run=True)

    assert job.files() == files  # no data, index, side store or note written
    assert store.get_watermark(job.job_name) == state
    real = job.run()
    counts = ("versions_opened", "versions_closed")
    # key 1's tracked change, key 2's late version before its first; key 3 opens nothing
    assert [dry[name] for name in counts] == [real[name] for name in counts]
    assert real["versions_opened"] == 2
    job.assert_equals_reference(("segment",))


def test_a_history_run_publishes_the_versions_it_opened_and_closed(
    spark, tmp_path, store, monkeypatch
):
    from glue_incremental.run import metrics

    sent: list[dict[str, float]] = []
    publish = metrics.publish

    def recorded(run_metrics: Any, *args: Any, **kwargs: Any) -> Any:
        data = publish(run_metrics, *args, **kwargs)
        sent.append({datum["MetricName"]: datum["Value"] for datum in data})
        return data

    monkeypatch.setattr(metrics, "publish", recorded)
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "c")])
    job.run()
    job.run()  # nothing new: still both, as 0

    wanted = [
        {name: figures.get(name) for name in ("VersionsOpened", "VersionsClosed")}
        for figures in sent
    ]
    assert wanted == [
        {"VersionsOpened": 2.0, "VersionsClosed": 0.0},
        {"VersionsOpened": 1.0, "VersionsClosed": 1.0},
        {"VersionsOpened": 0.0, "VersionsClosed": 0.0},
    ]


def test_the_catalog_table_gains_the_added_columns_at_the_first_history_run(
    spark, tmp_path, store, monkeypatch
):
    from glue_incremental.targets.parquet import catalog_schema

    # Terraform ignores the table's columns after creation: the job's sync must add them.
    synced: list[list[tuple[str, str]]] = []

    def sync(table: str, schema: Any) -> list[str]:
        synced.append([(f.name, f.dataType.simpleString()) for f in schema.fields])
        return [f.name for f in schema.fields]

    monkeypatch.setattr(catalog_schema, "sync", sync)
    job = HistoryJob(spark, tmp_path, store, catalog_table="gi_dev.customers")
    job.land([row(1, 10, "a")])

    job.run()

    assert [name for name, _ in synced[0][-3:]] == ADDED
    kinds = dict(synced[0])
    assert (kinds["valid_from"], kinds["valid_to"], kinds["is_current"]) == (
        kinds["updated"],
        kinds["updated"],
        "boolean",
    )


# -- attacks (issue 43): behaviours the history target promises that it does not keep yet ------


def test_a_row_with_a_list_column_gets_versions_like_any_other(spark, tmp_path, store):
    # A customer's tags (a JSON array, array<string>): untracked, carried in each version.
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([{"id": 1, "updated": 10, "segment": "a", "tags": ["x", "y"]}])
    job.run()
    job.land([{"id": 1, "updated": 20, "segment": "b", "tags": ["x"]}])
    job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, None, True)]
    assert [v["tags"] for v in job.versions()] == [["x", "y"], ["x"]]


def test_a_widened_column_on_a_partitioned_target_keeps_later_runs_loading(spark, tmp_path, store):
    narrow = "id bigint, part string, updated bigint, segment string, qty int"
    wide = narrow.replace("qty int", "qty bigint")
    job = HistoryJob(
        spark,
        tmp_path,
        store,
        history_columns=("segment",),
        partition_by=("part",),
        source_schema=narrow,
    )
    # key 2's update of an untracked column leaves an absorbed delivery in _history/part=y
    job.land(
        [
            {"id": 1, "updated": 10, "segment": "a", "part": "x", "qty": 1},
            {"id": 2, "updated": 10, "segment": "a", "part": "y", "qty": 1},
            {"id": 2, "updated": 12, "segment": "a", "part": "y", "qty": 2},
        ]
    )
    job.run()
    job.overrides["source_schema"] = wide  # qty widens; only part=x is touched
    job.land([{"id": 1, "updated": 20, "segment": "b", "part": "x", "qty": 3_000_000_000}])
    job.run()
    job.land(
        [
            {"id": 1, "updated": 30, "segment": "c", "part": "x", "qty": 1},
            {"id": 2, "updated": 30, "segment": "c", "part": "y", "qty": 1},
        ]
    )

    job.run()  # reads _history/ of part=x (qty bigint) and part=y (qty int)

    job.assert_equals_reference(("segment",))


def test_a_crash_at_each_step_of_a_widening_run_then_a_rerun_stores_every_file_wide(
    spark, tmp_path, store
):
    # The widening's publish (data and _history/), then the run's own: a crash at any step of
    # either, then a rerun, leaves the reference with no int32 file left in data or side store.
    narrow = "id bigint, part string, updated bigint, segment string, qty int"
    job = HistoryJob(
        spark,
        tmp_path / "sweep",
        store,
        history_columns=("segment",),
        partition_by=("part",),
        source_schema=narrow,
    )
    job.land(
        [
            {"id": 1, "updated": 10, "segment": "a", "part": "x", "qty": 1},
            {"id": 2, "updated": 10, "segment": "a", "part": "y", "qty": 1},
            {"id": 2, "updated": 12, "segment": "a", "part": "y", "qty": 2},
        ]
    )
    job.run()
    baseline = tmp_path / "baseline"
    shutil.copytree(job.target, baseline)
    job.overrides["source_schema"] = narrow.replace("qty int", "qty bigint")
    job.land([{"id": 1, "updated": 20, "segment": "b", "part": "x", "qty": 3_000_000_000}])
    counter = StepCounter()
    job.run(hook=counter)
    steps = counter.names("publish.")
    between = steps.index("publish.intent", 1) + 1  # the run's own publish begins: 1-based
    for step in sorted({*crash_points(steps), between}):
        shutil.rmtree(job.target)
        shutil.copytree(baseline, job.target)
        store.rewind("customers", "jr_1", why="next crash point")
        with pytest.raises(Crash):
            job.run(hook=CrashAtStep(step, prefix="publish."))
        job.run()

        job.assert_equals_reference(("segment",))
        for stored in (job.target, job.target / "_history"):
            merged = spark.read.option("mergeSchema", "true").parquet(stored.as_uri())
            assert merged.schema["qty"].dataType.simpleString() == "bigint"


def test_a_widened_watermark_column_widens_the_version_bounds(spark, tmp_path, store):
    narrow = "id bigint, part string, updated int, segment string"
    job = HistoryJob(
        spark,
        tmp_path,
        store,
        history_columns=("segment",),
        partition_by=("part",),
        source_schema=narrow,
    )
    job.land(
        [
            {"id": 1, "updated": 10, "segment": "a", "part": "x"},
            {"id": 2, "updated": 10, "segment": "a", "part": "y"},
        ]
    )
    job.run()
    job.overrides["source_schema"] = narrow.replace("updated int", "updated bigint")
    job.land([{"id": 1, "updated": 3_000_000_000, "segment": "b", "part": "x"}])

    job.run()

    assert job.bounds() == [
        (1, 10, 3_000_000_000, False),
        (1, 3_000_000_000, None, True),
        (2, 10, None, True),
    ]
    job.assert_equals_reference(("segment",))


def test_a_tracked_value_of_nan_delivered_again_opens_no_version(spark, tmp_path, store):
    # Spark reads a JSON NaN as a double NaN (and compares NaN = NaN as true in SQL).
    job = HistoryJob(spark, tmp_path, store)
    for name, updated in (("a.json", 10), ("b.json", 20)):
        job.clock.now += 10
        path = job.tmp / "source" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'{{"id": 1, "updated": {updated}, "score": NaN}}\n')
        os.utime(path, (job.clock.now, job.clock.now))
        job.run()

    assert job.bounds() == [(1, 10, None, True)]


def test_a_batched_dry_run_counts_the_versions_of_every_batch_it_lists(spark, tmp_path, store):
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",), max_batch_files=1)
    job.land([row(9, 1, "z")])
    job.run(max_batch_files=None)  # a loaded target: the dry run writes nothing to it
    for updated, segment in ((10, "a"), (20, "b"), (30, "c")):
        job.land([row(1, updated, segment)])
    before, state = job.files(), store.get_watermark(job.job_name)

    dry = job.run(dry_run=True)

    assert (job.files(), store.get_watermark(job.job_name)) == (before, state)
    real = job.run()
    assert len(dry["plan"]["batches"]) == real["batches"] == 3
    counts = ("versions_opened", "versions_closed")
    assert [real[name] for name in counts] == [3, 2]
    assert [dry[name] for name in counts] == [real[name] for name in counts]


def test_a_batched_dry_run_counts_a_late_version_as_its_batch_will(spark, tmp_path, store):
    # Batch 2 slots 20 between 10 and 30: one batch at a time opens 4 and closes 1 in all,
    # where one run over the same files would open 3; the dry run counts as the batches do.
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",), max_batch_files=1)
    job.land([row(1, 10, "a"), row(1, 30, "b")])
    job.land([row(1, 20, "b")])
    job.land([row(2, 5, "x")])

    dry = job.run(dry_run=True)
    real = job.run()

    counts = ("versions_opened", "versions_closed")
    assert [real[name] for name in counts] == [4, 1]
    assert [dry[name] for name in counts] == [4, 1]
    job.assert_equals_reference(("segment",))


def test_changing_the_tracked_columns_of_a_loaded_target_is_refused_in_one_line(
    spark, tmp_path, store
):
    # Key 1's note changed under --history_columns segment: one version, one absorbed
    # delivery. Tracking the note too makes the stored versions disagree with the new rule.
    from glue_incremental.history.errors import HistoryError

    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a", note="x"), row(1, 20, "a", note="y")])
    job.run()
    job.overrides["history_columns"] = ("segment", "note")
    job.land([row(1, 30, "a", note="z")])
    before, state = job.files(), store.get_watermark(job.job_name)

    with pytest.raises(HistoryError) as raised:
        job.run()

    assert "history_columns" in str(raised.value)
    assert (raised.value.old, raised.value.new) == (["segment"], ["note", "segment"])
    assert "\n" not in str(raised.value)
    assert (job.files(), store.get_watermark(job.job_name)) == (before, state)


def test_a_reset_then_a_run_rebuilds_the_history_under_new_tracked_columns(spark, tmp_path, store):
    # What the refusal advises (docs/history.md): the reload reads every delivery again.
    job = HistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a", note="x"), row(1, 20, "a", note="y")])
    job.run()
    job.overrides["history_columns"] = ("segment", "note")
    job.land([row(1, 30, "a", note="z")])
    store.reset(job.job_name, why="track the note")

    job.run()
    job.land([row(1, 40, "b", note="z")])
    job.run()

    assert job.bounds() == [
        (1, 10, 20, False),
        (1, 20, 30, False),
        (1, 30, 40, False),
        (1, 40, None, True),
    ]
    job.assert_equals_reference(("segment", "note"))


def test_a_tie_in_one_file_has_the_winner_a_full_refresh_picks_after_a_column_widens(
    spark, tmp_path, store
):
    # Two rows of key 1 at one watermark in one file: rule 1's digest decides. qty then widens
    # from int to double (a safe widening); a full refresh reads every file as double.
    narrow = "id bigint, updated bigint, segment string, qty int"
    wide = narrow.replace("qty int", "qty double")
    tie = [
        {"id": 1, "updated": 10, "segment": "a", "qty": 1},
        {"id": 1, "updated": 10, "segment": "a", "qty": 3},
    ]
    later = [{"id": 2, "updated": 20, "segment": "b", "qty": 2.5}]
    incremental = HistoryJob(spark, tmp_path / "inc", store, "inc", source_schema=narrow)
    incremental.land(tie)
    incremental.run()
    incremental.land(later)
    incremental.run(source_schema=wide)
    refresh = HistoryJob(spark, tmp_path / "full", store, "full", source_schema=wide)
    refresh.land(tie)
    refresh.land(later)

    refresh.run()

    assert incremental.versions() == refresh.versions()


def test_a_source_column_named_like_an_added_one_in_capitals_is_refused_in_one_line(
    spark, tmp_path, store
):
    # An Oracle or Snowflake table's own VALID_FROM: Spark resolves names case-insensitively.
    from glue_incremental.history.errors import HistoryColumnTaken

    job = HistoryJob(spark, tmp_path, store)
    job.land([{"id": 1, "updated": 10, "segment": "a", "VALID_FROM": "2020-01-01"}])

    with pytest.raises(HistoryColumnTaken) as raised:
        job.run()

    assert "\n" not in str(raised.value)
    assert not job.target.exists() or not list(job.target.rglob("*.parquet"))


def test_a_latest_version_load_into_a_history_target_is_refused_and_keeps_every_version(
    spark, tmp_path, store
):
    # The reverse of LatestVersionTarget: `history` dropped from the pipeline (Terraform,
    # or a rerun without --history scd2) must not collapse the versions to one row per key.
    job = HistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(1, 20, "b")])
    job.run()
    versions = job.versions()
    job.land([row(2, 30, "c")])  # key 1 is not even in the run

    with pytest.raises(HistoryTarget) as raised:
        job.run(history=None)

    assert "--history scd2" in str(raised.value) and "\n" not in str(raised.value)
    assert job.versions() == versions


# -- value forms, added columns and refusals after a widening --------------------------------


def test_a_tie_in_one_file_goes_to_the_same_row_on_a_target_partitioned_by_a_number_column(
    spark, tmp_path, store
):
    # Two rows of key 1 at one watermark in one file: the digest decides. `part` is a JSON
    # number (bigint); one target is partitioned by it, the other is not.
    tie = [{**row(1, 10, segment), "part": 1} for segment in ("a", "b")]
    plain = HistoryJob(spark, tmp_path / "plain", store, "plain")
    parted = HistoryJob(spark, tmp_path / "parted", store, "parted", partition_by=("part",))
    for job in (plain, parted):
        job.land(tie, name="tie.json")
        job.run()

    expected = [v["segment"] for v in plain.expected()]  # the reference
    assert [v["segment"] for v in plain.versions()] == expected
    assert [v["segment"] for v in parted.versions()] == expected


def test_a_tie_in_one_file_has_the_winner_a_full_refresh_picks_after_a_date_widens_to_timestamp(
    spark, tmp_path, store
):
    narrow = "id bigint, updated bigint, born date"
    wide = narrow.replace("born date", "born timestamp")
    tie = [
        {"id": 1, "updated": 10, "born": "2024-01-01"},
        {"id": 1, "updated": 10, "born": "2024-01-03"},
    ]
    later = [{"id": 2, "updated": 20, "born": "2024-02-01"}]
    incremental = HistoryJob(spark, tmp_path / "inc", store, "inc", source_schema=narrow)
    incremental.land(tie)
    incremental.run()
    incremental.land(later)
    incremental.run(source_schema=wide)  # the stored version is rewritten as a timestamp
    refresh = HistoryJob(spark, tmp_path / "full", store, "full", source_schema=wide)
    refresh.land(tie)
    refresh.land(later)

    refresh.run()

    assert incremental.versions() == refresh.versions()


def test_a_run_refused_for_a_null_watermark_writes_nothing_even_when_it_widens_a_column(
    spark, tmp_path, store
):
    narrow = "id bigint, updated bigint, segment string, qty int"
    job = HistoryJob(spark, tmp_path, store, source_schema=narrow)
    job.land([{"id": 1, "updated": 10, "segment": "a", "qty": 1}])
    job.run()
    before = job.files()
    job.overrides["source_schema"] = narrow.replace("qty int", "qty bigint")
    job.land(
        [
            {"id": 2, "updated": 20, "segment": "b", "qty": 3_000_000_000},
            {"id": 3, "updated": None, "segment": "c", "qty": 1},
        ]
    )

    with pytest.raises(NullWatermark):
        job.run()

    assert job.files() == before  # docs/history.md: "nothing written"


def test_a_column_added_by_a_run_whose_only_row_is_a_delete_is_in_the_target(
    spark, tmp_path, store
):
    # The full refresh of the same files writes key 1's version from a frame with `tier`.
    first = [{"id": 1, "updated": 10, "part": "a", "value": "x", "op": "U"}]
    delete = [{"id": 2, "updated": 20, "part": "b", "value": "y", "op": "D", "tier": "gold"}]
    incremental = HistoryJob(
        spark, tmp_path / "inc", store, "inc", partition_by=("part",), delete_marker=OP_D
    )
    incremental.land(first)
    incremental.run()
    incremental.land(delete)
    incremental.run()
    refresh = HistoryJob(
        spark, tmp_path / "full", store, "full", partition_by=("part",), delete_marker=OP_D
    )
    refresh.land(first)
    refresh.land(delete)
    refresh.run()

    def columns(job: HistoryJob) -> list[str]:
        return sorted(spark.read.parquet(job.target.as_uri()).columns)

    assert "tier" in columns(refresh)
    assert columns(incremental) == columns(refresh)


def test_a_delivery_with_an_empty_partition_value_and_unchanged_values_opens_no_version(
    spark, tmp_path, store
):
    first = [{"id": 1, "updated": 10, "part": "", "segment": "a"}]
    again = [{"id": 1, "updated": 20, "part": "", "segment": "a"}]  # only the watermark moved
    incremental = HistoryJob(spark, tmp_path / "inc", store, "inc", partition_by=("part",))
    incremental.land(first)
    incremental.run()
    incremental.land(again)
    incremental.run()
    refresh = HistoryJob(spark, tmp_path / "full", store, "full", partition_by=("part",))
    refresh.land(first)
    refresh.land(again)
    refresh.run()

    assert refresh.bounds() == [(1, 10, None, True)]
    assert incremental.bounds() == refresh.bounds()
