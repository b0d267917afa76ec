"""An Iceberg target's deliveries table: entries appended by each run, the later delivery of
a key and values read back, whatever order the runs appended them in."""

from __future__ import annotations

import pytest
from glue_incremental.targets.iceberg import deliveries
from glue_incremental.targets.iceberg.tables import IcebergTarget
from pyspark.sql import functions as F

from tests.harness.iceberg import unique_table

pytestmark = pytest.mark.spark

ROW = "id bigint, qty int"
DELIVERED = f"{ROW}, modified bigint, name string"


def record(spark, target, *rows):
    merged = spark.createDataFrame(list(rows), DELIVERED)
    deliveries.record(spark, target, merged, ["id"], ["modified", "name"], replace_all=False)


def kept(spark, target, *rows):
    stored = spark.createDataFrame(list(rows), ROW)
    types = spark.createDataFrame([], DELIVERED).schema
    found = deliveries.with_kept_delivery(
        spark, target, stored, ["id"], ["modified", "name"], types
    )
    return sorted(tuple(row) for row in found.collect())


def test_a_key_and_values_delivered_again_read_as_their_latest_delivery_in_any_order(spark):
    target = IcebergTarget(unique_table("deliveries"))
    record(spark, target, (1, 5, 20, "b.json"), (2, 7, 10, "a.json"))
    record(spark, target, (1, 5, 30, "c.json"))  # the same values, delivered later
    record(spark, target, (1, 5, 10, "z.json"), (2, 7, 10, "b.json"))  # earlier; a later name

    assert kept(spark, target, (1, 5), (2, 7)) == [(1, 5, 30, "c.json"), (2, 7, 10, "b.json")]


def test_an_entry_of_other_values_matches_no_stored_row(spark):
    target = IcebergTarget(unique_table("deliveries"))
    record(spark, target, (1, 6, 40, "d.json"))  # a version the table does not hold

    assert kept(spark, target, (1, 5)) == [(1, 5, None, None)]


def test_a_runs_merge_read_through_a_view_keeps_the_deliveries_it_read_before_its_own(spark):
    # The publish persists the merge (stored rows with their kept deliveries), records its
    # own entries, then MERGEs from a view of the persisted rows: the view must not read
    # the side table again (it would see the run's entries, and redo the whole merge).
    target = IcebergTarget(unique_table("deliveries"))
    record(spark, target, (1, 5, 20, "b.json"))
    stored = spark.createDataFrame([(1, 5)], ROW)
    types = spark.createDataFrame([], DELIVERED).schema
    merged = deliveries.with_kept_delivery(
        spark, target, stored, ["id"], ["modified", "name"], types
    ).persist()
    merged.count()
    view = f"kept_{unique_table('view').split('.')[-1]}"
    merged.createOrReplaceTempView(view)

    redelivered = merged.withColumn("modified", F.lit(30)).withColumn("name", F.lit("c.json"))
    deliveries.record(spark, target, redelivered, ["id"], ["modified", "name"], replace_all=False)

    assert [tuple(row) for row in spark.table(view).collect()] == [(1, 5, 20, "b.json")]
    spark.catalog.dropTempView(view)
    merged.unpersist()
