"""The order ``make test`` and ``make test-rest`` hand their modules to the xdist workers:
the longest first (each run takes the listed modules it selects).

``--dist loadgroup`` gives a worker one module (or ``xdist_group``) at a time; with
``--no-loadscope-reorder`` it takes them in collection order. pytest-xdist's default order
(most tests first) starts the one-test end-to-end chain near the end, and the other worker
then idles for minutes. Started first, the long modules overlap, and the many short ones
fill in behind them. Durations from a fresh-clone ``make test`` (``--durations``); a module
not listed keeps its place in collection order after these.
"""

from __future__ import annotations

from typing import Any

from _pytest.nodeid import coerce_node_id

# Longest first. A worker takes another module whenever two or fewer of its tests are
# pending, so the one-test chain takes the next module with it: the Terraform suites
# follow the chain, and the apply group goes to the other worker first.
LONGEST_FIRST: tuple[str, ...] = (
    "tests/iam/test_iam_evaluation.py",  # dev and prod applied, calls evaluated: ~4 min, mostly waits
    "tests/terraform/test_terraform_local.py",  # apply, plans, alarms, destroy: ~4 min
    "tests/e2e/test_platform_end_to_end.py",  # the demo's chain: ~6 min
    "tests/e2e/test_operator_tasks.py",  # tutorial via make apply, the runbook walked: ~10 min
    "tests/terraform/test_terraform.py",  # every terraform test suite, validate, checkov: ~2 min
    "tests/e2e/test_bootstrap.py",  # docs/bootstrap.md walked: terraform/ci and dev applied: ~4 min
    "tests/integration/test_writer_crash_safety.py",  # crash sweeps on local disk and S3A
    "tests/terraform/test_aws_limits.py",  # two environment plans
    "tests/integration/test_kill_script.py",  # the real script SIGKILLed
    "tests/integration/test_incremental_load_files.py",
    "tests/integration/test_s3_discovery_edge_cases.py",
    "tests/integration/test_key_index_edge_cases.py",
    "tests/integration/test_iceberg_load.py",
    "tests/terraform/test_watermarks_table_module.py",
)


def schedule_rank(nodeid: str) -> int:
    """Position of the test's module in ``LONGEST_FIRST``; every other module after them."""
    module = nodeid.split("::", 1)[0]
    try:
        return LONGEST_FIRST.index(module)
    except ValueError:
        return len(LONGEST_FIRST)


def keep_groups_together(items: list[Any]) -> None:
    """Suffix ``@<group>`` to the node id of every ``xdist_group`` test, on an xdist worker.

    ``--dist loadgroup`` sends the tests whose node ids share that suffix to one worker, so a
    module-scoped fixture (a Terraform apply, two environment plans) runs once. pytest-xdist
    3.8 writes the suffix to ``item._nodeid``, which pytest 9 no longer reads (it keeps the id
    in ``item._id``): every group was split over both workers, each paying for the fixture.
    """
    for item in items:
        names = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")
