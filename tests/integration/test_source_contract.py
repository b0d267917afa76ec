"""The ``Source`` contract on a file dataset: planning writes nothing, reading returns what
is new, and the state a source leaves makes the next plan read nothing again.

(A JDBC table keeps the same contract; its runs are covered end to end, against
PostgreSQL, in ``test_incremental_load_jdbc.py``.)
"""

from __future__ import annotations

import pytest
from glue_incremental import load_sources
from glue_incremental.runtime import IncrementalRun

from tests.harness.loads import FixedClock, json_files_config, write_json_file

pytestmark = pytest.mark.spark
T0 = 1_700_000_000


def planned(spark, store, config, run_id: str, now: float, *, commit: bool = False):
    """Plan and read one run; with ``commit``, commit the state its plan leaves."""
    run = IncrementalRun(
        spark=spark,
        job_name="files",
        run_id=run_id,
        store=store,
        clock=FixedClock(now),
        publish_metrics=False,
    )
    with run:
        plan = load_sources.build(config).plan(run)
        rows = plan.read()
        found = {tuple(r) for r in rows.select("id", "updated").collect()} if rows else set()
        if commit:
            run.commit({"default": {**plan.carried.to_state(), "published_at_ms": 1}})
    return plan, found


def test_a_file_source_plans_without_writing_and_reads_exactly_what_is_new(spark, store, tmp_path):
    config = json_files_config(tmp_path)
    write_json_file(tmp_path / "source", [{"id": 1, "updated": 5}], mtime=T0)
    before = sorted(p.name for p in tmp_path.rglob("*"))

    plan, found = planned(spark, store, config, "jr_1", T0 + 3600, commit=True)

    assert found == {(1, 5)}
    assert plan.summary["source"] == "files" and plan.delivery
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written
    assert plan.carried.files is not None and plan.carried.discovery is not None

    write_json_file(tmp_path / "source", [{"id": 2, "updated": 6}], mtime=T0 + 7200)
    _, found = planned(spark, store, config, "jr_2", T0 + 3 * 3600)
    assert found == {(2, 6)}
