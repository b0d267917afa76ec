"""The operator's everyday tasks, played on one local stack from the docs' own commands.

Each task's commands are taken from the page that shows them (the fenced blocks, as
``tests/harness/readme.py`` extracts them), so a doc change that breaks a command fails
here. Played elsewhere, with the same commands:

- set up and the demo (README quick start and local guide): ``tests/e2e/test_platform_end_to_end.py``
  (the demo's chain, then every ``readme-commands`` command on its stack; ``make setup``
  again on the checkout);
- the CI bootstrap's local part (docs/bootstrap.md): ``tests/e2e/test_bootstrap.py``.

Played here, in order, on one stack (``make up``'s apply and deploy, in a copy of the tree):
docs/runbook.md walked section by section with ``--env local`` (``tests/harness/runbook.py``;
its ``aws s3`` steps, the source listing and the quarantine, as they are on the stack);
the zero-record page the walk's empty run raised (``pages``, ``status``: it stays in ALARM);
a bad load undone by the runbook's rewind on the Parquet orders (the run, with records,
clears that page; the bad file quarantined); docs/local-tools.md's ``--key`` and ``--where``
lookups on those orders; ``run`` of the Iceberg pipeline (its jars and
warehouse from the job's own arguments) and the same undo on it (the commands find its
table where the job wrote it), the corrected delivery's rerun converging; the README's
first pipeline (a CSV load without a schema: ``make apply`` of the tutorial's entry, which
keeps every watermark, target and file already there, two runs, its stale-watermark alarm);
one ``make apply`` of three pages' changes (docs/transforms.md's function and
docs/deletes.md's marker on that pipeline, docs/custom-jobs.md's script as a pipeline), then
docs/transforms.md's delivery with a new column and a delete, and the script's run on the
orders its page lands; last, docs/history.md's local walk (the customers' history loaded, a
day-4 file moving customer 1 to another segment, its closed and current versions).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental_tools import stack
from glue_incremental_tools.demo import FIRST_DAY, Demo

from tests.harness.aggregates import documented_script
from tests.harness.provider_daemons import reattached
from tests.harness.readme import (
    CLI,
    README,
    make_targets,
    page_blocks,
    page_commands,
    readme_commands,
    run_documented,
)
from tests.harness.runbook import local_command, runbook_sections, section_commands
from tests.harness.terraform import copy_tree

# One worker, one stack, in order: the tutorial's `make apply` runs on what the runbook walk left.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("operator_tasks")]

ROOT = README.parent
DOCS = ROOT / "docs"
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
    # A copy: the custom jobs page adds a script, as its author would.
    shutil.copytree(ROOT / "glue_scripts", root / "glue_scripts")
    for name in ("lib", "build", ".venv"):
        (root / name).symlink_to(ROOT / name)
    return root


def add_pipeline(root: Path, block: str) -> None:
    """A page's ``hcl`` entry, added to ``local.pipelines`` of environments/local."""
    main = root / "terraform" / "environments" / "local" / "main.tf"
    text = main.read_text()
    anchor = "  pipelines = {\n"
    assert text.count(anchor) == 1, "environments/local has no single `pipelines = {` map"
    entry = "".join(f"    {line}\n" for line in block.splitlines())
    main.write_text(text.replace(anchor, anchor + entry))


def add_the_tutorial_pipeline(root: Path) -> None:
    """Step 2: the README's ``hcl`` entry."""
    add_pipeline(root, tutorial_block("hcl"))


def edit_the_tutorial_pipeline(root: Path, *lines: str) -> None:
    """Set ``lines`` (``name = value``, as a page shows them) in the tutorial's entry: each
    replaces the entry's line of that name, or is added after its ``arguments`` line."""
    main = root / "terraform" / "environments" / "local" / "main.tf"
    text = main.read_text()
    begin = text.index("    orders_returns = {\n")
    end = text.index("\n    }\n", begin)
    entry = text[begin:end].splitlines()
    for line in lines:
        name = line.split("=", 1)[0].strip()
        at = [i for i, old in enumerate(entry) if old.strip().split(" ", 1)[0] == name]
        if at:
            entry[at[0]] = f"      {line}"
        else:
            (after,) = [i for i, old in enumerate(entry) if old.strip().startswith("arguments ")]
            entry.insert(after + 1, f"      {line}")
    main.write_text(text[:begin] + "\n".join(entry) + text[end:])


def land_the_tutorial_files(samples: Path) -> list[str]:
    """Step 1: the README's CSV file (its first line names it), in ``samples``."""
    name, *lines = tutorial_block("text").splitlines()
    samples.mkdir(parents=True, exist_ok=True)
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


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    """Where the tutorial's CSV files land (``/home/me/samples/returns/`` on the page)."""
    return tmp_path_factory.mktemp("samples") / "returns"


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
    # An operator's shell names no warehouse: the commands find a local run's Iceberg
    # table where its job wrote it (the tests' session may export one).
    operator = {k: v for k, v in os.environ.items() if k != "GLUE_INCREMENTAL_ICEBERG_WAREHOUSE"}
    return subprocess.run(
        ["bash", "-c", command],
        cwd=demo.root,
        env={
            **operator,
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
    done: dict[str, str] = {}
    values = {"bucket": demo.outputs["data_bucket_name"], "file": BAD_FILE}
    for anchor, text in runbook_sections():
        walked[anchor] = [
            local_command(command, job, good_run, values) for command in section_commands(text)
        ]
        for local in walked[anchor]:
            if local is None or local in done:
                continue  # a step run once already (status, show) is not repeated
            if " s3 mv " in local:  # the rewind's quarantine: a bad file to take out
                put_orders(demo, BAD_FILE, BAD)
            ran = shell(demo, local)
            assert ran.returncode == 0, (
                f"runbook section {anchor!r}: {local}\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
            )
            done[local] = ran.stdout
    assert all(walked.values()), [anchor for anchor, steps in walked.items() if not steps]
    # "Did the upstream deliver?" lists the orders' files; the quarantined one left the source.
    (listed,) = [out for step, out in done.items() if " s3 ls " in step]
    assert f"raw/orders/order_date={FIRST_DAY}/part-0001.json" in listed, listed
    assert not orders_keys(demo, BAD_FILE) and quarantined(demo, BAD_FILE)
    # Locally the failed run is FAILED in `runs`, whatever moto's GetJobRuns says.
    runs = shell(demo, f"{CLI}runs {job} --env local")
    assert "FAILED" in runs.stdout and "unknown argument --primary_keys" in runs.stdout, runs.stdout
    # The walk ended on the rewind section's reset (what the next run does after it, a full
    # reload, is tests/integration/test_source_types.py's).
    assert any(" reset " in step for step in walked["rewind"] if step)


# -- the zero-record page, and a bad load undone on Parquet and on Iceberg ----------------------


def alarm_states(demo: Demo, pipeline: str) -> dict[str, str]:
    """``status --env local --since 1`` (the runbook's local step), its alarm states."""
    shown = shell(demo, f"{CLI}status --env local --since 1 --json")
    assert shown.returncode == 0, shown.stderr
    (row,) = [row for row in json.loads(shown.stdout) if row["pipeline"] == pipeline]
    return row["alarms"]


def test_the_zero_record_page_arrives_and_stays_in_alarm_while_no_run_brings_records(
    local_stack,
):
    # The runbook walk's runs after the first read nothing new (a file source's cursor set
    # back reads no file): RecordsNew 0, the orders' zero-record alarm fires and pages.
    zero = local_stack.read_outputs()["alarm_names"]["orders"]["zero_records"]
    text = dict(runbook_sections())["zero-records"]
    spans = re.findall(r"`((?:pages|status) --env local[^`]*)`", text)
    steps = [CLI + " ".join(span.split()) for span in spans]
    assert len(steps) == 2, steps
    outputs = play(local_stack, steps, {})
    pages = output_of(outputs, "pages")
    assert [line for line in pages.splitlines() if "ALARM" in line and zero in line], pages
    # Minutes after it fired (the walk went on), no run since: it is still in ALARM.
    assert alarm_states(local_stack, "orders")["zero_records"] == "ALARM", pages


def orders_file(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows).encode()


# The bad delivery of both undo tasks: a made-up order and a wrong amount, both newer than
# every good row, in a file of their own.
BAD_FILE = f"order_date={FIRST_DAY}/part-0009-bad.json"
BAD = [
    {
        "order_id": f"{FIRST_DAY:%Y%m%d}-999",
        "customer_id": 1,
        "amount": 1.0,
        "status": "placed",
        "op": "I",
        "updated_at": f"{FIRST_DAY + timedelta(days=9)}T00:00:00Z",
    },
    {
        "order_id": f"{FIRST_DAY:%Y%m%d}-001",
        "customer_id": 2,
        "amount": 99999.0,
        "status": "placed",
        "op": "U",
        "updated_at": f"{FIRST_DAY + timedelta(days=9)}T00:00:00Z",
    },
]


def put_orders(demo: Demo, name: str, rows: list[dict]) -> None:
    """``rows`` as the orders source's file ``name`` (under its prefix)."""
    bucket, _, prefix = demo.orders.removeprefix("s3://").partition("/")
    aws.client("s3").put_object(Bucket=bucket, Key=f"{prefix}/{name}", Body=orders_file(rows))


def orders_keys(demo: Demo, name: str, under: str = "") -> list[str]:
    """The data bucket's keys of the orders source's file ``name`` (``under`` a prefix)."""
    bucket, _, prefix = demo.orders.removeprefix("s3://").partition("/")
    listed = aws.client("s3").list_objects_v2(Bucket=bucket, Prefix=f"{under}{prefix}/{name}")
    return [o["Key"] for o in listed.get("Contents", [])]


def quarantined(demo: Demo, name: str) -> bool:
    return bool(orders_keys(demo, name, under="quarantine/"))


def quarantine(demo: Demo, name: str) -> None:
    """The runbook's step 3 (its ``aws s3 mv``, on the stack): the orders source's file
    ``name`` moved to a quarantine prefix."""
    (move,) = [c for c in section_commands(dict(runbook_sections())["rewind"]) if " s3 mv " in c]
    values = {"bucket": demo.outputs["data_bucket_name"], "file": name}
    moved = shell(demo, local_command(move, demo.job("orders"), "", values) or "false")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert not orders_keys(demo, name) and quarantined(demo, name)


def pairs(rows: list[dict]) -> set[tuple[str, float]]:
    return {(row["order_id"], row["amount"]) for row in rows}


def target_rows(demo: Demo, job: str) -> set[tuple[str, float]]:
    """``target JOB --env local``'s rows as (order_id, amount): each key once."""
    shown = shell(demo, f"{CLI}target {job} --env local --limit 1000 --json")
    assert shown.returncode == 0, shown.stderr
    view = json.loads(shown.stdout)
    assert view["row_count"] == len(view["rows"]) == len({r["order_id"] for r in view["rows"]})
    return pairs(view["rows"])


def last_run(demo: Demo, job: str) -> str:
    """The newest run in ``watermarks history`` (the runbook's step 1): a Glue run id, never a
    hand change's (``manual-reset``, ``manual-rewind``)."""
    shown = shell(demo, f"{CLI}watermarks --env local history {job} --json")
    assert shown.returncode == 0, shown.stderr
    items = json.loads(shown.stdout)["items"]
    return next(item["job_run_id"] for item in items if item["job_run_id"].startswith("jr_"))


def test_a_bad_load_is_undone_by_the_runbooks_rewind_on_parquet(local_stack):
    demo = local_stack
    orders = demo.job("orders")
    # Still no orders run since the empty one: the zero-record page stands.
    assert alarm_states(demo, "orders")["zero_records"] == "ALARM"
    good_run, good_rows = last_run(demo, orders), target_rows(demo, orders)
    assert len(good_rows) == 60

    put_orders(demo, BAD_FILE, BAD)
    ran = shell(demo, f"{CLI}run {orders}")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert pairs(BAD) <= target_rows(demo, orders)

    # The runbook's undo: rewind to the last good run; the target is back at once.
    (rewind,) = [c for c in section_commands(dict(runbook_sections())["rewind"]) if " rewind " in c]
    undone = shell(demo, local_command(rewind, orders, good_run))
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert target_rows(demo, orders) == good_rows
    # Step 3: the bad file leaves the source (the Iceberg pipeline reads the same orders).
    quarantine(demo, BAD_FILE)

    # The run brought records: the zero-record page clears (LocalStack evaluates each period).
    deadline = time.monotonic() + 60
    while alarm_states(demo, "orders")["zero_records"] == "ALARM" and time.monotonic() < deadline:
        time.sleep(2)
    assert alarm_states(demo, "orders")["zero_records"] == "OK"


def test_the_local_tools_lookups_find_rows_of_the_stacks_orders(local_stack):
    # docs/local-tools.md's `--key` and `--where`, as shown, on the orders the walk loaded.
    shown = page_commands(DOCS / "local-tools.md", "inspect-commands")
    lookups = [c.split("#", 1)[0].strip() for c in shown if " --key " in c or " --where " in c]
    assert len(lookups) == 2, shown
    outputs = play(local_stack, [f"{c} --json" if "--json" not in c else c for c in lookups], {})
    (one,) = [json.loads(out) for command, out in outputs.items() if " --key " in command]
    (day,) = [json.loads(out) for command, out in outputs.items() if " --where " in command]
    assert one["matched"] == 1 and one["rows"][0]["order_id"] == f"{FIRST_DAY:%Y%m%d}-001", one
    assert day["matched"] > 1 and {row["order_date"] for row in day["rows"]} == {f"{FIRST_DAY}"}


def test_the_iceberg_pipeline_runs_with_the_run_command(local_stack):
    if not stack_contents(local_stack)[1]:  # run alone: the demo's orders to load
        local_stack.generate_source()
    iceberg = local_stack.job("orders_iceberg")
    ran = shell(local_stack, f"{CLI}run {iceberg}")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]


def test_a_bad_load_is_undone_by_the_runbooks_rewind_on_iceberg(local_stack):
    demo = local_stack
    iceberg = demo.job("orders_iceberg")
    # The good run: the pipeline's run above, of the orders without the quarantined file.
    good_run, good_rows = last_run(demo, iceberg), target_rows(demo, iceberg)
    assert len(good_rows) == 60

    put_orders(demo, BAD_FILE, BAD)
    ran = shell(demo, f"{CLI}run {iceberg}")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert pairs(BAD) <= target_rows(demo, iceberg)

    # The runbook's undo, as typed (no warehouse to name): the table rolls back at once.
    steps = section_commands(dict(runbook_sections())["rewind"])
    (rewind,) = [c for c in steps if " rewind " in c]
    undone = shell(demo, local_command(rewind, iceberg, good_run))
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert target_rows(demo, iceberg) == good_rows

    # Step 3: the bad file out, the corrected delivery in, the runbook's rerun: it reads
    # the correction alone and converges.
    quarantine(demo, BAD_FILE)
    fixed = {**BAD[1], "amount": 25.0, "updated_at": f"{FIRST_DAY + timedelta(days=10)}T00:00:00Z"}
    put_orders(demo, f"order_date={FIRST_DAY}/part-0010-fixed.json", [fixed])
    (rerun,) = [c for c in steps if " start-job-run " in c]
    again = shell(demo, local_command(rerun, iceberg, good_run))
    assert again.returncode == 0 and "read 1 (1 new)," in again.stdout, again.stdout + again.stderr
    expected = {row for row in good_rows if row[0] != fixed["order_id"]} | pairs([fixed])
    assert target_rows(demo, iceberg) == expected


# -- the README's first pipeline, added with `make apply` to the stack the runbook used ---------


def here(samples: Path) -> dict[str, str]:
    return {SAMPLES: samples.as_uri().removeprefix("file://") + "/"}


def test_the_first_pipeline_loads_csv_without_a_schema_typed_then_only_a_new_file(
    local_stack, samples
):
    add_the_tutorial_pipeline(local_stack.root)
    header, *records = land_the_tutorial_files(samples)

    commands = readme_commands(marker="tutorial-commands")
    apply, rest = commands[0], commands[1:]
    assert make_targets(apply) == ["apply"], commands
    # `make apply` on a stack whose pipelines have run keeps every watermark, target and
    # source file (problem 8): the runbook's walk above left runs, state and targets.
    before = stack_contents(local_stack)
    if not before[1]:  # run alone: at least the demo's source files are on the stack
        local_stack.generate_source()
        before = stack_contents(local_stack)
    outputs = play(local_stack, [apply], here(samples))
    assert stack_contents(local_stack) == before
    outputs |= play(local_stack, rest, here(samples))

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

    # The sample's 2024 watermark is stale, as the README says under the tutorial's commands:
    # its alarm pages (for one alarm period: no newer lag, it returns to OK).
    said = " ".join(README.read_text().split())
    stale = local_stack.read_outputs()["alarm_names"]["orders_returns"]["watermark_stale"]
    assert f"`{stale}` goes to ALARM and pages" in said
    pages = f"{CLI}pages --env local"
    deadline, paged = time.monotonic() + 60, ""
    while not any("ALARM" in line and stale in line for line in paged.splitlines()):
        assert time.monotonic() < deadline, paged
        time.sleep(2)
        paged = play(local_stack, [pages], {})[pages]


# -- a transform, soft deletes and a custom script: three pages' changes, one `make apply` ------


def check_the_transform_as_shown(root: Path) -> None:
    """What docs/transforms.md's local block wrote is what the page shows: its function (the
    first ``python`` block, in the file its first line names) and, in the tutorial's entry,
    the ``transform`` line of step 2."""
    text = (DOCS / "transforms.md").read_text()
    (first, *_) = re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    path = first.splitlines()[0].removeprefix("# ")
    assert (root / path).read_text() == first
    (line, *_) = re.findall(r"^\s*(transform = \{.*\})$", text, flags=re.MULTILINE)
    main = (root / "terraform" / "environments" / "local" / "main.tf").read_text()
    entry = main.split("    orders_returns = {\n", 1)[1].split("\n    }\n", 1)[0]
    assert [found.strip() for found in entry.splitlines()].count(line) == 1, entry


@pytest.fixture(scope="module")
def pages_applied(local_stack) -> dict[str, list[str]]:
    """docs/transforms.md (the function on the tutorial's pipeline), docs/deletes.md (its
    delete marker) and docs/custom-jobs.md (the example script as a pipeline), done as each
    page says, then the one ``make apply`` every page ends on. Returns each page's commands."""
    root = local_stack.root
    (arguments,) = page_blocks(DOCS / "deletes.md", "delete-marker-local", "hcl")
    edit_the_tutorial_pipeline(root, arguments.strip())
    assert "`glue_scripts/daily_revenue.py`" in (DOCS / "custom-jobs.md").read_text()
    (root / "glue_scripts" / "daily_revenue.py").write_text(documented_script())
    (entry,) = page_blocks(DOCS / "custom-jobs.md", "custom-job-local", "hcl")
    add_pipeline(root, entry)
    markers = {
        "transforms": "transform-local",
        "deletes": "delete-marker-local",
        "custom-jobs": "custom-job-local",
    }
    commands = {page: page_commands(DOCS / f"{page}.md", mark) for page, mark in markers.items()}
    for steps in commands.values():
        assert [make_targets(step) for step in steps].count(["apply"]) == 1, steps
    (apply,) = [i for i, step in enumerate(commands["transforms"]) if make_targets(step)]
    play(local_stack, commands["transforms"][:apply], {})  # the package and the entry's line
    check_the_transform_as_shown(root)
    play(local_stack, ["make apply"], {})
    return commands


def transforms_delivery() -> tuple[str, list[str]]:
    """docs/transforms.md's local delivery (the function's PII columns): its file name and
    lines."""
    (block,) = page_blocks(DOCS / "transforms.md", "transform-local", "text")
    name, *lines = block.splitlines()
    return Path(name).name, lines


def test_a_delivery_with_a_new_column_and_a_delete_loads_through_the_pipelines_transform(
    pages_applied, local_stack, samples
):
    # docs/transforms.md's delivery, carrying docs/deletes.md's marker (return 1 deleted)
    # and a new column of its own (`reason`) too.
    name, (header, *records) = transforms_delivery()
    extra = ["reason", "op"]
    width = len(header.split(","))
    delivery = [
        ",".join([header, *extra]),
        *(f"{record},damaged," for record in records),
        ",".join(["1,1001,,2024-06-07 08:00:00,2024-06-05", *[""] * (width - 5), "", "D"]),
    ]
    (samples / name).write_text("\n".join(delivery) + "\n")
    steps = pages_applied["transforms"]
    (apply,) = [i for i, step in enumerate(steps) if make_targets(step)]
    (command, lookup) = steps[apply + 1 :]
    ran = play(local_stack, [command], here(samples))
    assert "SUCCEEDED" in next(iter(ran.values())) and "read 2" in next(iter(ran.values())), ran
    shown = play(local_stack, [lookup], {})[lookup]
    assert hashlib.sha256(b"ann@example.com").hexdigest() in shown, shown

    look = f"{CLI}target orders_returns --env local --json"
    seen = json.loads(play(local_stack, [look], {})[look])
    columns = {column["name"] for column in seen["schema"]}
    # The new column joins the target; the function hashed `email` and dropped `phone`.
    assert {"reason", "email"} <= columns and "phone" not in columns, columns
    rows = {row["return_id"]: row for row in seen["rows"]}
    assert sorted(rows) == [2, 3, 4], rows  # return 1's delete removed it
    assert rows[4]["reason"] == "damaged" and rows[2]["reason"] is None
    assert rows[4]["email"] == hashlib.sha256(b"ann@example.com").hexdigest()
    key = f"{CLI}target orders_returns --env local --key return_id=1 --json"
    assert json.loads(play(local_stack, [key], {})[key])["matched"] == 0


def landed_orders(root: Path) -> dict[tuple[str, int], int]:
    """The revenue per (day, customer) of the orders the page's commands wrote under
    ``shop_orders/day=<d>/``."""
    revenue: dict[tuple[str, int], int] = defaultdict(int)
    for path in sorted((root / "shop_orders").glob("day=*/*.json")):
        day = path.parent.name.removeprefix("day=")
        for line in path.read_text().splitlines():
            order = json.loads(line)
            revenue[(day, order["customer_id"])] += order["amount"]
    return revenue


def test_the_custom_jobs_page_script_runs_as_a_pipeline_of_the_local_stack(
    pages_applied, local_stack
):
    assert local_stack.read_outputs()["data_bucket_name"] == "gi-local-data"
    steps = pages_applied["custom-jobs"]
    (apply,) = [i for i, step in enumerate(steps) if make_targets(step)]
    # The page's shell up to `make apply`, as one shell: its `eval` routes the `aws` after it.
    land = "\n".join(["set -e", *steps[:apply]])
    play(local_stack, [land], {})
    expected = landed_orders(local_stack.root)
    assert len(expected) >= 2, expected

    outputs = play(local_stack, steps[apply + 1 :], {})
    assert "of gi-local-shop-daily-revenue: SUCCEEDED" in output_of(outputs, "run"), outputs
    (look,) = [c.split("#", 1)[0].strip() for c in steps if " target " in c]
    seen = json.loads(play(local_stack, [f"{look} --json"], {})[f"{look} --json"])
    assert seen["row_count"] == len(expected)
    assert {(r["day"], r["customer_id"]): r["revenue"] for r in seen["rows"]} == expected


# -- docs/history.md's local walk: a customer's segment changes, its two versions ----------------


def test_the_history_pages_walk_shows_a_customers_closed_and_current_version(local_stack):
    demo = local_stack
    if not stack_contents(demo)[1]:  # run alone: make up's customer snapshots of days 1 to 3
        demo.generate_source()
    steps = page_commands(DOCS / "history.md", "history-local")
    (route,) = [i for i, step in enumerate(steps) if step.startswith("eval ")]
    first, (after, look) = play(demo, steps[:route], {}), steps[route + 2 :]
    assert "of gi-local-customers-history: SUCCEEDED" in next(iter(first.values())), first
    # The page's landing as one shell: its `eval` routes the `aws` after it.
    play(demo, ["\n".join(["set -e", *steps[route : route + 2]])], {})

    again = play(demo, [after], {})[after]
    assert "of gi-local-customers-history: SUCCEEDED" in again, again
    assert "; versions opened 1, closed 1" in again, again
    shown = f"{look.split('#', 1)[0].strip()} --json"
    rows = json.loads(play(demo, [shown], {})[shown])["rows"]
    rows.sort(key=lambda row: row["valid_from"])
    assert [(r["segment"], r["is_current"]) for r in rows] == [("b", False), ("a", True)], rows
    assert rows[0]["valid_to"] == rows[1]["valid_from"] and rows[1]["valid_to"] is None, rows
