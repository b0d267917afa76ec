"""The ``Source`` contract on a file dataset: planning writes nothing, reading returns what
is new, and the state a source leaves makes the next plan read nothing again.

(A JDBC table keeps the same contract; its runs are covered end to end, against
PostgreSQL, in ``test_incremental_load_jdbc.py``.)
"""

from __future__ import annotations

import shutil

import pytest
from glue_incremental.engine.sides import FileSideSource, plan_side, read_full
from glue_incremental.load import sources as load_sources
from glue_incremental.partitions.predicates import filter_partitions
from glue_incremental.run.context import IncrementalRun
from glue_incremental.sources.listing import SourceNotFound

from tests.harness import joins
from tests.harness.change_rows import load_target_rows
from tests.harness.file_jobs import Job, row
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.joins import config_for, land, left_row
from tests.harness.loads import FixedClock, json_files_config, write_json_file

pytestmark = pytest.mark.spark
T0 = 1_700_000_000


def planned(spark, store, config, run_id: str, now: float, *, commit: bool = False):
    """Plan and read one run; with ``commit``, commit the state its plan leaves."""
    run = IncrementalRun(
        spark=spark,
        job_name="files",
        run_id=run_id,
        store=store,
        clock=FixedClock(now),
        publish_metrics=False,
    )
    with run:
        plan = load_sources.build(config).plan(run)
        rows = plan.read()
        found = {tuple(r) for r in rows.select("id", "updated").collect()} if rows else set()
        if commit:
            run.commit({"default": {**plan.carried.to_state(), "published_at_ms": 1}})
    return plan, found


def test_a_file_source_plans_without_writing_and_reads_exactly_what_is_new(spark, store, tmp_path):
    config = json_files_config(tmp_path)
    write_json_file(tmp_path / "source", [{"id": 1, "updated": 5}], mtime=T0)
    before = sorted(p.name for p in tmp_path.rglob("*"))

    plan, found = planned(spark, store, config, "jr_1", T0 + 3600, commit=True)

    assert found == {(1, 5)}
    assert plan.summary["source"] == "files" and plan.delivery
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written
    assert plan.carried.files is not None and plan.carried.discovery is not None

    write_json_file(tmp_path / "source", [{"id": 2, "updated": 6}], mtime=T0 + 7200)
    _, found = planned(spark, store, config, "jr_2", T0 + 3 * 3600)
    assert found == {(2, 6)}


# ------------------------------------------------------------ one file dataset for both users
#
# The load's ``FileDatasetSource`` and a join's ``FileSideSource`` plan with the same
# ``sources.file_dataset.FileDataset``: its contract runs once for each user, on the
# dataset that user builds from its own configuration.


def dataset_of(user: str, tmp_path):
    root = (tmp_path / "files").as_uri()
    if user == "load":
        return load_sources.FileDatasetSource(json_files_config(tmp_path, source=root)).dataset
    return FileSideSource.of(config_for(tmp_path, left_path=root), "left").dataset


def names(plan) -> list[str]:
    return [source.uri.rsplit("/", 1)[1] for source in plan.files]


@pytest.mark.parametrize("user", ["load", "join side"])
def test_a_file_dataset_plans_its_new_files_and_the_states_it_leaves_read_nothing_again(
    spark, tmp_path, user
):
    dataset = dataset_of(user, tmp_path)
    first = write_json_file(tmp_path / "files", [{"id": 1}], mtime=T0)
    later = write_json_file(tmp_path / "files", [{"id": 2}], mtime=T0 + 60)
    before = sorted((p.name, p.stat().st_mtime) for p in tmp_path.rglob("*"))

    plan = dataset.plan(
        spark, None, None, run_start_ms=(T0 + 3600) * 1000, upper_bound_ms=T0 * 1000
    )

    assert names(plan) == [first.name]  # ``later`` is past the upper bound: left for later
    assert sorted((p.name, p.stat().st_mtime) for p in tmp_path.rglob("*")) == before
    again = dataset.plan(
        spark, plan.next_bookmark, plan.next_state, run_start_ms=(T0 + 7200) * 1000
    )
    assert names(again) == [later.name]
    settled = dataset.plan(
        spark, again.next_bookmark, again.next_state, run_start_ms=(T0 + 9000) * 1000
    )
    assert names(settled) == [] and settled.late_files == 0


def test_a_load_of_an_absent_root_fails_and_a_join_side_of_it_is_empty(spark, tmp_path):
    with pytest.raises(SourceNotFound):
        dataset_of("load", tmp_path).plan(spark, None, None, run_start_ms=T0 * 1000)

    side = dataset_of("join side", tmp_path).plan(spark, None, None, run_start_ms=T0 * 1000)

    assert not side.exists and names(side) == [] and side.listing == ()


# ------------------------------------------------------------------ the join's side operations
#
# A join side (``engine.sides.SideSource``, one per side format) keeps the same contract and
# adds the join-only operations: the partitions its new rows touch, and a read of exactly
# the affected partitions, whole. Every implementation runs every behaviour below.


class FileSide:
    """A JSON-lines side in ``date=<p>`` directories, files landed at chosen times."""

    def __init__(self, tmp_path):
        self.config = config_for(tmp_path)
        self.root = tmp_path / "left"
        self.landed = 0

    def add(self, partition: str, rows: list[tuple[int, str]]) -> None:
        self.landed += 1
        land(self.root, partition, [left_row(k, v, 0) for k, v in rows], T0 + self.landed * 100)

    def fingerprint(self) -> list:
        return sorted((str(p), p.stat().st_mtime) for p in self.root.rglob("*"))


class IcebergSide:
    """A table partitioned by ``date``, one snapshot per ``add``."""

    def __init__(self, spark, tmp_path):
        table = unique_table("side")
        self.config = config_for(tmp_path, left_format="iceberg", left_path=table)
        self.name = f"{self.config.side_target('left').catalog}.{table}"
        self.spark = spark
        spark.sql(
            f"CREATE TABLE {self.name} (id BIGINT, value STRING, amount BIGINT, date STRING) "
            "USING iceberg PARTITIONED BY (date)"
        )

    def add(self, partition: str, rows: list[tuple[int, str]]) -> None:
        values = ", ".join(f"({k}, '{v}', 0, '{partition}')" for k, v in rows)
        self.spark.sql(f"INSERT INTO {self.name} VALUES {values}")

    def fingerprint(self) -> list:
        return [tuple(r) for r in self.spark.sql(f"SELECT * FROM {self.name}.snapshots").collect()]


@pytest.fixture(params=["files", pytest.param("iceberg", marks=requires_iceberg)])
def side_world(request, spark, tmp_path):
    return FileSide(tmp_path) if request.param == "files" else IcebergSide(spark, tmp_path)


def planned_side(spark, store, world, run_id: str, now: float, *, commit: bool = False):
    """Plan the left side in one run; with ``commit``, commit the state it leaves."""
    run = IncrementalRun(
        spark=spark,
        job_name="side",
        run_id=run_id,
        store=store,
        clock=FixedClock(now),
        publish_metrics=False,
    )
    with run:
        side = plan_side(run, world.config, "left")
        if commit:
            run.commit({"left": side.leaves((), 1, None).to_state()})
    return side


def side_rows(frame) -> set[tuple]:
    return {tuple(r) for r in frame.select("date", "id", "value").collect()} if frame else set()


def test_a_side_plans_without_writing_and_its_new_rows_name_the_touched_partitions(
    spark, store, side_world
):
    side_world.add("2024-01-01", [(1, "a")])
    side_world.add("2024-01-02", [(2, "b")])
    before = side_world.fingerprint()

    side = planned_side(spark, store, side_world, "jr_1", T0 + 3600, commit=True)

    assert side_world.fingerprint() == before
    assert side.has_schema and side.exists
    assert side_rows(side.new_rows) == {("2024-01-01", 1, "a"), ("2024-01-02", 2, "b")}
    assert side_rows(planned_side(spark, store, side_world, "jr_2", T0 + 7200).new_rows) == set()


def test_a_side_reads_exactly_the_affected_partitions_whole(spark, store, side_world):
    side_world.add("2024-01-01", [(1, "a")])
    side_world.add("2024-01-02", [(2, "b")])
    planned_side(spark, store, side_world, "jr_1", T0 + 3600, commit=True)
    side_world.add("2024-01-01", [(3, "c")])

    side = planned_side(spark, store, side_world, "jr_2", T0 + 3 * 3600)
    whole = read_full(spark, side, [("2024-01-01",)], ("date",))
    affected = filter_partitions(whole, [("2024-01-01",)], ("date",))

    assert side_rows(side.new_rows) == {("2024-01-01", 3, "c")}
    assert side_rows(affected) == {("2024-01-01", 1, "a"), ("2024-01-01", 3, "c")}


def test_a_side_before_any_data_reads_nothing_and_has_no_schema_yet(spark, store, side_world):
    side = planned_side(spark, store, side_world, "jr_1", T0 + 3600)

    assert side.new_rows is None
    assert not side.has_schema and not side.exists


def test_a_load_whose_source_root_disappeared_fails_in_one_line_committing_nothing(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="vanished")
    job.land([row(1, "a", 10, "x")])
    job.run()
    before = store.get_watermark("vanished")
    shutil.rmtree(tmp_path / "source")

    with pytest.raises(SourceNotFound) as error:
        job.run()

    assert "\n" not in str(error.value) and "source" in str(error.value)
    assert store.get_watermark("vanished") == before
    assert load_target_rows(job) == [(1, "a", 10, "x")]


def test_a_join_side_whose_root_vanishes_waits_and_once_restored_equals_the_full_recompute(
    spark, store, tmp_path
):
    config = joins.config_for(tmp_path, "inner")
    name, t0 = "vanishes", joins.T0
    left_root, right_root = tmp_path / "left", tmp_path / "right"
    left = [("d1", 1, "a", 1)]
    right = [("d1", 1, "r", "x"), ("d1", 2, "r", "y")]
    joins.land(left_root, "d1", [joins.left_row(1, "a", 1)], t0 - 100)
    joins.land(right_root, "d1", [joins.right_row(1, "r", "x")], t0 - 100)
    joins.land(right_root, "d1", [joins.right_row(2, "r", "y")], t0 - 100)
    joins.run_at(spark, config, store, job_name=name, run_id="jr_1", now=t0)
    shutil.move(right_root, tmp_path / "right.moved")
    left.append(("d1", 2, "b", 2))
    joins.land(left_root, "d1", [joins.left_row(2, "b", 2)], t0 + 10)

    joins.run_at(spark, config, store, job_name=name, run_id="jr_2", now=t0 + 60)
    shutil.move(tmp_path / "right.moved", right_root)  # restored as it was: nothing new
    joins.run_at(spark, config, store, job_name=name, run_id="jr_3", now=t0 + 120)

    joins.assert_output(spark, config, left, right, "inner")
