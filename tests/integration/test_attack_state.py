"""Attacks on the typed state and on option changes the layout check does not record
(helper G): every key a real run commits survives ``LoadState``; a changed source format or
declared schema between runs is refused in one line, nothing written."""

from __future__ import annotations

import pytest
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.state import LoadState

from tests.harness.iceberg import requires_iceberg, unique_table
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


@requires_iceberg
def test_attack_every_key_an_iceberg_load_commits_survives_load_state(spark, tmp_path, store):
    """Runs with rows, with only an empty file (a state with ``iceberg_snapshot``) and with
    rows again: each committed state reads back through ``LoadState`` unchanged."""
    config = json_files_config(
        tmp_path, partition_by=("part",), target_format="iceberg", target_table=unique_table()
    )
    source = tmp_path / "source"
    for n, rows in enumerate([[row(1, "a", 1)], [], [row(1, "b", 2)]], 1):
        write_json_file(source, rows, mtime=T0 + 100 * n - 50)
        run_load_at(
            spark,
            config,
            job_name="j",
            run_id=f"jr_{n}",
            clock=FixedClock(T0 + 100 * n),
            store=store,
        )

    committed = [store.state_after_run("j", f"jr_{n}")["watermarks"] for n in (1, 2, 3)]
    assert "iceberg_snapshot" in committed[1]
    assert [LoadState.from_state(s).to_state() for s in committed] == committed  # type: ignore[union-attr]


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
        source_schema="id int, part string, updated long, value string",
    )
    _refused_and_nothing_written(
        spark,
        tmp_path,
        store,
        config,
        lambda source: write_json_file(source, [row(2, "a", 1)], mtime=T0 + 50),
    )


def test_attack_a_switch_of_source_format_to_csv_between_runs_is_refused(spark, tmp_path, store):
    def land_csv(source):
        path = source / "new.csv"
        path.write_text("id,part,updated,value\n2,a,1,x\n")
        import os

        os.utime(path, (T0 + 50, T0 + 50))

    config = json_files_config(tmp_path, partition_by=("part",), source_format="csv")
    _refused_and_nothing_written(spark, tmp_path, store, config, land_csv)
