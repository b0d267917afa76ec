"""The list of tests ``make test`` leaves to ``make test-deep`` names real tests, each guarded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness.deep import DEEP_ONLY, KEPT_IN_MAKE_TEST, deep_only_entry

ROOT = Path(__file__).resolve().parents[2]


def _defines(nodeid: str) -> bool:
    path, _, rest = nodeid.partition("::")
    source = ROOT / path
    if not source.is_file():
        return False
    if not rest:
        return True
    name = rest.split("::")[-1].split("[")[0]
    return re.search(rf"^\s*def {re.escape(name)}\(", source.read_text(), re.M) is not None


@pytest.mark.parametrize("moved", sorted(DEEP_ONLY))
def test_every_moved_test_exists_and_a_test_in_make_test_still_guards_it(moved):
    guard = DEEP_ONLY[moved]
    assert _defines(moved), f"{moved} names no test: remove it from tests/harness/deep.py"
    if guard.startswith("make "):
        return  # not a guarantee of the platform: the make target is its own check
    assert _defines(guard), f"the guard {guard} of {moved} names no test"
    assert deep_only_entry(guard) is None or guard in moved, f"the guard {guard} is deep-only too"


def test_a_parametrized_case_moves_alone_and_a_prefix_of_another_name_does_not_match():
    key = next(k for k in DEEP_ONLY if k.endswith("every_file_system[copy_then_delete]"))
    assert deep_only_entry(key) == key
    assert deep_only_entry(key.replace("copy_then_delete", "local")) is None
    assert deep_only_entry("tests/integration/test_bench_smoke.py::test_every_section_reports")
    assert deep_only_entry("tests/integration/test_bench_smoke_more.py::test_x") is None


@pytest.mark.parametrize("module", sorted(KEPT_IN_MAKE_TEST))
def test_every_test_make_test_keeps_of_a_module_exists_and_the_others_move(module):
    for kept in KEPT_IN_MAKE_TEST[module]:
        assert _defines(f"{module}::{kept}"), f"{module}::{kept} names no test"
        assert deep_only_entry(f"{module}::{kept}") is None
    assert module not in DEEP_ONLY, f"{module} is moved whole and kept in part"
    assert deep_only_entry(f"{module}::test_not_kept") == module
