"""Hand edits through the operator CLI of a load's state: a value set by hand that
the next run cannot use is refused in one line (by the CLI or the run), nothing written."""

from __future__ import annotations

import pytest
from glue_incremental.errors import GlueIncrementalError
from glue_incremental_tools import cli

from tests.harness.loads import (
    FixedClock,
    json_files_config,
    partition_file_snapshot,
    run_load_at,
    write_json_file,
)

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0


def row(key: int, updated: int) -> dict:
    return {"id": key, "part": "a", "updated": updated, "value": f"v{key}.{updated}"}


def test_attack_a_hand_set_cursor_of_another_type_than_the_watermark(
    spark, tmp_path, store, capsys
):
    config = json_files_config(tmp_path, partition_by=("part",))
    write_json_file(tmp_path / "source", [row(1, 1)], mtime=T0 - 50)
    run_load_at(spark, config, job_name="j", run_id="jr_1", clock=FixedClock(T0), store=store)
    write_json_file(tmp_path / "source", [row(2, 2)], mtime=T0 + 50)
    before = partition_file_snapshot(tmp_path / "target")

    code = cli.main(["watermarks", "set", "j", "--value", 'cursor="x"', "--why", "attack"])
    _out, err = capsys.readouterr()
    if code != 0:
        assert err.count("\n") == 1, err
        return
    with pytest.raises(GlueIncrementalError) as refused:
        run_load_at(
            spark, config, job_name="j", run_id="jr_2", clock=FixedClock(T0 + 100), store=store
        )
    assert "\n" not in str(refused.value)
    assert partition_file_snapshot(tmp_path / "target") == before
