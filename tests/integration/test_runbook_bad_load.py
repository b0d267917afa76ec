"""docs/runbook.md's "Rewind after a bad load", run as written on the local emulators.

The job is the load script's entry point (``load.job.main``, the arguments Glue passes) on JSON
files with ``--delete_marker op=D``; the operator's commands are the runbook's own, taken
from its text (``--env prod`` dropped: the local stack). Undo: the runbook's rewind restores
the target to the last good run, the corrected delivery then loads. Fix forward: the
runbook's fix file removes the made-up key and corrects the wrong row. Each is compared with
a pure-Python full refresh of the deliveries (``tests/harness/reference.py``).
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import pytest
from glue_incremental.load import job as load_job
from glue_incremental_tools import cli

from tests.harness import reference
from tests.harness.loads import write_json_file

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["id", "part", "updated", "value"]
JOB = "orders"
PROD_JOB = "gi-prod-orders"


def section() -> str:
    text = (ROOT / "docs" / "runbook.md").read_text()
    return text.split('<a id="rewind"></a>', 1)[1].split("<a id=", 1)[0]


def runbook_command(verb: str, **replace: str) -> list[str]:
    """The runbook's ``watermarks ... <verb>`` command as ``cli.main`` arguments, for the local
    stack: ``--env prod`` dropped, the job and placeholders replaced."""
    prefix = ".venv/bin/python -m glue_incremental "
    lines = [line.strip() for line in section().splitlines()]
    (line,) = [x for x in lines if x.startswith(prefix) and f" {verb} " in x]
    words = shlex.split(line[len(prefix) :])
    words = [w for i, w in enumerate(words) if w != "--env" and words[i - 1] != "--env"]
    return [replace.get(word, word) for word in words]


def runbook_fix_file() -> list[dict]:
    (block,) = re.findall(r"```json\n(.*?)```", section(), flags=re.DOTALL)
    return [json.loads(line) for line in block.splitlines() if line.strip()]


def rows(key: int, part: str, updated: int, value: str | None, op: str | None = None) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value, "op": op}


GOOD = [rows(1, "a", 10, "x"), rows(2, "a", 10, "y"), rows(3, "b", 10, "z")]
# A made-up key and a wrong value, with a later watermark than the good rows.
BAD = [rows(90, "a", 30, "made up"), rows(1, "a", 30, "wrong")]


class Pipeline:
    def __init__(self, spark, tmp: Path) -> None:
        self.spark, self.source, self.target = spark, tmp / "source", tmp / "target"
        self.runs = 0
        self.landed = time.time() - 600

    def land(self, landed: list[dict], name: str) -> None:
        self.landed += 60
        write_json_file(self.source, landed, mtime=self.landed, name=name)

    def run(self) -> str:
        self.runs += 1
        run_id = f"jr_{self.runs}"
        argv = [
            "incremental_load.py",
            *("--JOB_NAME", JOB, "--JOB_RUN_ID", run_id),
            *("--source", self.source.as_uri(), "--source_format", "json"),
            *("--watermark_column", "updated", "--primary_key", "id"),
            *("--target_path", self.target.as_uri(), "--partition_by", "part"),
            *("--delete_marker", "op=D"),
        ]
        load_job.main(argv, spark=self.spark)
        return run_id

    def rows(self) -> list[tuple]:
        return reference.as_tuples(reference.visible_rows(self.target, COLUMNS), COLUMNS)

    def full_refresh(self) -> list[tuple]:
        latest = reference.full_refresh(self.source, ("id",), "updated")
        kept = reference.without_deletes(latest, lambda row: row.get("op") == "D")
        return reference.as_tuples(kept, COLUMNS)


@pytest.fixture
def bad_load(spark, tmp_path, store, monkeypatch):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    pipeline = Pipeline(spark, tmp_path)
    pipeline.land(GOOD, "good.json")
    good_run = pipeline.run()
    good = pipeline.full_refresh()
    pipeline.land(BAD, "bad.json")
    pipeline.run()
    assert (90, "a", 30, "made up") in pipeline.rows()
    return pipeline, good_run, good


def test_the_runbooks_undo_restores_the_last_good_run_then_loads_the_correction(bad_load):
    pipeline, good_run, good = bad_load

    command = runbook_command("rewind", **{PROD_JOB: JOB, "jr_0123...": good_run})
    assert cli.main(command) == 0

    assert pipeline.rows() == good
    (pipeline.source / "bad.json").rename(pipeline.source.parent / "quarantined.json")
    pipeline.land([rows(1, "a", 31, "x corrected")], "corrected.json")
    pipeline.run()
    assert pipeline.rows() == pipeline.full_refresh()
    assert (1, "a", 31, "x corrected") in pipeline.rows()


def test_the_runbooks_fix_forward_file_removes_the_made_up_key_and_corrects_the_row(bad_load):
    pipeline = bad_load[0]

    pipeline.land(runbook_fix_file(), "fix.json")
    pipeline.run()

    assert pipeline.rows() == pipeline.full_refresh()
    assert [row for row in pipeline.rows() if row[0] in (1, 90)] == [(1, "a", 31, "x")]
