"""Attacks on the key index (``--partition_moves detect``, the default) with real Spark.

Keys and partition values an adversarial source can send: a null key (which the
merge treats as one key) moving partition, a composite key with a null part,
partition values that need Hive escaping or are null, two keys swapping
partitions in one run. After each: the target equals a full refresh computed in
pure Python, and no key is there twice.
"""

from __future__ import annotations

import pytest

from tests.harness import reference
from tests.harness.loads import read_parquet
from tests.harness.reference import as_tuples
from tests.integration.test_incremental_load_files import row
from tests.integration.test_key_index import Job

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
