"""History targets on Iceberg (``--history scd2 --target_format iceberg``), through the load job.

Each version of a key is one row with ``valid_from``/``valid_to``/``is_current``; the
expected history is always the independent reference's (``tests/harness/history_reference.py``)
built from every delivery the source holds, whatever the runs, batches, rewinds and crashes.
"""

from __future__ import annotations

import os
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
from glue_incremental.history.groups import ROLE, VERSION
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental_tools import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.faults import Crash, crash_at
from tests.harness.history_reference import Made, history
from tests.harness.iceberg import requires_iceberg, s3_warehouse_catalog, unique_table
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import source_rows

pytestmark = [pytest.mark.spark, requires_iceberg]

T0 = 1_700_000_000.0
OP_D = DeleteMarker("op", ("D",))


class IcebergHistoryJob:
    """A JSON-files load into an Iceberg history table, run at increasing times."""

    def __init__(self, spark: Any, tmp: Path, store: Any, **overrides: Any) -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.job_name = f"hist_{tmp.name}"[:60]
        self.table = unique_table("hist")
        self.overrides = {
            "history": "scd2",
            "target_format": "iceberg",
            "target_table": self.table,
            **overrides,
        }
        self.clock = FixedClock(T0)
        self.runs = 0

    @property
    def config(self) -> Any:
        return json_files_config(self.tmp, **self.overrides)

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

    def snapshots(self) -> list[iceberg_writer.Snapshot]:
        return iceberg_writer.snapshots(self.spark, self.config.iceberg_target)

    def versions(self) -> list[dict]:
        """The version rows as a reader sees them (``valid_from`` before ``valid_to``, or
        current), sorted by key and ``valid_from``, without the table's hidden columns."""
        table = self.spark.table(self.config.iceberg_target.name)
        rows = table.where("valid_to IS NULL OR valid_from < valid_to").collect()
        visible = [
            {k: v for k, v in row.asDict().items() if not k.startswith("__")} for row in rows
        ]
        assert all(row[ROLE] == VERSION for row in rows)
        return sorted(visible, key=lambda row: (row["id"], row["valid_from"]))

    def bounds(self) -> list[tuple]:
        return [(r["id"], r["valid_from"], r["valid_to"], r["is_current"]) for r in self.versions()]

    def expected(self, tracked: tuple[str, ...] | None = None) -> list[dict]:
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
        expected = [{name: row.get(name) for name in columns} for row in self.expected(tracked)]
        assert seen == expected


def row(key: int, updated: int, segment: str, *, note: str = "", op: str = "U") -> dict:
    return {"id": key, "updated": updated, "segment": segment, "note": note, "op": op}


def test_a_first_load_opens_one_current_version_per_key(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(2, 10, "b")])

    summary = job.run()

    assert job.bounds() == [(1, 10, None, True), (2, 10, None, True)]
    assert summary["versions_opened"] == 2
    job.assert_equals_reference()


def test_an_update_of_a_tracked_column_closes_the_version_and_opens_one(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "c")])

    summary = job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, None, True), (2, 10, None, True)]
    assert (summary["versions_opened"], summary["versions_closed"]) == (1, 1)
    job.assert_equals_reference(("segment",))


def test_an_update_of_an_untracked_column_opens_nothing(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a")])
    job.run()
    job.land([row(1, 20, "a", note="moved house")])

    summary = job.run()

    assert job.bounds() == [(1, 10, None, True)]
    assert job.versions()[0]["note"] == "moved house"  # updated in place
    assert (summary["versions_opened"], summary["versions_closed"]) == (0, 0)
    job.assert_equals_reference(("segment",))


def test_a_late_version_slots_into_its_place_in_one_snapshot_carrying_the_watermark(
    spark, tmp_path, store
):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(1, 30, "c")])
    job.run()
    job.land([row(1, 20, "b")])  # older than the current version

    summary = job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, 30, False), (1, 30, None, True)]
    job.assert_equals_reference()
    snapshots = job.snapshots()
    assert [s.run_id for s in snapshots] == ["jr_1", "jr_2"]  # one snapshot per run
    assert snapshots[-1].snapshot_id == summary["iceberg_snapshot_id"]
    assert snapshots[-1].watermark == job.store.get_watermark(job.job_name)["watermarks"]


def test_a_soft_delete_closes_the_current_version_and_a_reinsert_opens_one(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "a", op="D")])
    job.run()
    assert job.bounds() == [(1, 10, 20, False), (2, 10, None, True)]  # nothing removed

    job.land([row(1, 30, "a")])
    job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 30, None, True), (2, 10, None, True)]
    job.assert_equals_reference()


def test_a_dry_run_reports_the_versions_the_run_then_makes_and_commits_nothing(
    spark, tmp_path, store
):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a"), row(2, 10, "b"), row(3, 10, "c")])
    job.run()
    job.land([row(1, 20, "x"), row(2, 5, "z"), row(3, 30, "c", note="untracked")])
    snapshots, state = job.snapshots(), store.get_watermark(job.job_name)

    dry = job.run(dry_run=True)

    assert job.snapshots() == snapshots
    assert store.get_watermark(job.job_name) == state
    real = job.run()
    counts = ("versions_opened", "versions_closed")
    # key 1's tracked change, key 2's late version before its first; key 3 opens nothing
    assert [dry[name] for name in counts] == [real[name] for name in counts]
    assert real["versions_opened"] == 2
    assert [job.run()[name] for name in counts] == [0, 0]  # nothing new: reported as 0
    job.assert_equals_reference(("segment",))


def test_an_as_of_query_sees_one_row_per_key_and_never_an_absorbed_delivery(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, 10, "a"), row(1, 15, "a"), row(1, 20, "b"), row(2, 10, "x")])
    job.run()
    job.land([row(2, 12, "x", op="D")])
    job.run()
    name = job.config.iceberg_target.name

    def as_of(t: int) -> list[tuple]:
        found = spark.sql(
            f"SELECT id, segment FROM {name} "
            f"WHERE valid_from <= {t} AND (valid_to IS NULL OR valid_to > {t})"
        ).collect()
        return sorted(tuple(r) for r in found)

    assert as_of(11) == [(1, "a"), (2, "x")]
    assert as_of(15) == [(1, "a")]  # key 2 deleted at 12; the absorbed row at 15 is not a version
    assert as_of(25) == [(1, "b")]
    current = spark.sql(f"SELECT id FROM {name} WHERE is_current").collect()
    assert sorted(r.id for r in current) == [1]


def test_history_on_a_table_of_latest_version_rows_is_refused_in_one_line(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a")])
    job.run(history=None)
    before = [s.snapshot_id for s in job.snapshots()]
    job.land([row(1, 20, "b")])

    with pytest.raises(LatestVersionTarget) as raised:
        job.run()

    assert "already holds latest-version rows" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert [s.snapshot_id for s in job.snapshots()] == before


def test_a_latest_version_load_into_a_history_table_is_refused_in_one_line(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a"), row(1, 20, "b")])
    job.run()
    before = [s.snapshot_id for s in job.snapshots()]
    job.land([row(2, 30, "c")])

    with pytest.raises(HistoryTarget) as raised:
        job.run(history=None)

    assert "--history scd2" in str(raised.value) and "\n" not in str(raised.value)
    assert [s.snapshot_id for s in job.snapshots()] == before


def test_a_tracked_column_the_source_lacks_is_refused_in_one_line(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("tier",))
    job.land([row(1, 10, "a")])

    with pytest.raises(UnknownHistoryColumn) as raised:
        job.run()

    assert "'tier' is not a source column" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert job.snapshots() == []


def test_a_new_column_is_null_in_older_versions(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a")])
    job.run()
    job.land([{**row(1, 20, "a"), "tier": "gold"}])

    job.run()

    assert [(r["valid_from"], r.get("tier")) for r in job.versions()] == [(10, None), (20, "gold")]
    job.assert_equals_reference()


def test_a_rewind_rolls_the_table_back_and_the_rerun_equals_the_reference(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    first = job.bounds()
    job.land([row(1, 20, "c"), row(2, 15, "b", op="D")])
    job.run()
    job.land([row(1, 5, "z")])  # a late one
    job.run()

    assert cli.main(["watermarks", "rewind", job.job_name, "jr_1", "--why", "reprocess"]) == 0

    assert job.bounds() == first
    job.run()
    job.assert_equals_reference()


def test_a_crash_between_the_snapshot_and_the_state_commit_is_rolled_forward(
    spark, tmp_path, store
):
    job = IcebergHistoryJob(spark, tmp_path, store, delete_marker=OP_D)
    job.land([row(1, 10, "a"), row(2, 10, "b")])
    job.run()
    job.land([row(1, 20, "c"), row(1, 5, "z"), row(2, 30, "b", op="D")])

    with pytest.raises(Crash):
        job.run(hook=crash_at("commit.before"))
    job.run()

    job.assert_equals_reference()
    snapshots = job.snapshots()
    assert [s.run_id for s in snapshots] == ["jr_1", "jr_2"]  # the rerun had nothing to add
    assert any("rolled_forward_from_snapshot" in e for e in store.iter_history(job.job_name))


def test_a_crash_before_the_snapshot_commits_nothing_and_the_rerun_equals_the_reference(
    spark, tmp_path, store
):
    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([row(1, 10, "a")])
    job.run()
    job.land([row(1, 20, "c"), row(1, 5, "z")])

    with pytest.raises(Crash):
        job.run(hook=crash_at("iceberg.commit"))
    assert [s.run_id for s in job.snapshots()] == ["jr_1"]
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


# The warehouse on a local disk (the session's catalog), or on S3 through S3A (LocalStack:
# every data, manifest and metadata object in S3, as on Glue); the source stays local.
STORAGES = ["local", pytest.param("s3a", marks=pytest.mark.s3)]


@pytest.mark.parametrize("storage", STORAGES)
@settings(
    max_examples=30 if IN_DEEP_RUN else 2,
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
    where, root = {}, ""
    if storage == "s3a":
        root = request.getfixturevalue("s3_root")
        where = {"iceberg_catalog": s3_warehouse_catalog(spark, root)}
    job = IcebergHistoryJob(
        spark,
        tmp,
        store,
        partition_by=("part",),
        delete_marker=OP_D,
        history_columns=tracked or (),
        **where,
    )
    for batch in batches:
        job.land(batch)
        job.run()
    job.assert_equals_reference(tracked)
    if root:  # every data file in S3
        found = spark.sql(f"SELECT file_path FROM {job.config.iceberg_target.name}.files")
        assert all(r.file_path.startswith(f"{root}/warehouse/") for r in found.collect())


# -- attacks (issue 43): behaviours the history target promises that it does not keep yet ------


def test_a_row_with_a_list_column_gets_versions_like_any_other(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([{"id": 1, "updated": 10, "segment": "a", "tags": ["x", "y"]}])
    job.run()
    job.land([{"id": 1, "updated": 20, "segment": "b", "tags": ["x"]}])
    job.run()

    assert job.bounds() == [(1, 10, 20, False), (1, 20, None, True)]


def test_a_widened_watermark_column_widens_the_version_bounds(spark, tmp_path, store):
    narrow = "id bigint, updated int, segment string"
    job = IcebergHistoryJob(
        spark, tmp_path, store, history_columns=("segment",), source_schema=narrow
    )
    job.land([{"id": 1, "updated": 10, "segment": "a"}, {"id": 2, "updated": 10, "segment": "a"}])
    job.run()
    job.overrides["source_schema"] = narrow.replace("updated int", "updated bigint")
    job.land([{"id": 1, "updated": 3_000_000_000, "segment": "b"}])

    job.run()

    assert job.bounds() == [
        (1, 10, 3_000_000_000, False),
        (1, 3_000_000_000, None, True),
        (2, 10, None, True),
    ]


def test_a_reload_retyping_the_watermark_retypes_the_version_bounds(spark, tmp_path, store):
    # double to bigint is no widening: 2**53 + 1 is no double, so the reset's reload retypes
    # the column, and the bounds with it (Iceberg cannot promote: dropped and added again).
    job = IcebergHistoryJob(
        spark,
        tmp_path,
        store,
        history_columns=("segment",),
        source_schema="id bigint, updated double, segment string",
    )
    job.land([{"id": 1, "updated": 10, "segment": "a"}, {"id": 1, "updated": 20, "segment": "b"}])
    job.run()
    job.land([{"id": 2, "updated": 2**53 + 1, "segment": "a"}])
    store.reset(job.job_name, why="the watermark is an integer")

    job.run(source_schema="id bigint, updated bigint, segment string")

    assert job.bounds() == [(1, 10, 20, False), (1, 20, None, True), (2, 2**53 + 1, None, True)]


def test_a_batched_dry_run_counts_the_versions_of_every_batch_it_lists(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",), max_batch_files=1)
    for updated, segment in ((10, "a"), (20, "b"), (30, "c")):
        job.land([row(1, updated, segment)])

    dry = job.run(dry_run=True)

    assert job.snapshots() == [] and store.get_watermark(job.job_name) is None
    real = job.run()

    assert len(dry["plan"]["batches"]) == real["batches"] == 3
    counts = ("versions_opened", "versions_closed")
    assert [real[name] for name in counts] == [3, 2]
    assert [dry[name] for name in counts] == [real[name] for name in counts]


def test_changing_the_tracked_columns_of_a_loaded_target_is_refused_in_one_line(
    spark, tmp_path, store
):
    from glue_incremental.history.errors import HistoryError

    job = IcebergHistoryJob(spark, tmp_path, store, history_columns=("segment",))
    job.land([row(1, 10, "a", note="x"), row(1, 20, "a", note="y")])
    job.run()
    job.overrides["history_columns"] = ("segment", "note")
    job.land([row(1, 30, "a", note="z")])
    snapshots, state = job.snapshots(), store.get_watermark(job.job_name)

    with pytest.raises(HistoryError) as raised:
        job.run()

    assert "history_columns" in str(raised.value) and "\n" not in str(raised.value)
    assert (raised.value.old, raised.value.new) == (["segment"], ["note", "segment"])
    assert (job.snapshots(), store.get_watermark(job.job_name)) == (snapshots, state)
    store.reset(job.job_name, why="track the note")
    job.run()  # the reset the refusal advises: the history rebuilt under the new columns
    assert job.bounds() == [(1, 10, 20, False), (1, 20, 30, False), (1, 30, None, True)]


def test_a_source_column_named_like_an_added_one_in_capitals_is_refused_in_one_line(
    spark, tmp_path, store
):
    from glue_incremental.history.errors import HistoryColumnTaken

    job = IcebergHistoryJob(spark, tmp_path, store)
    job.land([{"id": 1, "updated": 10, "segment": "a", "VALID_FROM": "2020-01-01"}])

    with pytest.raises(HistoryColumnTaken) as raised:
        job.run()

    assert "\n" not in str(raised.value)


def test_a_tracked_value_of_nan_delivered_again_opens_no_version(spark, tmp_path, store):
    job = IcebergHistoryJob(spark, tmp_path, store)
    for name, updated in (("a.json", 10), ("b.json", 20)):
        job.clock.now += 10
        path = job.tmp / "source" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'{{"id": 1, "updated": {updated}, "score": NaN}}\n')
        os.utime(path, (job.clock.now, job.clock.now))
        job.run()

    assert job.bounds() == [(1, 10, None, True)]


def test_a_run_refused_for_a_null_watermark_alters_no_column_it_widens(spark, tmp_path, store):
    narrow = "id bigint, updated bigint, segment string, qty int"
    job = IcebergHistoryJob(spark, tmp_path, store, source_schema=narrow)
    job.land([{"id": 1, "updated": 10, "segment": "a", "qty": 1}])
    job.run()
    before = job.snapshots()
    job.overrides["source_schema"] = narrow.replace("qty int", "qty bigint")
    job.land(
        [
            {"id": 2, "updated": 20, "segment": "b", "qty": 3_000_000_000},
            {"id": 3, "updated": None, "segment": "c", "qty": 1},
        ]
    )

    with pytest.raises(NullWatermark):
        job.run()

    assert job.snapshots() == before
    table = job.spark.table(job.config.iceberg_target.name)
    assert dict(table.dtypes)["qty"] == "int"  # no ALTER TABLE either
