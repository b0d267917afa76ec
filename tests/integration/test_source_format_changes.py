"""Option changes the layout check does not record: a changed source
format or declared schema between incremental runs is refused in one line, nothing written."""

from __future__ import annotations

import os

import pytest
from glue_incremental.errors import GlueIncrementalError

from tests.harness.loads import (
    FixedClock,
    json_files_config,
    partition_file_snapshot,
    run_load_at,
    write_json_file,
)

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def row(key: int, part: str, updated: int) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": f"v{key}.{updated}"}


def _refused_and_nothing_written(spark, tmp_path, store, second_config, landed) -> None:
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 1)], mtime=T0 - 50)
    run_load_at(
        spark,
        json_files_config(tmp_path, partition_by=("part",)),
        job_name="j",
        run_id="jr_1",
        clock=FixedClock(T0),
        store=store,
    )
    before = partition_file_snapshot(tmp_path / "target")
    state = store.get_watermark("j")
    landed(source)

    with pytest.raises(GlueIncrementalError) as refused:
        run_load_at(
            spark,
            second_config,
            job_name="j",
            run_id="jr_2",
            clock=FixedClock(T0 + 100),
            store=store,
        )
    assert "\n" not in str(refused.value)
    assert partition_file_snapshot(tmp_path / "target") == before
    assert store.get_watermark("j") == state


def test_attack_a_declared_schema_that_retypes_a_column_between_runs_is_refused(
    spark, tmp_path, store
):
    config = json_files_config(
        tmp_path,
        partition_by=("part",),
        # Text where bigint keys are stored (an int would only be cast up: every value fits).
        source_schema="id string, part string, updated long, value string",
    )
    _refused_and_nothing_written(
        spark,
        tmp_path,
        store,
        config,
        lambda source: write_json_file(source, [row(2, "a", 1)], mtime=T0 + 50),
    )


def test_attack_a_switch_of_source_format_to_csv_whose_types_differ_is_refused(
    spark, tmp_path, store
):
    # CSV is typed by inference now: keys that read as text meet the stored bigint keys.
    def land_csv(source):
        path = source / "new.csv"
        path.write_text("id,part,updated,value\nk2,a,1,x\n")
        os.utime(path, (T0 + 50, T0 + 50))

    config = json_files_config(tmp_path, partition_by=("part",), source_format="csv")
    _refused_and_nothing_written(spark, tmp_path, store, config, land_csv)
