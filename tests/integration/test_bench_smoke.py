"""The benchmark harness at tiny scale: every section reports, the structural targets hold.

Runs ``tests.benchmarks.run`` in-process on the suite's SparkSession, endpoint
and PostgreSQL (``make bench`` runs the same code at full scale). Timing
targets are not judged here; what must hold at any scale is: an incremental
file run reads exactly the new files, a JDBC run reads exactly the changed rows
plus the lookback window, one request per watermark read and per commit, and
predicate building launches the same number of Spark jobs whatever the number
of partitions.
"""

from __future__ import annotations

import json
import uuid

import pytest
from glue_incremental.watermarks import create_table

from tests.benchmarks.common import Context
from tests.benchmarks.profile import (
    profile_history_runs,
    profile_reconcile_runs,
    profile_runs,
    profiled,
)
from tests.benchmarks.run import SECTIONS, run_benchmarks
from tests.benchmarks.scales import SMOKE

# One worker runs the module: its fixture runs the smoke benchmarks once.
pytestmark = [pytest.mark.spark, pytest.mark.postgres, pytest.mark.xdist_group("bench_smoke")]


@pytest.fixture(scope="module")
def results(spark, postgres, endpoint, tmp_path_factory):
    output = tmp_path_factory.mktemp("bench-smoke")
    run_benchmarks(SMOKE, output, spark=spark, postgres=postgres, manage_endpoint=False)
    return output, json.loads((output / "results.json").read_text())


def points(data: dict, section: str) -> list[dict]:
    """The section's measured points; a section that measured nothing fails here."""
    found = data["sections"][section]["points"]
    assert found, f"section {section} has no points"
    return found


def test_every_section_reports(results):
    output, data = results
    assert set(data["sections"]) == set(SECTIONS)
    failed = {
        name: section.get("traceback")
        for name, section in data["sections"].items()
        if section["status"] != "ok"
    }
    assert failed == {}
    readme = (output / "README.md").read_text()
    for title in (
        "File ingestion",
        "PostgreSQL",
        "Incremental join",
        "Watermark store",
        "Predicate",
    ):
        assert title in readme
    for name in ("file_ingestion.png", "jdbc.png", "watermarks.png", "predicates.png"):
        assert (output / name).stat().st_size > 0


def test_incremental_file_runs_read_exactly_the_new_files(results):
    _, data = results
    for point in points(data, "file_ingestion"):
        ours, available_now = point["incremental"]["ours"], point["incremental"]["available_now"]
        assert ours and available_now
        assert [run["files_read"] for run in ours + available_now] == [point["delta_files"]] * (
            len(ours) + len(available_now)
        )
        assert max(run["source_bytes_read"] for run in ours) < point["history_bytes"]
        assert point["row_check_ok"], point["row_check"]


def test_jdbc_runs_read_the_changed_rows_plus_the_lookback_window(results):
    _, data = results
    runs = [run for point in points(data, "jdbc") for run in point["incremental"]]
    assert runs
    assert [run["records_read"] for run in runs] == [run["expected_rows"] for run in runs]
    assert all(run["changed_rows"] <= run["records_read"] < run["table_rows"] for run in runs)


def test_one_request_per_watermark_read_and_commit(results):
    _, data = results
    for point in points(data, "watermarks"):
        assert point["get_watermark"]["requests_per_call"] == [1]
        assert point["commit"]["requests_per_call"] == [1]


def test_predicate_jobs_do_not_grow_with_partitions(results):
    _, data = results
    measured = points(data, "predicates")
    assert len(measured) >= 2  # "does not grow" needs two sizes
    assert len({point["ours"]["spark_jobs"] for point in measured}) == 1
    assert all(point["same_partitions"] for point in measured)


def test_structural_targets_are_met(results):
    _, data = results
    structural = [
        verdict
        for verdict in data["targets"]
        if verdict["section"] in ("watermarks", "predicates")
        or verdict["target"].startswith(("files read", "rows read"))
    ]
    assert structural and all(verdict["met"] for verdict in structural), structural


def test_s3_discovery_plans_read_the_new_objects_with_requests_independent_of_history(results):
    output, data = results
    points = data["sections"]["s3_discovery"]["points"]
    assert len(points) >= 2
    for mode in ("ordered listing", "notifications"):
        requests = [next(m for m in p["modes"] if m["mode"] == mode)["requests"] for p in points]
        assert len({tuple(r) for r in requests}) == 1, (mode, requests)
    assert all(
        count == point["delta_objects"]
        for point in points
        for mode in point["modes"]
        for count in mode["files_planned"]
    )
    assert "Discovery on S3" in (output / "README.md").read_text()


def test_the_aggregation_scripts_incremental_output_equals_its_full_recompute(results):
    _, data = results
    assert all(point["output_identical"] for point in points(data, "aggregation"))


def test_a_bounded_backfill_reads_every_file_once_in_several_batches(results):
    _, data = results
    (point,) = points(data, "bounded_batches")
    assert point["bounded"]["files_read"] == point["unbounded"]["files_read"] == point["files"]
    assert point["files_per_batch"] < point["files"]


def test_the_reconcile_reads_only_the_keys_once_and_leaves_the_target_equal_to_the_source(results):
    _, data = results
    (point,) = points(data, "reconcile")
    assert point["summary"]["reads_only_key_columns"], point["statements"]
    assert point["summary"]["key_reads"] == 1, point["statements"]["key"]
    assert point["reconcile_run"]["records_deleted"] == point["deleted_rows"] > 0
    assert point["target_equals_source"], point["target_check"]


def test_the_history_runs_target_equals_the_rebuild_from_every_delivery(results):
    _, data = results
    (point,) = points(data, "history")
    assert point["history_equals_rebuild"], point["history_check"]
    assert point["history"]["versions_opened"] == point["increment_keys"] > 0
    assert point["history"]["versions_closed"] == point["increment_keys"]


def test_the_iceberg_jobs_table_equals_iceberg_merge_into_by_hand_after_every_round(results):
    output, data = results
    files = data["sections"]["iceberg"]["files"]
    assert files["tables_equal"]
    assert files["incremental"]["ours"] and files["incremental"]["merge_into"]
    assert "MERGE INTO (latest per key)" in (output / "README.md").read_text()


def test_the_profile_names_every_step_of_a_first_load_and_a_later_batch(spark, endpoint, tmp_path):
    table = f"profile-{uuid.uuid4().hex[:8]}"
    create_table(table)
    ctx = Context(spark, SMOKE, tmp_path, table)

    anchor, first, later, reload = profile_runs(ctx, files=20, batch_files=5, warm_up=False)

    assert {job.step for job in anchor.jobs} == {"(Spark's own)"}
    for run in (first, later, reload):
        steps = [step for step, _, _ in run.by_step()]
        assert "merge and stage the data" in steps and "(Spark's own)" not in steps
        assert run.driver_s() <= run.wall_s
        assert "| driver, between jobs |" in run.markdown()


def test_the_history_profile_takes_each_increment_by_a_history_run_then_a_latest_run(
    spark, endpoint, tmp_path
):
    table = f"profile-{uuid.uuid4().hex[:8]}"
    create_table(table)
    ctx = Context(spark, SMOKE, tmp_path, table)

    runs = profile_history_runs(ctx, keys=200, rounds=2)

    assert [run.label.split(" run")[0] for run in runs] == ["history", "latest"] * 2
    for run in runs:
        steps = [step for step, _, _ in run.by_step()]
        assert "merge and stage the data" in steps and "(Spark's own)" not in steps
        assert f"{run.compiled} classes compiled" in run.markdown()
    assert "compute the versions" in [step for step, _, _ in runs[0].by_step()]


def test_the_profile_counts_the_classes_a_run_made_spark_compile(spark):
    # A literal never planned before is new generated code: Spark compiles a class for it.
    unseen = uuid.uuid4().int % 10**12

    run = profiled(spark, "query", lambda: spark.range(3).selectExpr(f"id * {unseen}").collect())
    again = profiled(
        spark, "same query", lambda: spark.range(3).selectExpr(f"id * {unseen}").collect()
    )

    assert run.compiled >= 1 and again.compiled == 0


def test_the_reconcile_profile_names_the_reconcile_and_the_merge_of_its_deletes(
    spark, postgres, endpoint, tmp_path
):
    table = f"profile-{uuid.uuid4().hex[:8]}"
    create_table(table)
    ctx = Context(spark, SMOKE, tmp_path, table, postgres)

    reconcile, reload = profile_reconcile_runs(ctx, rows=2_000)

    steps = [step for step, _, _ in reconcile.by_step()]
    assert "reconcile: compare the source's keys with the target's" in steps
    assert "merge the rows by key, count the deletes" in steps
    # 10 partitions: below the 32 paths past which Spark lists in a job it names itself.
    assert "(Spark's own)" not in steps, reconcile.markdown()
    assert reload.label == "full reload" and "merge and stage the data" in [
        step for step, _, _ in reload.by_step()
    ]
