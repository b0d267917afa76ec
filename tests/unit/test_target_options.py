"""Each target format checks its own options as ``targets.registry.build`` makes it (no Spark)."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.targets import registry as target_registry
from glue_incremental.targets.registry import IcebergTableTarget, ParquetTarget, TargetOptions


@pytest.mark.parametrize(
    ("options", "argument", "message"),
    [
        (TargetOptions("delta", path="/t"), "target_format", "is not one of parquet, iceberg"),
        (TargetOptions("parquet"), "target_path", "--target_path is required"),
        (TargetOptions("iceberg", path="/t"), "target_table", "needs --target_table"),
        (TargetOptions("iceberg", table="no_database"), "target_table", "must be database.table"),
    ],
)
def test_options_a_format_cannot_use_are_refused_naming_the_argument(options, argument, message):
    with pytest.raises(ArgumentError) as refused:
        target_registry.build(options)
    assert refused.value.name == argument
    assert message in str(refused.value)


def test_each_format_builds_its_own_target_from_its_own_options():
    assert target_registry.build(TargetOptions("parquet", path="/t", partition_by=("day",))) == (
        ParquetTarget("/t", ("day",))
    )
    iceberg = target_registry.build(TargetOptions("iceberg", table="lake.orders", catalog="c"))
    assert isinstance(iceberg, IcebergTableTarget)
    assert iceberg.table.catalog == "c"
