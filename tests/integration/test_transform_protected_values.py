"""A transform that keeps the protected columns' names and types but changes their
values (docs/transforms.md: "unchanged"), on a PostgreSQL source."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from glue_incremental.transforms.function import TransformError, TransformSpec

from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, read_parquet, run_load_at

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(postgres):
    with orders_table(postgres, prefix="attacked") as name:
        yield name


def run_pg(spark, config, store, number: int) -> dict:
    return run_load_at(
        spark,
        config,
        job_name="attacked",
        run_id=f"jr_{number}",
        clock=FixedClock((T0 + timedelta(days=3, minutes=number)).timestamp()),
        store=store,
    )


def target_ids(spark, config) -> list[int]:
    return sorted(r["id"] for r in read_parquet(spark, config.target_path, ["id"]).collect())


def test_a_transform_moving_the_watermark_is_refused_before_the_cursor_passes_the_source(
    spark, postgres, table, tmp_path, store
):
    spec = TransformSpec("tests.harness.user_transforms", "shifts_watermark")
    config = jdbc_config(postgres, table, tmp_path, transform=spec)
    upsert(postgres, table, [(1, "a", T0, "x"), (2, "a", T0, "y")])
    try:
        run_pg(spark, config, store, 1)
    except TransformError:
        return  # refused in one line naming the transform: the promise holds
    upsert(postgres, table, [(3, "a", T0 + timedelta(hours=1), "z")])
    run_pg(spark, config, store, 2)

    # The transformed full refresh holds key 3; the cursor (T0 + 1 day) skipped it.
    assert target_ids(spark, config) == [1, 2, 3]


def test_a_transform_changing_key_values_is_refused_naming_the_transform(
    spark, postgres, table, tmp_path, store
):
    spec = TransformSpec("tests.harness.user_transforms", "shifts_key")
    config = jdbc_config(postgres, table, tmp_path, transform=spec, reconcile_every=1)
    upsert(postgres, table, [(1, "a", T0, "x"), (2, "a", T0, "y")])

    with pytest.raises(TransformError, match="shifts_key"):
        run_pg(spark, config, store, 1)
        run_pg(spark, config, store, 2)  # the reconcile: every stored key is "gone"
