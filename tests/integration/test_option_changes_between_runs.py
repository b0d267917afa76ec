"""A change of options between runs: each run sequence ends with
the target equal to a full refresh, or the changed run refused in one line, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_incremental.args import BookmarkOption
from glue_incremental.errors import GlueIncrementalError

from tests.harness.iceberg import requires_iceberg, unique_table
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file
from tests.harness.reference import as_tuples, full_refresh, visible_rows

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
COLUMNS = ["id", "part", "updated", "value"]


def row(key: int, part: str, updated: int) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": f"v{key}.{updated}"}


def run(spark, store, config, n: int, **kwargs) -> dict:
    return run_load_at(
        spark,
        config,
        job_name="j",
        run_id=f"jr_{n}",
        clock=FixedClock(T0 + 100 * n),
        store=store,
        **kwargs,
    )


def expected(tmp: Path) -> list[tuple]:
    return as_tuples(full_refresh(tmp / "source", ("id",), "updated"), COLUMNS)


def refused_in_one_line_or(attempt, check) -> None:
    """Either the run is refused in one line (then ``check`` is not asked) or ``check`` holds."""
    try:
        attempt()
    except GlueIncrementalError as error:
        assert "\n" not in str(error)
        return
    check()


def test_a_new_target_path_between_incremental_runs_is_refused_in_one_line(spark, tmp_path, store):
    """The state's rows are in target/, not target2/: the run is refused, nothing is written
    and the committed state is unchanged; the reset the refusal advises, then a run, reloads
    target2 as a full refresh."""
    write_json_file(tmp_path / "source", [row(1, "a", 1), row(2, "a", 1)], mtime=T0 - 50)
    run(spark, store, json_files_config(tmp_path, partition_by=("part",)), 1)
    write_json_file(tmp_path / "source", [row(3, "b", 1)], mtime=T0 + 50)
    moved = json_files_config(
        tmp_path, partition_by=("part",), target_path=(tmp_path / "target2").as_uri()
    )
    before = store.get_watermark("j")

    with pytest.raises(GlueIncrementalError) as refused:
        run(spark, store, moved, 2)

    message = str(refused.value)
    assert "\n" not in message and "--target_path" in message and "watermarks reset" in message
    assert not (tmp_path / "target2").exists()
    assert store.get_watermark("j")["version"] == before["version"]
    store.reset("j", why="new target")
    run(spark, store, moved, 3)
    assert as_tuples(visible_rows(tmp_path / "target2", COLUMNS), COLUMNS) == expected(tmp_path)


@requires_iceberg
def test_a_switch_from_parquet_to_iceberg_between_incremental_runs_is_refused_in_one_line(
    spark, tmp_path, store
):
    write_json_file(tmp_path / "source", [row(1, "a", 1), row(2, "a", 1)], mtime=T0 - 50)
    run(spark, store, json_files_config(tmp_path, partition_by=("part",)), 1)
    write_json_file(tmp_path / "source", [row(3, "b", 1)], mtime=T0 + 50)
    table = unique_table()
    iceberg = json_files_config(
        tmp_path, partition_by=("part",), target_format="iceberg", target_table=table
    )

    with pytest.raises(GlueIncrementalError) as refused:
        run(spark, store, iceberg, 2)

    message = str(refused.value)
    assert "\n" not in message and "--target_format" in message and "watermarks reset" in message
    assert not spark.catalog.tableExists(iceberg.iceberg_target.name)


def test_a_state_that_names_no_target_is_accepted_and_names_it_after_the_next_commit(
    spark, tmp_path, store
):
    """A state committed before the target was recorded (its layout has no target) is not
    refused; the next commit records the target, and a later move is refused."""
    write_json_file(tmp_path / "source", [row(1, "a", 1)], mtime=T0 - 50)
    config = json_files_config(tmp_path, partition_by=("part",))
    run(spark, store, config, 1)
    committed = store.get_watermark("j")["watermarks"]
    old_layout = {
        name: value
        for name, value in committed["layout"].items()
        if name not in ("target_format", "target_path", "target_table")
    }
    store.set("j", why="a state from before", layout=old_layout)
    write_json_file(tmp_path / "source", [row(2, "b", 1)], mtime=T0 + 50)

    run(spark, store, config, 2)

    assert store.get_watermark("j")["watermarks"]["layout"]["target_path"] == (
        (tmp_path / "target").as_uri()
    )
    assert as_tuples(visible_rows(tmp_path / "target", COLUMNS), COLUMNS) == expected(tmp_path)


def test_attack_a_rewind_past_a_layout_migration_then_a_rerun(spark, tmp_path, store):
    """jr_1 partitioned by part; a reset and jr_2 unpartitioned; rewind to jr_1 (its state
    says part) and an incremental run by part: the target is in the other layout."""
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 1), row(2, "a", 1)], mtime=T0 - 50)
    by_part = json_files_config(tmp_path, partition_by=("part",))
    run(spark, store, by_part, 1)
    store.reset("j", why="migrate")
    run(spark, store, json_files_config(tmp_path, partition_by=()), 2)
    with pytest.raises(GlueIncrementalError) as refused:
        store.rewind("j", "jr_1", why="attack")
    assert "\n" not in str(refused.value) and "another layout" in str(refused.value)
    write_json_file(source, [row(1, "b", 2)], mtime=T0 + 250)

    run(spark, store, json_files_config(tmp_path, partition_by=()), 3)  # the layout in force

    seen = spark.read.parquet(str(tmp_path / "target")).select(*COLUMNS).collect()
    assert sorted(tuple(r) for r in seen) == expected(tmp_path)


def test_attack_a_job_bookmark_disable_reload_under_a_new_primary_key_then_a_normal_run(
    spark, tmp_path, store
):
    """Key ``id``; a job-bookmark-disable run keyed by (id, part) commits nothing, so it may
    not change the layout (one line); the reset the refusal advises, then runs keyed by
    (id, part): one row per (id, part)."""
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 1), row(1, "b", 1)], mtime=T0 - 50)
    run(spark, store, json_files_config(tmp_path, partition_by=("part",)), 1)
    by_id_and_part = json_files_config(tmp_path, partition_by=("part",), primary_key=("id", "part"))
    with pytest.raises(GlueIncrementalError) as refused:
        run(spark, store, by_id_and_part, 2, option=BookmarkOption.DISABLE)
    assert "\n" not in str(refused.value) and "watermarks reset" in str(refused.value)
    store.reset("j", why="new key")
    run(spark, store, by_id_and_part, 2)
    write_json_file(source, [row(1, "a", 2)], mtime=T0 + 250)

    run(spark, store, by_id_and_part, 3)

    full = as_tuples(full_refresh(source, ("id", "part"), "updated"), COLUMNS)
    assert as_tuples(visible_rows(tmp_path / "target", COLUMNS), COLUMNS) == full


def test_attack_a_normal_run_under_the_layout_a_job_bookmark_disable_reload_replaced(
    spark, tmp_path, store
):
    source = tmp_path / "source"
    write_json_file(source, [row(1, "a", 1), row(2, "a", 1)], mtime=T0 - 50)
    by_part = json_files_config(tmp_path, partition_by=("part",))
    run(spark, store, by_part, 1)
    with pytest.raises(GlueIncrementalError) as refused:  # it would commit no new layout
        run(
            spark,
            store,
            json_files_config(tmp_path, partition_by=()),
            2,
            option=BookmarkOption.DISABLE,
        )
    assert "\n" not in str(refused.value)
    write_json_file(source, [row(1, "b", 2)], mtime=T0 + 250)

    def check():
        seen = spark.read.parquet(str(tmp_path / "target")).select(*COLUMNS).collect()
        assert sorted(tuple(r) for r in seen) == expected(tmp_path)

    refused_in_one_line_or(lambda: run(spark, store, by_part, 3), check)
