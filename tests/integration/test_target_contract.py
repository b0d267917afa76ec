"""One contract, every ``Target``: what a job may rely on whatever its output's format.

The same behaviours run against a Parquet path on local disk, a Parquet path in
LocalStack's S3 (through S3A) and an Iceberg table, driven only through the interface
(``docs/targets-and-sources.md``); the output is checked by reading it back directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from glue_incremental.hooks import hooks
from glue_incremental.run.context import IncrementalRun
from glue_incremental.targets import registry as target_registry
from glue_incremental.targets.registry import TargetOptions, UpsertSpec

from tests.harness.faults import Crash
from tests.harness.iceberg import requires_iceberg, unique_table

pytestmark = pytest.mark.spark
COLUMNS = ("id", "v", "ts", "day")
SCHEMA = "id INT, v STRING, ts INT, day STRING"
# The first step of a publish that changes durable state, per format.
FIRST_DURABLE_STEP = {"publish.move", "iceberg.commit"}


@dataclass
class Kind:
    """A target under contract, and how to read its stored rows without going through it."""

    options: TargetOptions
    stored: Callable[[], set[tuple]]
    rewinds_output: bool


@pytest.fixture(
    params=[
        "parquet-local",
        pytest.param("parquet-s3a", marks=pytest.mark.s3),
        pytest.param("iceberg", marks=requires_iceberg),
    ]
)
def kind(request, spark, tmp_path) -> Kind:
    def rows_of(frame: Any) -> set[tuple]:
        return {tuple(row) for row in frame.select(*COLUMNS).collect()}

    if request.param == "iceberg":
        table = unique_table("contract")
        options = TargetOptions(
            "iceberg", table=table, catalog="glue_catalog", partition_by=("day",)
        )
        name = f"glue_catalog.{table}"
        return Kind(options, lambda: rows_of(spark.table(name)), rewinds_output=True)
    root = (
        request.getfixturevalue("s3_root") if request.param == "parquet-s3a" else tmp_path.as_uri()
    )
    path = f"{root}/out"
    options = TargetOptions("parquet", path=path, partition_by=("day",))

    def stored() -> set[tuple]:
        try:
            return rows_of(spark.read.parquet(path))
        except Exception as error:  # nothing written yet
            if "PATH_NOT_FOUND" in str(error) or "does not exist" in str(error):
                return set()
            raise

    return Kind(options, stored, rewinds_output=False)


def new_run(spark, store, run_id: str) -> IncrementalRun:
    return IncrementalRun(
        spark=spark, job_name="contract", run_id=run_id, store=store, publish_metrics=False
    )


def publish(
    spark, store, kind: Kind, run_id: str, rows: list[tuple], *, replace_all: bool = False
) -> dict[str, Any]:
    """One run: recover, mark its start, merge ``rows``, commit the settled state."""
    state = {"cursor": max(row[2] for row in rows), "published_at_ms": 1}
    run = new_run(spark, store, run_id)
    target = target_registry.build(kind.options)
    with run:
        target.recover(run)
        target.mark_start(run)
        published = target.upsert(
            run,
            spark.createDataFrame(rows, SCHEMA),
            UpsertSpec(primary_key=("id",), order_by="ts", replace_all=replace_all),
            lambda: {"default": state},
        )
        run.commit(published.states)
        target.after_commit(run, published.states)
    # Parquet counts the rows of the partitions it rewrote, Iceberg the rows it merged.
    assert published.result.records_written >= len({row[0] for row in rows})
    return state


FIRST = [(1, "a", 5, "d1"), (2, "b", 5, "d2")]


def test_the_first_write_replaces_whatever_the_output_held(spark, store, kind):
    publish(spark, store, kind, "jr_1", FIRST, replace_all=True)
    publish(spark, store, kind, "jr_2", [(3, "c", 1, "d1")], replace_all=True)
    assert kind.stored() == {(3, "c", 1, "d1")}


def test_a_merge_keeps_the_greatest_watermark_of_each_key(spark, store, kind):
    publish(spark, store, kind, "jr_1", FIRST, replace_all=True)
    publish(
        spark,
        store,
        kind,
        "jr_2",
        [(1, "older", 3, "d1"), (2, "newer", 9, "d2"), (3, "c", 1, "d1")],
    )
    assert kind.stored() == {(1, "a", 5, "d1"), (2, "newer", 9, "d2"), (3, "c", 1, "d1")}


def test_the_stored_versions_are_read_as_of_the_runs_start(spark, store, kind):
    target = target_registry.build(kind.options)
    run = new_run(spark, store, "jr_0")
    with run:
        target.mark_start(run)
        assert target.schema(run) is None and target.read_as_of_start(run) is None
    publish(spark, store, kind, "jr_1", FIRST, replace_all=True)
    run = new_run(spark, store, "jr_2")
    with run:
        target.recover(run)
        target.mark_start(run)
        schema = target.schema(run)
        found = target.read_as_of_start(run)
        assert found is not None
        assert {tuple(row) for row in found.select(*COLUMNS).collect()} == set(FIRST)
    assert [field.name for field in schema.fields if field.name in COLUMNS] == list(COLUMNS)
    assert schema["day"].dataType.simpleString() == "string"


@pytest.mark.parametrize("crash_at", ["first durable step", "commit.before"])
def test_a_crashed_publish_is_whole_or_absent_after_recovery_and_never_behind_the_state(
    spark, store, kind, crash_at
):
    publish(spark, store, kind, "jr_1", FIRST, replace_all=True)
    names = FIRST_DURABLE_STEP if crash_at == "first durable step" else {crash_at}

    def crash(name: str, details: Any) -> None:
        if name in names:
            raise Crash(name)

    second = [(1, "x", 7, "d1"), (3, "c", 7, "d2")]
    with pytest.raises(Crash), hooks.installed(crash):
        publish(spark, store, kind, "jr_2", second)
    run = new_run(spark, store, "jr_3")
    target = target_registry.build(kind.options)
    with run:
        target.recover(run)
    before, after = set(FIRST), {(1, "x", 7, "d1"), (2, "b", 5, "d2"), (3, "c", 7, "d2")}
    stored = kind.stored()
    assert stored in (before, after)
    cursor = store.get_watermark("contract")["watermarks"]["cursor"]
    # The state may lag the output (the next run re-reads and merges), never lead it.
    assert cursor == 5 or (stored == after and cursor == 7)


def test_a_rewind_rolls_the_output_back_only_where_the_format_can(spark, store, kind):
    publish(spark, store, kind, "jr_1", FIRST, replace_all=True)
    publish(spark, store, kind, "jr_2", [(3, "c", 9, "d1")])
    target = target_registry.build(kind.options)
    effect = target.rewind_output(spark, "jr_1")
    store.rewind("contract", "jr_1", who="test", why="contract", note=effect.note)
    effect.apply()
    assert store.get_watermark("contract")["watermarks"]["cursor"] == 5
    expected = set(FIRST) if kind.rewinds_output else {*FIRST, (3, "c", 9, "d1")}
    assert kind.stored() == expected
    assert all(isinstance(value, str) for value in target.reset_note().values())
    # Whatever the output kept, the run after a rewind merges back to the same rows.
    publish(spark, store, kind, "jr_3", [(3, "c", 9, "d1")])
    assert kind.stored() == {*FIRST, (3, "c", 9, "d1")}
