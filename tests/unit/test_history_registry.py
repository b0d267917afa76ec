"""Which history target ``--history scd2`` builds, by ``--target_format`` (no Spark)."""

from __future__ import annotations

from glue_incremental.history.options import HistoryOptions
from glue_incremental.targets import registry
from glue_incremental.targets.iceberg.history import IcebergHistoryTarget, merge_statement
from glue_incremental.targets.parquet.history import ParquetHistoryTarget

HISTORY = HistoryOptions("updated")


def test_history_on_an_iceberg_table_builds_the_iceberg_history_target():
    options = registry.TargetOptions(
        "iceberg", table="analytics.customers", partition_by=("part",), history=HISTORY
    )

    built = registry.build(options)

    assert isinstance(built, IcebergHistoryTarget)
    assert (built.table.name, built.partition_by) == ("glue_catalog.analytics.customers", ("part",))
    assert built.history == HISTORY


def test_history_on_a_parquet_path_still_builds_the_parquet_history_target():
    built = registry.build(registry.TargetOptions("parquet", path="/tmp/t", history=HISTORY))

    assert isinstance(built, ParquetHistoryTarget)


def test_the_merge_matches_one_stored_row_by_key_role_and_start():
    statement = merge_statement("`c`.`db`.`t`", "v", ["id", "valid_from"], ["id"], HISTORY)

    assert "ON t.`id` <=> s.`id` AND t.`__history_role` = s.`__history_role` AND " in statement
    assert "t.`valid_from` = s.`valid_from`" in statement
    assert "WHEN MATCHED AND s.`__history_op` = 'delete' THEN DELETE" in statement
    assert "WHEN NOT MATCHED AND s.`__history_op` = 'upsert' THEN INSERT" in statement
