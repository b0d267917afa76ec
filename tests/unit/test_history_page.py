"""docs/history.md's examples fit the environments they name, and its pages agree on the
default tracked columns.

The local walk's commands run on the stack in tests/e2e/test_operator_tasks.py; this
checks, without AWS, what can be checked on the text.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import timedelta
from pathlib import Path

import hcl2
from glue_incremental.load.config import HISTORY_OPTIONS
from glue_incremental_tools import cli
from glue_incremental_tools.demo import DAYS, FIRST_DAY, RESEGMENTED, _customer
from hcl2.utils import SerializationOptions

from tests.harness.readme import CLI, page_commands

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "history.md"
DEV = ROOT / "terraform" / "environments" / "aws" / "dev.tfvars"
STRINGS = SerializationOptions(with_comments=False, explicit_blocks=False, strip_string_quotes=True)
DEFAULT_TRACKED = "every column of the row but the watermark"


def dev_pipelines() -> dict[str, dict]:
    return hcl2.loads(DEV.read_text(), serialization_options=STRINGS)["pipelines"]


def example() -> tuple[str, dict]:
    """The page's dev pipeline entry: its name and fields."""
    section = PAGE.read_text().split("## A customers dimension with history", 1)[1]
    block = re.search(r"^```hcl\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    assert block, "history.md's setup section lacks its hcl entry"
    parsed = hcl2.loads(f"pipelines = {{\n{block.group(1)}}}\n", serialization_options=STRINGS)
    ((name, entry),) = parsed["pipelines"].items()
    return name, entry


def sql() -> str:
    return "\n".join(re.findall(r"^```sql\n(.*?)^```", PAGE.read_text(), re.M | re.S))


def test_the_dev_example_is_a_pipeline_of_its_own_beside_the_join_side_reading_its_source():
    name, entry = example()
    dev = dev_pipelines()
    assert name not in dev, name
    assert entry["target"]["path"] not in {p["target"]["path"] for p in dev.values()}
    # It reads what dev's customers (the orders_enriched join's right side) reads.
    assert dev["orders_enriched"]["join"]["right"]["pipeline"] == "customers"
    assert entry["source"] == dev["customers"]["source"]
    assert entry["history"]["columns"]
    # The page's queries read its table (the pipeline's name) and dev's orders.
    assert set(re.findall(r"\bgi_dev\.(\w+)", sql())) == {name, "orders"}


def test_the_as_of_join_uses_columns_the_dev_orders_have():
    orders = dev_pipelines()["orders"]["target"]
    columns = {c["name"] for c in orders["columns"] + orders["partitions"]}
    used = set(re.findall(r"\bo\.(\w+)", sql()))
    assert used and used <= columns, used - columns


def test_the_local_walk_lands_a_resegmented_customer_as_make_up_lands_the_snapshots():
    commands = page_commands(PAGE, "history-local")
    (land,) = [command for command in commands if command.startswith("aws s3 cp - ")]
    first, *body, _end = land.splitlines()
    day = FIRST_DAY + timedelta(days=DAYS)
    assert f"/raw/customers/order_date={day}/part-0001.json " in first, first
    rows = [json.loads(line) for line in body]
    assert [row["customer_id"] for row in rows] == [1] and 1 in RESEGMENTED
    assert rows == [_customer(1, day)]  # the day-4 snapshot's row, with its new segment
    assert rows[0]["segment"] != _customer(1, FIRST_DAY)["segment"]
    parser = cli.build_parser()
    for command in (c for c in commands if c.startswith(CLI)):
        args, extras = parser.parse_known_args(
            shlex.split(command.removeprefix(CLI), comments=True)
        )
        assert (extras, args.handler is not None) == ([], True), command
    local = (ROOT / "terraform" / "environments" / "local" / "main.tf").read_text()
    assert "\n    customers_history = merge(" in local
    assert any(" run gi-local-customers-history" in c for c in commands)


def test_every_page_says_the_same_default_tracked_columns():
    (option,) = [o for o in HISTORY_OPTIONS if o.name == "history_columns"]
    variables = ROOT / "terraform" / "modules" / "incremental_pipeline" / "variables.tf"
    texts = {
        "--history_columns": option.help,
        "variables.tf": variables.read_text(),
        "history.md": PAGE.read_text(),
        "custom-jobs.md": (ROOT / "docs" / "custom-jobs.md").read_text(),
    }
    flat = {where: " ".join(text.split()) for where, text in texts.items()}
    assert [where for where, text in flat.items() if DEFAULT_TRACKED not in text] == []
    assert [where for where, text in flat.items() if "every column but" in text] == []
