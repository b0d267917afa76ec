"""The library Glue runs stays free of the operator tools' dependencies."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[2] / "lib" / "glue_incremental"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    names |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    return names


def test_the_library_glue_runs_never_imports_pyiceberg():
    sources = sorted(LIBRARY.rglob("*.py"))

    assert sources
    assert [
        str(path.relative_to(LIBRARY))
        for path in sources
        if any(name.split(".")[0] == "pyiceberg" for name in imported_modules(path))
    ] == []


def test_reading_a_snapshot_summary_needs_no_spark():
    probe = "import sys, glue_incremental.targets.iceberg.summary; print(any(m.startswith('pyspark') for m in sys.modules))"

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "False"


def test_every_operator_command_registers_on_a_machine_without_spark():
    """The tools extra has no pyspark: building the command line must not import it."""
    probe = (
        "import sys\n"
        "class NoSpark:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pyspark', 'py4j'):\n"
        "            raise ImportError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, NoSpark())\n"
        "from glue_incremental_tools.cli import build_parser\n"
        "build_parser()\n"
    )

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
