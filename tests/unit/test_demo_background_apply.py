"""The demo's apply in the background: the demo goes on once what the runs need is created,
and a failed apply stops the demo with its output's tail."""

from __future__ import annotations

import sys
import textwrap

import pytest
from glue_incremental_tools.demo import BackgroundApply
from glue_incremental_tools.deploy import DeployError


def fake_apply(body: str) -> list[str]:
    """A process printing what ``terraform apply -no-color`` prints, as ``body`` says."""
    return [sys.executable, "-c", textwrap.dedent(body)]


def test_waiting_for_resources_returns_while_the_rest_of_the_apply_still_runs(tmp_path):
    release = tmp_path / "release"
    apply = BackgroundApply(
        fake_apply(
            f"""
            import pathlib, time
            print("aws_glue_job.this: Creation complete after 0s [id=job]", flush=True)
            print("aws_sqs_queue.pages: Still creating... [10s elapsed]", flush=True)
            while not pathlib.Path({str(release)!r}).exists():
                time.sleep(0.05)
            print("aws_sqs_queue.pages: Creation complete after 25s [id=queue]", flush=True)
            """
        ),
        env={},
        log_path=tmp_path / "apply.log",
    )
    assert apply.wait_for({"aws_glue_job.this"}) == {"aws_glue_job.this"}
    assert apply.process.poll() is None
    release.touch()
    created, _seconds = apply.finish()
    assert created == 2
    assert "aws_sqs_queue.pages: Creation complete" in (tmp_path / "apply.log").read_text()


def test_a_failed_apply_stops_the_wait_with_its_output(tmp_path):
    apply = BackgroundApply(
        fake_apply(
            """
            import sys
            print("Error: creating Glue Job (gi-local-orders): AccessDenied", flush=True)
            sys.exit(1)
            """
        ),
        env={},
        log_path=tmp_path / "apply.log",
    )
    with pytest.raises(DeployError, match="AccessDenied"):
        apply.wait_for({"aws_glue_job.this"})


def test_stopping_ends_an_apply_still_running(tmp_path):
    apply = BackgroundApply(
        fake_apply("import time; time.sleep(600)"), env={}, log_path=tmp_path / "apply.log"
    )
    apply.stop()
    assert apply.process.poll() is not None
