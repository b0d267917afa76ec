"""The operator's everyday tasks, played on one local stack from the docs' own commands.

Each task's commands are taken from the page that shows them (the fenced blocks, as
``tests/harness/readme.py`` extracts them), so a doc change that breaks a command fails
here. Tasks another test already plays with the same commands are not repeated:

- set up (README quick start and local guide) and the demo: ``tests/e2e/test_platform_end_to_end.py``
  (the demo's chain, then every ``readme-commands`` command on its stack);
- a new column and a soft delete (``--delete_marker op=D``), an Iceberg bad load undone by
  ``watermarks rewind`` and rerun: the same e2e test (the demo's steps 5 to 7);
- the zero-record page (``pages``, ``status``): the same e2e test, and
  ``tests/terraform/test_terraform_local.py`` (the page stays in ALARM);
- a Parquet bad load undone, and fixed forward, with the runbook's commands:
  ``tests/integration/test_runbook_bad_load.py``;
- a custom job: the demo's ``daily_revenue`` (e2e); a transform: ``tests/integration/test_transforms.py``.

Played here: the README's first pipeline (a CSV load without a schema), on
``terraform/environments/local`` as the tutorial edits it, in a copy of the tree.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from glue_incremental_tools.demo import Demo

from tests.harness.provider_daemons import reattached
from tests.harness.readme import README, make_targets, readme_commands
from tests.harness.terraform import copy_tree

pytestmark = pytest.mark.e2e

ROOT = README.parent
# The tutorial's sample directory, replaced by the test's own.
SAMPLES = "/home/me/samples/returns/"


def tutorial_block(language: str) -> str:
    """The first ``language`` block of the README's first-pipeline tutorial."""
    section = README.read_text().split("## Your first pipeline", 1)[1].split("\n## ", 1)[0]
    (block, *_) = re.findall(rf"^```{language}\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    return block


def checkout(tmp_path: Path) -> Path:
    """A checkout whose ``terraform/`` is a copy the test may edit (the rest: links)."""
    root = tmp_path / "checkout"
    root.mkdir()
    copy_tree(root)
    for name in ("glue_scripts", "lib", "build", ".venv"):
        (root / name).symlink_to(ROOT / name)
    return root


def add_the_tutorial_pipeline(root: Path) -> None:
    """Step 2: the README's ``hcl`` entry, added to ``local.pipelines`` of environments/local."""
    main = root / "terraform" / "environments" / "local" / "main.tf"
    text = main.read_text()
    anchor = "  pipelines = {\n"
    assert text.count(anchor) == 1, "environments/local has no single `pipelines = {` map"
    entry = "".join(f"    {line}\n" for line in tutorial_block("hcl").splitlines())
    main.write_text(text.replace(anchor, anchor + entry))


def land_the_tutorial_files(samples: Path) -> list[str]:
    """Step 1: the README's CSV file (its first line names it), in ``samples``."""
    name, *lines = tutorial_block("text").splitlines()
    samples.mkdir(parents=True)
    (samples / Path(name).name).write_text("\n".join(lines) + "\n")
    return lines


@pytest.fixture
def stack(aws, tmp_path, monkeypatch):
    """One local stack with environments/local applied (the tutorial's pipeline added) and
    deployed: what ``make up`` then the tutorial's ``make apply`` leave."""
    root = checkout(tmp_path)
    add_the_tutorial_pipeline(root)
    with reattached() as provider:
        for name, value in provider.items():
            monkeypatch.setenv(name, value)
        demo = Demo(tmp_path / "stack", aws, log=lambda _line: None, root=root)
        demo.terraform_apply()
        demo.deploy()
        yield demo


def play(demo: Demo, commands: list[str], replace: dict[str, str]) -> dict[str, str]:
    """Run each non-``make`` command in the checkout, on the stack; each must exit 0."""
    env = {
        **os.environ,
        **demo.terraform_env,
        "PYTHONPATH": os.pathsep.join([str(demo.root / "lib"), str(demo.root)]),
    }
    outputs: dict[str, str] = {}
    for command in commands:
        if make_targets(command):
            continue  # make apply: the fixture applied and deployed
        for old, new in replace.items():
            command = command.replace(old, new)
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=demo.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, (
            f"docs command failed ({done.returncode}): {command}\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        outputs[command] = done.stdout
    return outputs


def output_of(outputs: dict[str, str], word: str) -> str:
    (found,) = [out for command, out in outputs.items() if f" {word} " in command]
    return found


def test_the_first_pipeline_loads_csv_without_a_schema_with_typed_columns(stack, tmp_path):
    samples = tmp_path / "samples" / "returns"
    lines = land_the_tutorial_files(samples)
    header, *records = lines

    outputs = play(
        stack,
        readme_commands(marker="tutorial-commands"),
        {SAMPLES: samples.as_uri().removeprefix("file://") + "/"},
    )

    job = stack.job("orders_returns")
    assert job == "gi-local-orders-returns"  # the name the tutorial gives
    ran = output_of(outputs, "run")
    assert f"of {job}: SUCCEEDED" in ran and f"read {len(records)}" in ran, ran
    # Problem 1: without --source_schema the CSV's numbers and timestamps come out typed.
    shown = output_of(outputs, "target")
    assert f"rows: {len(records)}" in shown, shown
    schema = dict(re.findall(r"^  (\w+)\s+(\S.*)$", shown.split("schema:", 1)[1], re.MULTILINE))
    assert set(header.split(",")) <= set(schema), shown
    assert schema["return_id"].startswith("int"), shown
    assert schema["updated_at"].startswith("timestamp"), shown
    # The watermark is the newest updated_at as a time, never text.
    watermark = output_of(outputs, "show")
    assert "cursor=2024-06-05T09:10:00" in watermark, watermark
    assert job in output_of(outputs, "runs") or "SUCCEEDED" in output_of(outputs, "runs")
