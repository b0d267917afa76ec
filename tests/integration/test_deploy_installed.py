"""``deploy`` from a non-editable install (CI's ``pip install '.[deploy]'``), run in the checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from glue_incremental import aws as aws_clients
from glue_incremental_tools import deploy

from tests.harness.installed import install_copy

# One worker runs the module: its fixture installs the package once.
pytestmark = pytest.mark.xdist_group("deploy_installed")

BUCKET = "gi-installed-scripts"
JOB = "t-installed-load"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_copy(deploy.project_root(), tmp_path_factory.mktemp("installed"))


def run_installed(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GLUE_INCREMENTAL_ROOT")
    }
    return subprocess.run(
        [str(python), "-m", "glue_incremental", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_tools_run_from_site_packages(installed):
    where = subprocess.run(
        [str(installed), "-c", "import glue_incremental_tools as t; print(t.__file__)"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "site-packages" in where
    assert not where.startswith(str(deploy.project_root()))


def test_an_installed_deploy_uploads_the_checkout_it_runs_in(aws, installed):
    aws_clients.client("s3").create_bucket(Bucket=BUCKET)
    root = deploy.project_root()
    released = f"s3://{BUCKET}/releases/{deploy.release_id(root)}"
    aws_clients.client("glue").create_job(
        Name=JOB,
        Role="arn:aws:iam::123456789012:role/glue",
        Command={
            "Name": "glueetl",
            "ScriptLocation": f"{released}/incremental_load.py",
            "PythonVersion": "3",
        },
        DefaultArguments={"--extra-py-files": f"{released}/glue_incremental.zip"},
    )

    done = run_installed(installed, "deploy", "--bucket", BUCKET, "--jobs", JOB, cwd=root)

    assert done.returncode == 0, done.stderr
    assert f"verify {JOB}: ok" in done.stdout
    script = aws_clients.client("s3").get_object(
        Bucket=BUCKET, Key=f"{released.removeprefix(f's3://{BUCKET}/')}/incremental_load.py"
    )
    assert script["Body"].read() == (root / "glue_scripts" / "incremental_load.py").read_bytes()


def test_an_installed_deploy_finds_the_checkout_from_a_subdirectory(installed):
    done = run_installed(installed, "deploy", "--help", cwd=deploy.project_root() / "docs")

    assert done.returncode == 0, done.stderr
    assert "--root" in done.stdout


def test_outside_a_checkout_deploy_says_where_it_looked_in_one_line(installed, tmp_path):
    done = run_installed(installed, "deploy", "--bucket", "b", "--jobs", "j", cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr.startswith(f"error: no project checkout at {tmp_path.resolve()}")
    assert "--root" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_explicit_root_that_is_no_checkout_is_named(installed, tmp_path):
    done = run_installed(
        installed, "deploy", "--root", str(tmp_path), "--bucket", "b", "--jobs", "j", cwd=tmp_path
    )

    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --root {tmp_path.resolve()} is not a project checkout")
