"""The deliveries table beside an Iceberg target: its name and the merge that moves entries
forward (plain Python: the statements, not Spark)."""

from __future__ import annotations

from glue_incremental.targets.iceberg.deliveries import (
    ROW_HASH,
    _later,
    _merge_statement,
    side_table,
)
from glue_incremental.targets.iceberg.tables import IcebergTarget


def test_the_deliveries_table_sits_beside_the_target_in_its_catalog():
    side = side_table(IcebergTarget("curated.orders", "lake"))

    assert (side.catalog, side.table) == ("lake", "curated.orders__delivery")


def test_an_entry_moves_only_to_a_later_delivery_compared_column_by_column():
    assert _later(["modified", "name"]) == (
        "(s.`modified` > t.`modified`) OR (s.`modified` = t.`modified` AND s.`name` > t.`name`)"
    )


def test_entries_match_on_the_key_and_the_row_hash_and_are_never_deleted_by_an_upsert():
    statement = _merge_statement("`c`.`db`.`t__delivery`", "v", ["id", "part"], ["m"])

    assert f"t.`id` <=> s.`id` AND t.`part` <=> s.`part` AND t.{ROW_HASH} = s.{ROW_HASH}" in (
        statement
    )
    assert "WHEN MATCHED AND ((s.`m` > t.`m`)) THEN UPDATE SET *" in statement
    assert "DELETE" not in statement
