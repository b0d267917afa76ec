"""``make test`` hands its workers the longest modules first, each module whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _pytest.nodeid import coerce_node_id

from tests.harness.schedule import LONGEST_FIRST, keep_groups_together, schedule_rank

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", LONGEST_FIRST)
def test_every_module_the_schedule_names_exists(module):
    assert (ROOT / module).is_file(), f"{module} is gone: update tests/harness/schedule.py"


def test_the_listed_modules_go_first_in_their_order_and_the_rest_keep_theirs():
    first, second = LONGEST_FIRST[0], LONGEST_FIRST[1]
    nodeids = [
        "tests/unit/test_a.py::test_one",
        f"{second}::test_x[param::with::colons]",
        "tests/integration/test_b.py::test_two",
        f"{first}::test_y",
        "tests/unit/test_a.py::test_three",
    ]
    assert sorted(nodeids, key=schedule_rank) == [
        f"{first}::test_y",
        f"{second}::test_x[param::with::colons]",
        "tests/unit/test_a.py::test_one",
        "tests/integration/test_b.py::test_two",
        "tests/unit/test_a.py::test_three",
    ]


def test_make_test_keeps_the_collection_order_instead_of_xdists_reordering():
    makefile = (ROOT / "Makefile").read_text()
    pytest_line = re.search(r"^PYTEST := .*$", makefile, re.M)
    assert pytest_line is not None
    assert "--dist loadgroup" in pytest_line.group(0)
    assert "--no-loadscope-reorder" in pytest_line.group(0)


class _Item:
    """What keep_groups_together reads of a pytest item: its id and its xdist_group marks."""

    def __init__(self, nodeid: str, *groups: str) -> None:
        self._id = coerce_node_id(nodeid)
        self.groups = groups

    @property
    def nodeid(self) -> str:
        return str(self._id)

    def iter_markers(self, name: str):
        return [
            pytest.mark.xdist_group(group).mark for group in self.groups if name == "xdist_group"
        ]


def test_a_grouped_test_carries_its_group_in_the_node_id_the_scheduler_reads_once():
    grouped = _Item("tests/terraform/test_x.py::test_plan[dev]", "terraform_apply")
    alone = _Item("tests/unit/test_y.py::test_z")

    keep_groups_together([grouped, alone])
    keep_groups_together([grouped, alone])

    assert grouped.nodeid == "tests/terraform/test_x.py::test_plan[dev]@terraform_apply"
    assert alone.nodeid == "tests/unit/test_y.py::test_z"
