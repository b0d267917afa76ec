"""The library stays small enough to hold in one's head: short modules, simple functions,
imports at the top."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[2] / "lib" / "glue_incremental"
MAX_LINES = 600
# The one import that cannot sit at the top: awsglue exists only on Glue itself.
OPTIONAL_IMPORTS = {"run/context.py": {"awsglue.context", "awsglue.job"}}


def modules() -> dict[str, Path]:
    return {path.relative_to(LIBRARY).as_posix(): path for path in LIBRARY.rglob("*.py")}


def test_no_library_module_is_longer_than_600_lines():
    long = {
        name for name, path in modules().items() if len(path.read_text().splitlines()) > MAX_LINES
    }
    assert long == set()


def test_no_library_function_is_more_complex_than_15():
    found = subprocess.run(
        [
            *(sys.executable, "-m", "ruff", "check", "--select", "C901"),
            *("--output-format", "json", "--config", "lint.mccabe.max-complexity=15"),
            str(LIBRARY),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    complex_functions = {
        f"{Path(entry['filename']).relative_to(LIBRARY).as_posix()}:"
        + entry["message"].split("`")[1]
        for entry in json.loads(found.stdout)
    }
    assert complex_functions == set()


def test_library_modules_import_only_at_the_top():
    local = [
        f"{name}:{node.lineno}"
        for name, path in modules().items()
        for function in ast.walk(ast.parse(path.read_text()))
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and (getattr(node, "module", None) or node.names[0].name)
        not in OPTIONAL_IMPORTS.get(name, set())
    ]
    assert local == []


def test_module_docstrings_are_short_with_essays_in_docs():
    tools = LIBRARY.parent / "glue_incremental_tools"
    long = {
        path.relative_to(LIBRARY.parent).as_posix()
        for path in [*LIBRARY.rglob("*.py"), *tools.rglob("*.py")]
        if len((ast.get_docstring(ast.parse(path.read_text()), clean=False) or "").splitlines())
        > 15
    }
    assert long == set()
