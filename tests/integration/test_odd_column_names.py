"""Odd column names: a watermark column with a dot, a key and a
partition column with a space, loaded twice, equal a full refresh."""

from __future__ import annotations

import pytest

from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
COLUMNS = ["the id", "p art", "upd.at", "value"]


def row(key: int, part: str, updated: int) -> dict:
    return {"the id": key, "p art": part, "upd.at": updated, "value": f"v{key}.{updated}"}


def test_attack_dotted_and_spaced_column_names_through_two_runs(spark, tmp_path, store):
    config = json_files_config(
        tmp_path, partition_by=("p art",), primary_key=("the id",), watermark_column="upd.at"
    )
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 1), row(2, "a", 1)], mtime=T0 - 50)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(source, [row(1, "b b", 2)], mtime=T0 + 50)

    run_load_at(spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 100), store=store)

    expected = as_tuples(full_refresh(source, ("the id",), "upd.at"), COLUMNS)
    assert as_tuples(visible_rows(tmp_path / "target", COLUMNS), COLUMNS) == expected
