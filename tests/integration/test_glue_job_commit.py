"""Glue's own ``Job.commit()`` runs after the DynamoDB commit and can never fail the run."""

from __future__ import annotations

import json
import logging

from glue_incremental.run.context import IncrementalRun


class GlueJobStandIn:
    """awsglue's ``Job`` as the run uses it: ``commit()`` only, here failing as Glue's can."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error, self.commits = error, 0

    def commit(self) -> None:
        self.commits += 1
        if self.error is not None:
            raise self.error


def committed_run(store, glue_job: GlueJobStandIn) -> IncrementalRun:
    run = IncrementalRun(
        spark=None,
        job_name="orders",
        run_id="jr_1",
        store=store,
        glue_job=glue_job,
        publish_metrics=False,
    )
    with run:
        run.commit({"default": {"cursor": 7}})
        run.record(records_read=1, records_written=1)
    return run


def test_a_failing_glue_job_commit_is_logged_and_named_and_the_run_succeeds(store, caplog):
    glue_job = GlueJobStandIn(RuntimeError("bookmark service unavailable\nsecond line"))
    with caplog.at_level(logging.ERROR, logger="glue_incremental.run.context"):
        run = committed_run(store, glue_job)

    assert glue_job.commits == 1
    assert run.summary["status"] == "SUCCEEDED" and run.summary["committed"] is True
    assert run.summary["glue_job_commit_error"] == "RuntimeError: bookmark service unavailable"
    assert "GLUE JOB COMMIT FAILED for run jr_1" in caplog.text
    assert store.get_watermark("orders")["watermarks"] == {"cursor": 7}


def test_the_summary_line_has_no_commit_error_when_glue_commits(store, capsys):
    run = committed_run(store, GlueJobStandIn())
    assert run.summary["status"] == "SUCCEEDED"
    assert "glue_job_commit_error" not in run.summary
    logged = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if '"run_id"' in line
    ]
    assert [line["status"] for line in logged] == ["SUCCEEDED"]
