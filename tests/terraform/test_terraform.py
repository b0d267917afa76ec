"""Terraform without an endpoint: formatting, validation, the ``terraform test`` suites, checkov.

The suites start when the module is set up, two at a time in the background, and the quick
checks overlap them. The apply of environments/local is ``test_terraform_local.py``: a
module (and xdist group) of its own, so the two workers of ``make test`` share the work.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.harness.terraform import ROOT, TERRAFORM, TF, TIMEOUT, copy_tree, tf

# One worker runs the module: its fixture runs every suite once.
pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("terraform_suites")]

MODULES = sorted(p.parent.name for p in TERRAFORM.glob("modules/*/tests"))
# Terraform root modules: `aws` is dev and prod (one root, <env>.tfvars and
# <env>.backend.hcl), `local` the emulator environment.
ROOTS = ["aws", "local"]
# Environment -> (root, var file): the root's one tftest file (tests/environment.tftest.hcl)
# runs once per environment, with its var file.
ENVIRONMENT_TESTS = {"dev": ("aws", "dev.tfvars"), "prod": ("aws", "prod.tfvars")}
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)


def _module_suite(directory: Path) -> subprocess.CompletedProcess[str]:
    tf(directory, "init", "-backend=false", "-no-color")
    return tf(directory, "test", "-no-color", check=False)


def _root_suite(directory: Path, wanted: set[str]) -> dict[str, subprocess.CompletedProcess[str]]:
    # init, validate and test share one working directory, so they run in sequence.
    results = {"init": tf(directory, "init", "-backend=false", "-no-color", check=False)}
    results["validate"] = tf(directory, "validate", "-no-color", check=False)
    for env, (root, var_file) in ENVIRONMENT_TESTS.items():
        if directory.name == root and f"test:{env}" in wanted:
            results[f"test:{env}"] = tf(
                directory,
                "test",
                "-no-color",
                f"-var-file={var_file}",
                "-filter=tests/environment.tftest.hcl",
                check=False,
            )
    return results


def _suites_wanted(items: list[pytest.Item], module: Any) -> set[str]:
    """The suites the selected tests of this module read: a deselected test's suite never runs."""
    wanted = set()
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is not module:
            continue
        if "root" in params:
            wanted.add(f"environments/{params['root']}")
        if "env" in params:
            wanted |= {f"environments/{ENVIRONMENT_TESTS[params['env']][0]}", f"test:{params['env']}"}
        if "module" in params:
            wanted.add(f"modules/{params['module']}")
    return wanted


@pytest.fixture(scope="module")
def suites(request, tmp_path_factory) -> Iterator[dict[str, Future[Any]]]:
    tree = copy_tree(tmp_path_factory.mktemp("suites"))
    wanted = _suites_wanted(request.session.items, request.module)
    # Two at a time: each is mostly provider start-up, and the machine has two cores.
    executor = ThreadPoolExecutor(max_workers=2)
    futures: dict[str, Future[Any]] = {}
    for root in ROOTS:
        if f"environments/{root}" in wanted:
            futures[f"environments/{root}"] = executor.submit(
                _root_suite, tree / "environments" / root, wanted
            )
    for module in MODULES:
        if f"modules/{module}" in wanted:
            futures[f"modules/{module}"] = executor.submit(_module_suite, tree / "modules" / module)
    yield futures
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module", autouse=True)
def _start_slow_work_first(request):
    """Instantiate the background fixtures before the first test if any selected test needs them."""
    wanted = {
        name
        for item in request.session.items
        if item.module is request.module
        for name in item.fixturenames
    }
    for name in ("suites",):
        if name in wanted:
            request.getfixturevalue(name)


def _report(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


# --- static checks -----------------------------------------------------------


def test_terraform_is_formatted():
    result = tf(ROOT, "fmt", "-check", "-recursive", "-diff", "terraform", check=False)
    assert result.returncode == 0, f"run `terraform fmt -recursive terraform`:\n{result.stdout}"


@pytest.mark.parametrize("root", ROOTS)
def test_environment_initialises_without_backend_and_validates(suites, root):
    results = suites[f"environments/{root}"].result(timeout=TIMEOUT)
    assert results["init"].returncode == 0, _report(results["init"])
    assert results["validate"].returncode == 0, _report(results["validate"])


@pytest.mark.parametrize("env", sorted(ENVIRONMENT_TESTS))
def test_environment_tftests_pass(suites, env):
    root = ENVIRONMENT_TESTS[env][0]
    result = suites[f"environments/{root}"].result(timeout=TIMEOUT)[f"test:{env}"]
    assert result.returncode == 0, _report(result)
    assert "0 failed" in result.stdout


@pytest.mark.parametrize("module", MODULES)
def test_module_tftests_pass(suites, module):
    result = suites[f"modules/{module}"].result(timeout=TIMEOUT)
    assert result.returncode == 0, _report(result)
    assert "0 failed" in result.stdout


def test_every_module_follows_the_house_layout():
    for module in (TERRAFORM / "modules").iterdir():
        files = {p.name for p in module.iterdir()}
        missing = {
            "main.tf",
            "variables.tf",
            "outputs.tf",
            "versions.tf",
            "README.md",
            "tests",
        } - files
        assert not missing, f"{module.name} lacks {sorted(missing)}"
        versions = (module / "versions.tf").read_text()
        assert 'required_version = ">= 1.10"' in versions
        # 5.65 is the first provider with aws_glue_job.job_run_queuing_enabled.
        assert 'version = ">= 5.65, < 6.0"' in versions


def test_checkov_finds_nothing_and_every_skip_is_justified(tmp_path):
    if not CHECKOV.exists():
        pytest.skip("checkov is not installed; run scripts/setup.sh")
    tree = copy_tree(tmp_path)
    result = subprocess.run(
        [
            str(CHECKOV),
            "-d",
            str(tree),
            "--framework",
            "terraform",
            "--quiet",
            "-o",
            "json",
            "--skip-download",
        ],
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    reports = json.loads(result.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    failed = [
        f"{c['check_id']} {c['resource']} ({c['file_path']})"
        for report in reports
        for c in report.get("results", {}).get("failed_checks", [])
    ]
    assert not failed, "checkov failures:\n" + "\n".join(failed)
    unjustified = [
        f"{c['check_id']} {c['resource']}"
        for report in reports
        for c in report.get("results", {}).get("skipped_checks", [])
        if len((c.get("check_result") or {}).get("suppress_comment", "").strip()) < 20
    ]
    assert not unjustified, "skips without a reason: " + ", ".join(unjustified)
    assert sum(r.get("summary", {}).get("passed", 0) for r in reports) > 0, result.stderr[-2000:]
