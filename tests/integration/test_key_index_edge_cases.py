"""The key index (``--partition_moves detect``, the default) with real Spark.

Keys and partition values an adversarial source can send: a null key (which the
merge treats as one key) moving partition (also on Iceberg), partition values that
need Hive escaping or are null, two keys swapping partitions in one run, a key that
includes one partition column, and a crash inside a compacting publish. After each:
the target equals a full refresh computed in pure Python, and no key is there twice.
"""

from __future__ import annotations

import shutil

import pytest
from glue_incremental.keys import index as key_index
from glue_incremental.keys import ranges as key_range

from tests.harness import reference
from tests.harness.change_rows import load_full_refresh, load_target_rows
from tests.harness.faults import DEEP, StepCounter, crash_points, use_filesystem
from tests.harness.file_jobs import COLUMNS, T0, Job, config_for, row, target_rows
from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.loads import (
    FixedClock,
    read_parquet,
    run_load_at,
    write_json_file,
)
from tests.harness.reference import as_tuples

pytestmark = pytest.mark.spark


def test_a_null_key_moving_partition_leaves_its_old_partition(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(None, "a", 10, "null key"), row(2, "a", 10, "y")])
    job.run()
    job.land([row(None, "b", 20, "null key moved"), row(3, "c", 20, "typed")])  # id: long

    job.run()

    job.assert_equals_full_refresh()


def test_a_null_key_moving_partition_when_the_index_is_rebuilt_leaves_its_old_partition(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(None, "a", 10, "null key"), row(2, "a", 10, "y")])
    job.run(partition_moves="ignore")  # no index: the next detect run rebuilds it
    job.land([row(None, "b", 20, "null key moved"), row(3, "c", 20, "typed")])  # id: long

    job.run()

    job.assert_equals_full_refresh()


def test_two_keys_swapping_partitions_in_one_run_end_up_once_each(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "b", 10, "y"), row(3, "c", 10, "z")])
    job.run()
    job.land([row(1, "b", 20, "x to b"), row(2, "a", 20, "y to a")])

    job.run()

    job.assert_equals_full_refresh()


ESCAPED = ["a/b", "x=y%z", None, "sp ace:ünï", "__HIVE_DEFAULT_PARTITION__x", "#?*[]"]


def test_a_key_moving_through_partition_values_that_need_escaping_stays_in_one_place(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "plain", 10, "start"), row(2, "a/b", 10, "neighbour")])
    job.run()
    for step, part in enumerate(ESCAPED, start=2):
        job.land([row(1, part, 10 * step, f"in {part!r}")])
        job.run()
        job.assert_equals_full_refresh()


def test_a_key_that_includes_one_partition_column_moving_in_the_other_stays_in_one_place(
    spark, tmp_path, store
):
    """Primary key (tenant, id), partitioned by (tenant, day): a row's day can change."""
    job = Job(spark, tmp_path, store, primary_key=("tenant", "id"), partition_by=("tenant", "day"))

    def order(tenant, key, day, updated):
        return {"tenant": tenant, "id": key, "day": day, "updated": updated}

    job.land([order("t1", 1, "d1", 10), order("t2", 1, "d1", 10), order("t1", 2, "d1", 10)])
    job.run()
    job.land([order("t1", 1, "d2", 20)])

    job.run()

    columns = ["tenant", "id", "day", "updated"]
    rows = reference.latest_per_key(
        reference.source_rows(tmp_path / "source"), ("tenant", "id"), "updated"
    )
    seen = read_parquet(spark, job.config.target_path, columns).collect()
    assert as_tuples([r.asDict() for r in seen], columns) == as_tuples(rows, columns)


def test_a_crash_at_every_step_of_a_compacting_publish_with_s3_renames_then_a_rerun_is_right(
    spark, tmp_path, store, monkeypatch
):
    """The merged segment replaces a live segment directory of the same name: with renames done
    as copy then delete, object by object, a crash anywhere in between must still converge."""
    monkeypatch.setattr(key_index, "MAX_SEGMENTS", 2)
    use_filesystem(monkeypatch, "copy_then_delete")
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 10, "x"), row(2, "a", 10, "y"), row(3, "b", 10, "z")])
    job.run()
    job.land([row(2, "b", 20, "y to b")])
    job.run()  # segments 1 and 2: the next publish compacts
    job.land([row(1, "c", 30, "x to c")], name="update.json")
    baseline = tmp_path / "baseline"
    shutil.copytree(job.target, baseline)
    counter = StepCounter()
    job.run(hook=counter)
    assert len(job.segments()) <= 2
    steps = [(name, details) for name, details in counter.steps if name.startswith("publish.")]
    # Deep: every step. By default steps on index objects (the data's are swept in
    # test_writer_crash_safety), the first of each kind and a spread, to keep `make test` lean.
    on_index = [k for k, (_, details) in enumerate(steps, start=1) if "/_index/" in str(details)]
    if DEEP:
        points = list(range(1, len(steps) + 1))
    else:
        points = [on_index[i - 1] for i in crash_points([steps[k - 1][0] for k in on_index])]
    assert points

    for k in points:
        job.crash_at_publish_step_then_rerun(
            k,
            baseline=baseline,
            rewound_to="jr_2",
            rows=[row(1, "a", 300, "x back"), row(2, "c", 300, "y to c")],
        )


@pytest.mark.usefixtures("spark")
@requires_iceberg
def test_an_older_version_of_a_null_key_does_not_replace_the_newer_one_in_an_iceberg_table(
    spark, tmp_path, store
):
    """A null key is one key (the MERGE matches it null-safe): its stored version is compared."""
    config = config_for(
        tmp_path,
        target_format="iceberg",
        target_table=unique_table(),
        target_path=None,
        partition_by=("part",),
    )
    clock = FixedClock(T0)
    newer = [row(None, "a", 20, "newer"), row(2, "a", 20, "newer")]
    write_json_file(tmp_path / "source", newer, mtime=clock.now)
    clock.now += 30
    run_load_at(spark, config, job_name="ice_null", run_id="jr_1", clock=clock, store=store)
    older = [row(None, "a", 10, "older, late"), row(2, "a", 10, "older, late")]
    write_json_file(tmp_path / "source", older, mtime=clock.now)
    clock.now += 30
    run_load_at(spark, config, job_name="ice_null", run_id="jr_2", clock=clock, store=store)

    rows = spark.table(config.iceberg_target.name).select("id", "value").collect()
    assert sorted((r["id"] or 0, r["value"]) for r in rows) == [(0, "newer"), (2, "newer")]


def test_a_key_moving_partition_twice_in_one_batch_and_again_in_the_next_stays_in_one_place(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "ü ñ", 1, "v1"), row(2, "a/b", 1, "w1")])
    job.run()
    job.land([row(1, "a/b", 2, "v2"), row(1, "c=d", 3, "v3"), row(2, "e f", 2, "w2")])
    job.land([row(1, None, 4, "v4"), row(2, "g%2Fh", 3, "w3"), row(2, "c=d", 4, "w4")])
    job.run(max_batch_files=1)
    job.land([row(1, "e f", 5, "v5"), row(1, "ü ñ", 6, "v6"), row(2, None, 5, "w5")])
    job.run()

    job.assert_equals_full_refresh()


@pytest.mark.parametrize(
    "keys",
    [[9, 10, -1, -12], ["pre", "prefix", "pré", "pre\U0001f600", "Z", "\uffff"]],
    ids=["numbers_that_order_differently_as_text", "strings_with_a_prefix_and_unicode"],
)
def test_the_least_and_greatest_stored_key_moving_partition_stay_in_one_place(
    spark, store, tmp_path, keys
):
    job = Job(spark, tmp_path, store, job_name="moves")
    job.land([row(key, "a", 10, "first") for key in keys])
    job.run()

    for updated, key in enumerate((max(keys), min(keys)), start=20):
        job.land([row(key, "b", updated, "moved")])
        job.run()

    seen = load_target_rows(job)
    assert len({r[0] for r in seen}) == len(seen), f"a key is there twice: {seen}"
    assert seen == load_full_refresh(job)


def test_a_listed_key_filter_finds_exactly_the_listed_keys_of_any_integer_or_string(spark):
    # Integers are written as SQL text (one JVM call), strings through isin: both exact,
    # whatever the column's name or the value's sign and size.
    # A run of consecutive keys is a range: its neighbours stay out.
    longs = [-(2**63), -7, 0, 2**31, 2**63 - 1, *range(10, 30), *range(2**63 - 20, 2**63 - 1)]
    frame = spark.createDataFrame([(v,) for v in [*longs, 1, 2, 9, 30]], "`we``ird` BIGINT")
    found = frame.where(key_index.is_listed("we`ird", longs)).collect()
    assert sorted(row[0] for row in found) == sorted(longs)
    names = ["o'brien", "back\\slash", "plain"]
    frame = spark.createDataFrame([(v,) for v in [*names, "other"]], "name STRING")
    found = frame.where(key_index.is_listed("name", names)).collect()
    assert sorted(row[0] for row in found) == sorted(names)


def test_a_key_that_is_also_a_partition_column_moving_in_the_other_stays_in_one_place(
    spark, tmp_path, store
):
    """Primary key id, partitioned by (part, id): the batch's own aggregate lists id as text,
    as the merge reads it."""
    job = Job(spark, tmp_path, store, partition_by=("part", "id"))
    job.land([row(1, "a", 10, "x"), row(2, "b", 11, "y")])
    job.run()
    job.land([row(1, "b", 20, "x2")])

    job.run()

    rows = reference.latest_per_key(reference.source_rows(tmp_path / "source"), ("id",), "updated")
    expected = [(str(key), *rest) for key, *rest in as_tuples(rows, COLUMNS)]  # a directory
    assert sorted(target_rows(job)) == sorted(expected)


def test_a_batchs_aggregate_lists_its_key_pairs_only_when_it_saw_every_row(spark):
    # The pairs stand in for the merge's survey only if none was left out: a batch of more
    # rows than can be listed, or read by more tasks than are collected from, gets none.
    def pairs(frame):
        expressions = key_range.aggregates(frame.schema, ["id"], ["part"], pairs=True)
        aggregate = key_range.numbered(frame).selectExpr(*expressions).first()
        found = key_range.from_aggregate(aggregate).pairs
        # Pairs not used never reach the driver (a big batch would ship 64 tasks' worth).
        assert (aggregate[key_range._PAIRS] is None) == (found is None)
        return found

    small = spark.createDataFrame([(1, "a"), (2, "b"), (1, "a")], "id bigint, part string")
    assert sorted(tuple(p) for p in pairs(small)) == [(1, "a"), (2, "b")]
    many_tasks = spark.range(0, 200, numPartitions=key_range.SURVEY_TASKS + 1)
    assert pairs(many_tasks.selectExpr("id", "'a' AS part")) is None
    many_rows = spark.range(0, key_index.MAX_LISTED_KEYS + 1, numPartitions=1)
    assert pairs(many_rows.selectExpr("id", "'a' AS part")) is None
