"""``--schema_evolution``: a file source that adds, drops, widens or retypes columns between runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental.join import JoinJobConfig, JoinSpec
from glue_incremental.schema.evolution import RESCUED_COLUMN, SchemaChangeError
from glue_incremental.targets.iceberg import writer as iceberg_writer
from glue_incremental.watermarks import Watermarks, create_table
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import reference
from tests.harness.file_jobs import Job, row
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.joins import run_at
from tests.harness.loads import (
    FixedClock,
    json_files_config,
    partition_file_snapshot,
    run_load_at,
    write_json_file,
)

pytestmark = pytest.mark.spark

QUICK = os.environ.get("HYPOTHESIS_PROFILE", "quick") != "deep"


def read_merged(spark, target: Path):
    """The Parquet target as a reader that merges the files' schemas sees it."""
    return spark.read.option("mergeSchema", "true").parquet(target.as_uri())


def rows_by_id(frame, *columns: str) -> dict:
    return {r["id"]: tuple(r[c] for c in columns) for r in frame.collect()}


def test_a_new_source_column_joins_the_target_and_a_dropped_one_stays_null_for_new_rows(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y")])
    job.run()
    job.land([{"id": 2, "part": "b", "updated": 20, "discount": 5}])

    summary = job.run()

    assert summary["schema_changes"] == [
        "missing value (kept, null for new rows)",
        "added discount bigint",
    ]
    seen = read_merged(spark, job.target)
    assert rows_by_id(seen, "value", "discount") == {1: ("x", None), 2: (None, 5)}


def test_a_widened_column_rewrites_the_parquet_target_once_with_the_wider_type(
    spark, tmp_path, store
):
    narrow = "id long, part string, updated long, value string, qty int"
    wide = "id long, part string, updated long, value string, qty long"
    job = Job(spark, tmp_path, store, source_schema=narrow)
    job.land([{**row(1, "a", 10, "x"), "qty": 1}, {**row(2, "b", 10, "y"), "qty": 2}])
    job.run()
    job.land([{**row(2, "b", 20, "y2"), "qty": 3_000_000_000}])

    summary = job.run(source_schema=wide)

    assert summary["schema_changes"] == ["widened qty int to bigint"]
    seen = spark.read.parquet(job.target.as_uri())  # one type in every file: no merge needed
    assert dict(seen.dtypes)["qty"] == "bigint"
    assert rows_by_id(seen, "qty") == {1: (1,), 2: (3_000_000_000,)}


def test_rescue_keeps_new_columns_and_misfit_values_as_json_and_the_run_goes_on(
    spark, tmp_path, store
):
    declared = "id long, part string, updated long, value string, qty long"
    job = Job(spark, tmp_path, store, source_schema=declared, schema_evolution="rescue")
    job.land([{**row(1, "a", 10, "x"), "qty": 1}])
    job.run()
    job.land(
        [
            {**row(2, "a", 20, "y"), "qty": "12", "note": "n2"},
            {**row(3, "a", 20, "z"), "qty": "many"},
        ]
    )

    summary = job.run(
        source_schema="id long, part string, updated long, value string, qty string, note string",
        schema_evolution="rescue",
    )

    assert summary["committed"] is True
    assert "added _rescued_data string" in summary["schema_changes"]
    seen = rows_by_id(read_merged(spark, job.target), "qty", RESCUED_COLUMN)
    assert seen[1] == (1, None)
    assert seen[2][0] == 12 and json.loads(seen[2][1]) == {"note": "n2"}
    assert seen[3][0] is None and json.loads(seen[3][1]) == {"qty": "many"}
    assert "note" not in read_merged(spark, job.target).columns


def test_fail_refuses_a_new_column_in_one_line_and_writes_nothing(spark, tmp_path, store):
    job = Job(spark, tmp_path, store, schema_evolution="fail")
    job.land([row(1, "a", 10, "x")])
    job.run()
    state, before = store.get_watermark("orders"), partition_file_snapshot(job.target)
    job.land([{**row(2, "a", 20, "y"), "discount": 5}])

    with pytest.raises(SchemaChangeError, match="'discount' is new") as refused:
        job.run()

    assert "\n" not in str(refused.value)
    assert partition_file_snapshot(job.target) == before
    assert store.get_watermark("orders") == state


@requires_iceberg
def test_iceberg_adds_and_widens_columns_by_its_own_schema_evolution_without_rewriting_files(
    spark, tmp_path, store
):
    table = unique_table("schema_evolution")
    name = iceberg_writer.IcebergTarget(table).name
    narrow = "id long, part string, updated long, value string, qty int"
    options = {"target_format": "iceberg", "target_table": table, "target_path": ""}
    job = Job(spark, tmp_path, store, source_schema=narrow, **options)
    job.land([{**row(1, "a", 10, "x"), "qty": 1}])
    job.run()
    files_before = {r[0] for r in spark.sql(f"SELECT file_path FROM {name}.files").collect()}
    job.land([{**row(2, "b", 20, "y"), "qty": 3_000_000_000, "note": "new"}])

    summary = job.run(source_schema=narrow.replace("qty int", "qty long, note string"), **options)

    assert summary["schema_changes"] == ["widened qty int to bigint", "added note string"]
    seen = spark.table(name)
    assert dict(seen.dtypes)["qty"] == "bigint"
    assert rows_by_id(seen, "qty", "note") == {1: (1, None), 2: (3_000_000_000, "new")}
    files_after = {r[0] for r in spark.sql(f"SELECT file_path FROM {name}.files").collect()}
    assert files_before <= files_after, "a data file of the first run was rewritten"
    assert len(iceberg_writer.snapshots(spark, iceberg_writer.IcebergTarget(table))) == 2


NARROW = "id long, part string, updated long, value string, qty int"
COLUMNS_WIDE = ["id", "part", "updated", "value", "qty", "discount"]

# One step: a batch landed (rows with qty and discount in the file), or a run whose source
# declares `discount` from the first run that says so on, and `qty` as bigint likewise.
EVOLVING_STEPS = st.lists(
    st.one_of(
        st.lists(
            st.tuples(st.integers(1, 4), st.sampled_from("ab"), st.integers(1, 30)),
            min_size=1,
            max_size=3,
            unique_by=lambda t: (t[0], t[2]),
        ).map(lambda rows: ("batch", rows)),
        st.tuples(st.just("run"), st.booleans(), st.booleans()),
    ),
    min_size=2,
    max_size=6,
)


@settings(max_examples=5 if QUICK else 200)
@given(steps=EVOLVING_STEPS)
def test_property_columns_that_appear_and_widen_between_runs_equal_the_reference(
    spark, tmp_path_factory, aws, steps
):
    create_table()
    store = Watermarks()
    tmp = tmp_path_factory.mktemp("evolving")
    clock = FixedClock(1_700_000_000.0)
    runs, added, widened = 0, False, False
    columns_of_run: dict[int, list[str]] = {}
    deliveries = []
    job_name = f"prop_{tmp.name}"  # examples share the watermarks table
    first: tuple = ("batch", [(1, "a", 1)])
    for step in [first, *steps, ("run", False, False)]:
        clock.now += 30
        if step[0] == "batch":
            rows = [
                {"id": k, "part": p, "updated": u, "value": f"v{u}", "qty": u, "discount": k * u}
                for k, p, u in step[1]
            ]
            path = write_json_file(tmp / "source", rows, mtime=clock.now)
            deliveries += [((runs + 1, path.stat().st_mtime_ns, path.name), r) for r in rows]
            continue
        added, widened = added or step[1], widened or step[2]
        declared = NARROW.replace("qty int", "qty long") if widened else NARROW
        declared += ", discount long" if added else ""
        runs += 1
        columns_of_run[runs] = [part.split()[0] for part in declared.split(", ")]
        clock.now += 1
        config = json_files_config(tmp, partition_by=("part",), source_schema=declared)
        run_load_at(spark, config, job_name=job_name, run_id=f"jr_{runs}", clock=clock, store=store)

    expected = reference.latest_per_key(
        reference.as_loaded(deliveries, columns_of_run, COLUMNS_WIDE), ("id",), "updated"
    )
    if not added:
        expected = [{k: v for k, v in r.items() if k != "discount"} for r in expected]
    seen = read_merged(spark, tmp / "target").collect() if expected else []
    assert len(seen) == len({r["id"] for r in seen}), "a key is there twice"
    assert sorted(str(sorted(r.asDict().items())) for r in seen) == sorted(
        str(sorted(r.items())) for r in expected
    )


def test_a_join_reading_a_load_target_keeps_the_column_only_its_newer_files_carry(
    spark, tmp_path, store
):
    """An upstream load added ``channel`` in a later run: its older files lack it, and a
    join reading old and new partitions together still gets it (null for older rows)."""
    job = Job(spark, tmp_path / "orders", store)
    job.land([row(1, "a", 10, "x")])
    job.run()
    job.land([{"id": 2, "part": "b", "updated": 20, "value": "y", "channel": "web"}])
    job.run()
    right = tmp_path / "customers"
    for part, key in (("a", 1), ("b", 2)):
        (right / f"part={part}").mkdir(parents=True)
        path = right / f"part={part}" / "0.json"
        path.write_text(json.dumps({"id": key, "label": f"l{key}"}) + "\n")
        os.utime(path, (job.clock.now, job.clock.now))
    config = JoinJobConfig(
        left_path=job.target.as_uri(),
        right_path=right.as_uri(),
        right_format="json",
        spec=JoinSpec(("id",), "left", ("part",)),
        target_path=(tmp_path / "enriched").as_uri(),
    )

    run_at(spark, config, store, job_name="enriched", run_id="j1", now=job.clock.now + 60)

    joined = read_merged(spark, tmp_path / "enriched")
    assert rows_by_id(joined, "value", "channel", "label") == {
        1: ("x", None, "l1"),
        2: ("y", "web", "l2"),
    }


def _parquet_file(directory: Path, name: str, table, mtime: float) -> None:

    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / name)
    os.utime(directory / name, (mtime, mtime))


def test_parquet_source_files_of_one_batch_with_and_without_a_new_column_keep_it(
    spark, tmp_path, store
):
    # Seed 002: Glue's own Parquet writer adds a column between files. Read in one batch, the
    # older file first, Spark would take its footer alone and drop the newer file's column.

    source = tmp_path / "source"
    _parquet_file(source, "a.parquet", pa.table({"id": [1], "updated": [10]}), FixedClock(1e9).now)
    _parquet_file(
        source,
        "b.parquet",
        pa.table({"id": [2], "updated": [20], "channel": ["web"]}),
        FixedClock(1e9).now + 10,
    )
    config = json_files_config(tmp_path, source_format="parquet")

    summary = run_load_at(
        spark, config, job_name="orders", run_id="jr_1", clock=FixedClock(2e9), store=store
    )

    assert summary["records_written"] == 2
    assert rows_by_id(read_merged(spark, tmp_path / "target"), "channel") == {
        1: (None,),
        2: ("web",),
    }


def test_parquet_source_files_of_one_batch_with_two_types_of_a_column_are_one_line(
    spark, tmp_path, store
):

    source = tmp_path / "source"
    narrow = pa.table({"id": [1], "updated": [10], "qty": pa.array([1], pa.int32())})
    wide = pa.table({"id": [2], "updated": [20], "qty": pa.array([2], pa.int64())})
    _parquet_file(source, "a.parquet", narrow, 1e9)
    _parquet_file(source, "b.parquet", wide, 1e9 + 10)
    config = json_files_config(tmp_path, source_format="parquet")

    with pytest.raises(SchemaChangeError) as raised:
        run_load_at(
            spark, config, job_name="orders", run_id="jr_1", clock=FixedClock(2e9), store=store
        )

    assert raised.value.column == "qty"
    assert "\n" not in str(raised.value) and "int" in str(raised.value)
    assert not (tmp_path / "target").exists() and store.get_watermark("orders") is None


def test_a_key_written_as_text_in_a_later_file_is_refused_with_one_line_writing_nothing(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "v1"), row(2, "b", 1, "w1")])
    job.run()
    before = partition_file_snapshot(job.target)
    job.land([{**row(1, "b", 2, "v2"), "id": "1"}])

    with pytest.raises(SchemaChangeError, match="column 'id' is string in the source") as bad:
        job.run()

    assert "\n" not in str(bad.value)
    assert partition_file_snapshot(job.target) == before
