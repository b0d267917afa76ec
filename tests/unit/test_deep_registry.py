"""The lists of tests ``make test`` leaves to ``make test-rest`` and ``make test-deep`` name real
tests, each guarded by a test ``make test`` runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness.deep import (
    DEEP_ONLY,
    KEPT_IN_MAKE_TEST,
    MAKE_TEST_REST,
    deep_only_entry,
    rest_entry,
)

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


def _in_make_test(nodeid: str) -> bool:
    return deep_only_entry(nodeid) is None and rest_entry(nodeid) is None


@pytest.mark.parametrize("moved", sorted({**DEEP_ONLY, **MAKE_TEST_REST}))
def test_every_moved_test_exists_and_a_test_in_make_test_still_guards_it(moved):
    guard = {**DEEP_ONLY, **MAKE_TEST_REST}[moved]
    assert _defines(moved), f"{moved} names no test: remove it from tests/harness/deep.py"
    if guard.startswith("make "):
        return  # not a guarantee of the platform: the make target is its own check
    assert _defines(guard), f"the guard {guard} of {moved} names no test"
    assert _in_make_test(guard) or guard in moved, f"the guard {guard} is not in make test"


def test_a_deep_only_repeat_stays_out_of_make_test_rest_even_in_a_moved_module():
    repeat = next(
        k
        for k in DEEP_ONLY
        if k.startswith("tests/integration/test_bounded_batches_backfills.py::")
    )
    assert "tests/integration/test_bounded_batches_backfills.py" in MAKE_TEST_REST
    assert deep_only_entry(repeat) == repeat
    assert rest_entry(repeat) is None
    assert rest_entry("tests/integration/test_bounded_batches_backfills.py::test_other") is not None


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
        assert _in_make_test(f"{module}::{kept}")
    assert module not in {**DEEP_ONLY, **MAKE_TEST_REST}, (
        f"{module} is moved whole and kept in part"
    )
    assert rest_entry(f"{module}::test_not_kept") == module
