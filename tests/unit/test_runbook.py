"""docs/runbook.md has a section for every page, each naming the commands to run.

The alarm links Terraform writes point at these anchors (tests/terraform checks the
links against this file); here: the anchors exist, each section names a command, and
the runbook's and README's own links resolve.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = (ROOT / "docs" / "runbook.md").read_text()
PAGES = (
    "zero-records",
    "missed-run",
    "watermark-stale",
    "late-files",
    "null-watermarks",
    "future-watermarks",
    "metric-publish-failures",
    "run-failed",
    "lease-held",
    "page-delivery-failures",
    "event-delivery-failed",
    "start-dependents-failed",
    "failed-upstream",
)


def sections() -> dict[str, str]:
    """Anchor -> the text up to the next anchor."""
    parts = re.split(r'<a id="([a-z-]+)"></a>', RUNBOOK)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("anchor", PAGES)
def test_every_page_has_a_section_naming_what_to_run(anchor):
    text = sections()[anchor]
    assert "**First command:**" in text
    command = r"(aws |\.venv/bin/python -m glue_incremental |status --env|watermarks --env)"
    assert re.search(rf"(`|^){command}", text, flags=re.MULTILINE)


def test_the_runbooks_own_links_resolve():
    links = set(re.findall(r"\]\(#([a-z-]+)\)", RUNBOOK))
    assert links and links - set(sections()) == set()


def test_the_readmes_links_resolve_to_its_headings():
    readme = (ROOT / "README.md").read_text()
    headings = {
        re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
        for title in re.findall(r"^#+ (.+)$", readme, flags=re.MULTILINE)
    }
    links = set(re.findall(r"\]\(#([a-z0-9-]+)\)", readme))
    assert links and links - headings == set()


def test_every_step_of_every_section_has_a_local_form():
    """An ``aws`` step without a row in the runbook's table of local equivalents fails here,
    before tests/e2e/test_operator_tasks.py walks the sections on the local stack."""
    from tests.harness.runbook import local_command, runbook_sections, section_commands

    steps = {
        anchor: [
            local_command(command, "gi-local-orders", "jr_1") for command in section_commands(text)
        ]
        for anchor, text in runbook_sections()
    }
    assert set(PAGES) <= set(steps)
    assert all(steps.values()), [anchor for anchor, found in steps.items() if not found]
    local = [step for found in steps.values() for step in found if step is not None]
    assert all("--env prod" not in step and "gi-prod-orders " not in step for step in local)


def test_the_rewinds_rerun_without_a_corrected_delivery_says_it_pages_zero_records():
    # tests/e2e/test_operator_tasks.py plays it: the walk's rerun reads 0 and that page arrives.
    text = " ".join(sections()["rewind"].split())
    assert "Without a corrected delivery the rerun reads 0 rows" in text
    assert "[zero records](#zero-records) alarm pages" in text
