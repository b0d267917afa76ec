"""``--transform``: a team's function on the increment keeps every guarantee of the generic jobs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from glue_incremental.transforms.function import TransformError, TransformSpec
from glue_incremental.watermarks import Watermarks, create_table
from hypothesis import given, settings
from pyspark.sql import Row

from tests.harness import joins, reference, user_transforms
from tests.harness.file_jobs import config_for, row
from tests.harness.histories import delivery_histories
from tests.harness.loads import (
    FixedClock,
    partition_file_snapshot,
    run_load_at,
    write_json_file,
)
from tests.integration.test_incremental_load_files import BATCHES

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
MASKED = ["id", "part", "updated", "value", "value_length"]
GOOD = TransformSpec("tests.harness.user_transforms", "mask_value")
FILTER = TransformSpec("tests.harness.user_transforms", "drops_s_values")
# The merge's own property (test_incremental_load_files) explores histories at full size; this
# one adds the transform to it, so a few examples in ``make test``, the deep run's size after.
EXAMPLES = 4 if settings.default.max_examples < 50 else settings.default.max_examples


@pytest.mark.parametrize(
    ("spec", "twin"),
    [
        (GOOD, user_transforms.mask_value_row),
        (FILTER, user_transforms.drops_s_values_row),
    ],
    ids=["map", "filter"],
)
@settings(max_examples=EXAMPLES)
@given(
    delivery_histories(
        BATCHES, [row(1, "a", 1, "first")], min_steps=2, max_steps=5, late_redeliveries=True
    )
)
def test_property_transformed_incremental_runs_equal_the_function_applied_to_each_keys_latest_version(
    spark, tmp_path_factory, aws, spec, twin, history
):
    """The reference never runs the platform: the latest version per key over every delivery
    (watermark, then delivery), then the function's row-wise twin (a filter's drops a key)."""
    create_table()
    store = Watermarks()
    tmp = tmp_path_factory.mktemp("history")
    config = replace(config_for(tmp), transform=spec)
    clock = FixedClock(T0)
    runs = 0
    deliveries = []
    for kind, batch, late in history:
        clock.now += 30
        if kind == "batch":
            path = write_json_file(tmp / "source", batch, mtime=clock.now - (200 if late else 0))
            deliveries += [((runs + 1, path.stat().st_mtime_ns, path.name), r) for r in batch]
        else:
            clock.now += 1
            runs += 1
            run_load_at(
                spark,
                config,
                job_name=f"prop-{tmp.name}",  # a state per example: each has its own target
                run_id=f"jr_{runs}",
                clock=clock,
                store=store,
            )

    latest = reference.latest_per_key(deliveries, ("id",), "updated")
    expected = [out for out in map(twin, latest) if out is not None]
    stored = reference.visible_rows(tmp / "target", MASKED)
    assert reference.as_tuples(stored, MASKED) == reference.as_tuples(expected, MASKED)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("drops_key", "the result drops column 'id', which the job needs"),
        ("watermark_as_text", "the result changes column 'updated' from bigint to string"),
        ("returns_none", "returned NoneType, not a DataFrame"),
        ("raises", "raised ValueError: unknown customer tier 'gold'"),
        ("reads_target", "the result reads the job's own target"),
        ("no_such_function", "'tests.harness.user_transforms' has no 'no_such_function'"),
    ],
)
def test_bad_user_code_fails_in_one_line_writing_and_committing_nothing(
    spark, tmp_path, store, monkeypatch, function, message
):
    plain = config_for(tmp_path)
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0 - 100)
    run_load_at(spark, plain, job_name="orders", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(tmp_path / "source", [row(2, "b", 20, "y")], mtime=T0 + 10)
    before = partition_file_snapshot(tmp_path / "target")
    monkeypatch.setattr(user_transforms, "TARGET_PATH", plain.target_path)
    spec = TransformSpec("tests.harness.user_transforms", function)

    with pytest.raises(TransformError) as raised:
        run_load_at(
            spark,
            replace(plain, transform=spec),
            job_name="orders",
            run_id="jr_2",
            clock=FixedClock(T0 + 60),
            store=store,
        )

    text = str(raised.value)
    assert text.startswith(f"--transform {spec}: {message}") and "\n" not in text
    assert raised.value.function == str(spec)
    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("orders")["job_run_id"] == "jr_1"


def test_the_join_applies_its_transform_to_the_affected_partitions_and_refuses_a_lost_key(
    spark, tmp_path, store
):
    config = replace(
        joins.config_for(tmp_path, "left"),
        transform=TransformSpec("tests.harness.user_transforms", "upper_label"),
    )
    joins.land(tmp_path / "left", "2024-01-01", [joins.left_row(1, "l", 5)], T0 - 100)
    joins.land(tmp_path / "right", "2024-01-01", [joins.right_row(1, "r", "gold")], T0 - 100)
    joins.run_at(spark, config, store, job_name="sales", run_id="jr_1", now=T0)
    assert joins.read_output(spark, config.target_path) == [
        Row(date="2024-01-01", id=1, left_value="l", amount=5, right_value="r", label="GOLD")
    ]

    joins.land(tmp_path / "right", "2024-01-01", [joins.right_row(1, "r2", "silver")], T0 + 10)
    before = partition_file_snapshot(tmp_path / "target")
    dropping = replace(
        config, transform=TransformSpec("tests.harness.user_transforms", "drops_key")
    )
    with pytest.raises(
        TransformError, match=r"^--transform .*:drops_key: the result drops column 'id'"
    ):
        joins.run_at(spark, dropping, store, job_name="sales", run_id="jr_2", now=T0 + 60)

    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("sales", "right")["job_run_id"] == "jr_1"
