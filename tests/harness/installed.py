"""The tools installed the way CI installs them: non-editable, into a fresh virtual environment.

``install_copy(root, where)`` copies the package sources (not the checkout: the build must
not depend on, or write into, the working tree) and ``pip install --no-deps`` them into a
new venv; the test interpreter's site-packages are appended (a ``.pth`` line) only for the
dependencies (boto3), after the venv's own, so the installed copy of the package wins.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

PACKAGES = ("glue_incremental", "glue_incremental_tools")


def install_copy(root: Path, where: Path) -> Path:
    """A venv at ``where/venv`` with the package installed from a copy of ``root``; its python."""
    source = where / "source"
    (source / "lib").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            root / "lib" / package,
            source / "lib" / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--quiet", "--no-deps", "--disable-pip-version-check", str(source)),
        ],
        check=True,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python
