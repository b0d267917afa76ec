"""Which history target ``--history scd2`` or a script's ``write(history=...)`` builds, by
output format (no Spark)."""

from __future__ import annotations

import pytest
from glue_incremental.custom import DeclarationError, iceberg
from glue_incremental.engine.history import history_target
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


def test_a_scripts_history_on_an_iceberg_output_is_refused_in_one_line_naming_it():
    output = iceberg("analytics.customers")

    with pytest.raises(DeclarationError) as refused:
        history_target(None, "dim", output, HISTORY, ["id", "updated"])  # type: ignore[arg-type]

    assert str(refused.value) == (
        "write('dim', history=...): output 'dim' is iceberg: a script keeps history on a "
        "parquet output only; nothing was written"
    )
