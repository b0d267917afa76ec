"""The deliveries table beside an Iceberg target: its name (plain Python, no Spark)."""

from __future__ import annotations

from glue_incremental.targets.iceberg.deliveries import side_table
from glue_incremental.targets.iceberg.tables import IcebergTarget


def test_the_deliveries_table_sits_beside_the_target_in_its_catalog():
    side = side_table(IcebergTarget("curated.orders", "lake"))

    assert (side.catalog, side.table) == ("lake", "curated.orders__delivery")
