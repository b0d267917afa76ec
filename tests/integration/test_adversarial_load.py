"""Adversarial runs of the real load job (issue 24): each compared with a full refresh
computed in plain Python (``tests/harness/reference.py``), on a local disk unless named."""

from __future__ import annotations

import pytest
from glue_incremental import writer

from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def test_a_partition_column_named_with_an_underscore_keeps_every_key(spark, tmp_path, store):
    """``_part=a/`` is visible to Spark (a ``key=value`` name): the second run merges into it
    instead of taking the target for empty and replacing it with the update alone."""
    columns = ["id", "_part", "updated", "value"]
    config = json_files_config(tmp_path, partition_by=("_part",))
    source = tmp_path / "source"
    rows = [{"id": k, "_part": "a", "updated": 1, "value": "old"} for k in (1, 2)]
    write_json_file(source, rows, mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(source, [{"id": 1, "_part": "a", "updated": 2, "value": "new"}], mtime=T0 + 10)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    expected = as_tuples(full_refresh(source, ("id",), "updated"), columns)
    assert as_tuples(visible_rows(tmp_path / "target", columns), columns) == expected


def test_an_underscore_partition_is_merged_into_on_every_file_system(spark, targets):
    target = targets("t")
    columns = ["id", "_p", "ts"]

    def upsert(rows, run_id):
        frame = spark.createDataFrame(rows, "id long, _p string, ts long").coalesce(1)
        writer.upsert(
            spark,
            frame,
            target.uri,
            primary_key=["id"],
            partition_by=["_p"],
            order_by="ts",
            run_id=run_id,
        )

    upsert([(1, "a", 1), (2, "a", 1)], "r1")
    upsert([(1, "a", 2)], "r2")

    assert as_tuples(target.rows(columns), columns) == [(1, "a", 2), (2, "a", 1)]


def test_a_target_path_with_glob_characters_is_read_and_written_as_written(spark, tmp_path, store):
    """``out[1]/{t}``: the key index's staging, the target's partitions and the source
    files all reach ``spark.read`` as literal paths, not globs matching nothing."""
    root = tmp_path / "out[1]" / "{t}"
    source = root / "source"
    config = json_files_config(
        root,
        partition_by=("part",),
        source=f"file://{source}",
        target_path=f"file://{root / 'target'}",
    )
    columns = ["id", "part", "updated", "value"]
    write_json_file(source, [{"id": 1, "part": "a", "updated": 1, "value": "x"}], mtime=T0 - 100)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    moved = [{"id": 1, "part": "b", "updated": 2, "value": "y"}, {"id": 2, "part": "a"}]
    write_json_file(source, [{**moved[1], "updated": 1, "value": "z"}, moved[0]], mtime=T0 + 10)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 60), store=store)

    expected = as_tuples(full_refresh(source, ("id",), "updated"), columns)
    assert as_tuples(visible_rows(root / "target", columns), columns) == expected
