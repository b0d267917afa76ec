"""The condition a stored row holding an incoming key meets (``keys.ranges.within``): the
batch's integer key range, null when a key is null, and none it cannot be sure of."""

from glue_incremental.keys.ranges import KeyRange, within
from glue_incremental.targets.iceberg.statements import merge_statement
from pyspark.sql.types import IntegerType, LongType, StringType


def test_integer_keys_give_their_range():
    assert within(KeyRange(3, 10, 0), "id", LongType()) == "(`id` BETWEEN 3 AND 10)"


def test_a_null_incoming_key_lets_stored_null_keys_through():
    assert within(KeyRange(3, 10, 2), "id", IntegerType(), "t.") == (
        "(t.`id` BETWEEN 3 AND 10 OR t.`id` IS NULL)"
    )
    assert within(KeyRange(None, None, 4), "id", IntegerType()) == "(`id` IS NULL)"


def test_no_condition_without_an_integer_range():
    assert within(None, "id", LongType()) is None
    assert within(KeyRange("a", "z", 0), "id", StringType()) is None  # bounds may order apart
    assert within(KeyRange("3", "10", 0), "id", IntegerType()) is None  # a partition key's text


def test_the_merge_matches_only_rows_within_the_condition():
    statement = merge_statement("t_", "src", ["id", "v"], ["id"], within="(t.`id` BETWEEN 1 AND 2)")
    assert "ON t.`id` <=> s.`id` AND (t.`id` BETWEEN 1 AND 2) WHEN MATCHED" in statement
