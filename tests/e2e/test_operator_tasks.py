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

- the CI bootstrap's local part (``terraform/ci`` planned with ``example.tfvars``):
  ``tests/iam/test_iam_evaluation.py`` (its ``recorded`` fixture).

Played here, on one stack (``make up``'s apply and deploy, in a copy of the tree):
docs/runbook.md walked section by section with ``--env local`` (``tests/harness/runbook.py``),
then the README's first pipeline (a CSV load without a schema: ``make apply`` of the
tutorial's entry, which keeps every watermark, target and file the walk left, two runs,
``target``/``watermarks show``/``runs``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental_tools import stack
from glue_incremental_tools.demo import Demo

from tests.harness.provider_daemons import reattached
from tests.harness.readme import CLI, README, make_targets, readme_commands, run_documented
from tests.harness.runbook import local_command, runbook_sections, section_commands
from tests.harness.terraform import copy_tree

# One worker, one stack, in order: the tutorial's `make apply` runs on what the runbook walk left.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("operator_tasks")]

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


@pytest.fixture(scope="module")
def local_stack(endpoint, tmp_path_factory):
    """What ``make up`` leaves, shared by the module's tasks: environments/local applied and
    deployed, the stack's record written where ``make apply`` reads it (the test process
    stands in for the stack's)."""
    endpoint.reset()
    root = checkout(tmp_path_factory.mktemp("operator"))
    with reattached() as provider, pytest.MonkeyPatch.context() as patch:
        for name, value in provider.items():
            patch.setenv(name, value)
        demo = Demo(stack.stack_dir(root), endpoint, log=lambda _line: None, root=root)
        outputs = demo.terraform_apply()
        demo.deploy()
        record = {
            "pid": os.getpid(),
            "terraform_vars": endpoint.terraform_vars(),
            "environment": {**endpoint.environment(), **demo.terraform_env},
            "jobs": outputs["job_names"],
            "data_bucket": outputs.get("data_bucket_name"),
            "watermarks_table": outputs["watermarks_table_name"],
        }
        (demo.workdir / stack.STACK_FILE).write_text(json.dumps(record))
        yield demo


def make_recipe(target: str) -> str:
    """The command the Makefile's ``target`` runs (its prerequisites, ``setup``, are done)."""
    makefile = (ROOT / "Makefile").read_text()
    (recipe,) = re.findall(rf"^{target}:.*\n\t(.+)$", makefile, flags=re.MULTILINE)
    return recipe.replace("$(PY)", ".venv/bin/python")


def play(demo: Demo, commands: list[str], replace: dict[str, str]) -> dict[str, str]:
    """Run each non-``make`` command in the checkout, on the stack; each must exit 0."""
    env = {
        **os.environ,
        **demo.terraform_env,
        "PYTHONPATH": os.pathsep.join([str(demo.root / "lib"), str(demo.root)]),
    }
    outputs: dict[str, str] = {}
    for command in commands:
        targets = make_targets(command)
        if targets:
            assert targets == ["apply"], f"the stack is up already: {command}"
            command = make_recipe("apply")
        for old, new in replace.items():
            command = command.replace(old, new)
        outputs[command] = run_documented(command, cwd=demo.root, env=env, page="docs")
    return outputs


def stack_contents(demo: Demo) -> tuple[list[dict], dict[str, str]]:
    """Every watermark item, and every object of the data bucket with its ETag."""
    outputs = demo.read_outputs()
    table = outputs["watermarks_table_name"]
    pages = aws.client("dynamodb").get_paginator("scan").paginate(TableName=table)
    items = sorted((item for page in pages for item in page["Items"]), key=json.dumps)
    listing = aws.client("s3").get_paginator("list_objects_v2")
    objects = {
        o["Key"]: o["ETag"]
        for page in listing.paginate(Bucket=outputs["data_bucket_name"])
        for o in page.get("Contents", [])
    }
    return items, objects


def output_of(outputs: dict[str, str], word: str) -> str:
    (found,) = [out for command, out in outputs.items() if f" {word} " in command]
    return found


# -- the runbook, walked section by section with --env local ----------------------------------


def shell(demo: Demo, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=demo.root,
        env={
            **os.environ,
            **demo.terraform_env,
            "PYTHONPATH": os.pathsep.join([str(demo.root / "lib"), str(demo.root)]),
        },
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_every_runbook_section_runs_with_env_local(local_stack):
    demo = local_stack
    demo.generate_source()
    job = demo.job("orders")
    good = shell(demo, f"{CLI}run {job}")
    assert good.returncode == 0, good.stdout[-2000:] + good.stderr[-2000:]
    good_run = demo.watermarks(job)["default"]["job_run_id"]
    failed = shell(demo, f"""{CLI}run {job} --arguments '{{"--primary_keys": "order_id"}}'""")
    assert failed.returncode != 0

    walked: dict[str, list[str | None]] = {}
    done: set[str] = set()
    for anchor, text in runbook_sections():
        walked[anchor] = [
            local_command(command, job, good_run) for command in section_commands(text)
        ]
        for local in walked[anchor]:
            if local is None or local in done:
                continue  # a step run once already (status, show) is not repeated
            done.add(local)
            ran = shell(demo, local)
            assert ran.returncode == 0, (
                f"runbook section {anchor!r}: {local}\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
            )
    assert all(walked.values()), [anchor for anchor, steps in walked.items() if not steps]
    # Locally the failed run is FAILED in `runs`, whatever moto's GetJobRuns says.
    runs = shell(demo, f"{CLI}runs {job} --env local")
    assert "FAILED" in runs.stdout and "unknown argument --primary_keys" in runs.stdout, runs.stdout
    # The walk ended on the rewind section's reset (what the next run does after it, a full
    # reload, is tests/integration/test_source_types.py's).
    assert any(" reset " in step for step in walked["rewind"] if step)


# -- the README's first pipeline, added with `make apply` to the stack the runbook used ---------


def test_the_first_pipeline_loads_csv_without_a_schema_typed_then_only_a_new_file(
    local_stack, tmp_path
):
    add_the_tutorial_pipeline(local_stack.root)
    samples = tmp_path / "samples" / "returns"
    header, *records = land_the_tutorial_files(samples)
    here = {SAMPLES: samples.as_uri().removeprefix("file://") + "/"}

    commands = readme_commands(marker="tutorial-commands")
    apply, rest = commands[0], commands[1:]
    assert make_targets(apply) == ["apply"], commands
    # `make apply` on a stack whose pipelines have run keeps every watermark, target and
    # source file (problem 8): the runbook's walk above left runs, state and targets.
    before = stack_contents(local_stack)
    if not before[1]:  # run alone: at least the demo's source files are on the stack
        local_stack.generate_source()
        before = stack_contents(local_stack)
    outputs = play(local_stack, [apply], here)
    assert stack_contents(local_stack) == before
    outputs |= play(local_stack, rest, here)

    # make apply added the pipeline to the running stack under the name the tutorial gives.
    job = local_stack.read_outputs()["job_names"]["orders_returns"]
    assert job == "gi-local-orders-returns"
    ran = output_of(outputs, "run")
    assert f"of {job}: SUCCEEDED" in ran and f"read {len(records)}" in ran, ran
    # Without --source_schema the CSV's numbers and timestamps come out typed (problem 1).
    shown = output_of(outputs, "target")
    assert f"rows: {len(records)}" in shown, shown
    schema = dict(re.findall(r"^  (\w+)\s+(\S.*)$", shown.split("schema:", 1)[1], re.MULTILINE))
    assert set(header.split(",")) <= set(schema), shown
    assert schema["return_id"].startswith("int"), shown
    assert schema["updated_at"].startswith("timestamp"), shown
    # The watermark is the newest updated_at as a time, never text.
    assert "cursor=2024-06-05T09:10:00" in output_of(outputs, "show"), outputs
    assert "SUCCEEDED" in output_of(outputs, "runs")

    # "Add a file with later updated_at values and run again": only it is read, merged by key.
    later = [
        "2,1002,20.00,2024-06-06 10:00:00,2024-06-05",
        "3,1003,5.00,2024-06-06 11:00:00,2024-06-06",
    ]
    (samples / "2024-06-06.csv").write_text("\n".join([header, *later]) + "\n")
    (command,) = [c for c in outputs if " run " in c]
    again = play(local_stack, [command], {})[command]
    assert f"of {job}: SUCCEEDED" in again and f"read {len(later)}" in again, again
    (look,) = [c.split("#", 1)[0].strip() for c in outputs if " target " in c]
    seen = json.loads(play(local_stack, [f"{look} --json"], {})[f"{look} --json"])
    assert seen["row_count"] == 3
    amounts = {row["return_id"]: row["amount"] for row in seen["rows"]}
    assert amounts == {1: 10.0, 2: 20.0, 3: 5.0}
