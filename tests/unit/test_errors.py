"""One error base: a user's mistake is one line, a bug is a traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import glue_incremental
import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.errors import GlueIncrementalError, InvalidName, first_line
from glue_incremental.run.context import run_script, script_error_line
from glue_incremental.watermarks import Watermarks
from glue_incremental_tools import cli

# Raised and caught inside one function, never seen by a caller.
INTERNAL = {"glue_incremental.partitions.values._Rejected"}


def library_exceptions() -> list[type[BaseException]]:
    found = {}
    for module_info in pkgutil.walk_packages(glue_incremental.__path__, "glue_incremental."):
        if module_info.name.endswith("__main__"):
            continue
        module = importlib.import_module(module_info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("glue_incremental"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [value for name, value in sorted(found.items()) if name not in INTERNAL]


def test_every_library_error_derives_from_the_one_base():
    errors = library_exceptions()
    assert len(errors) > 20
    assert [e.__qualname__ for e in errors if not issubclass(e, GlueIncrementalError)] == []


def test_errors_keep_their_historical_bases_and_the_offending_value():
    error = ArgumentError("target_path", "--target_path is required")
    assert isinstance(error, ValueError) and error.name == "target_path"
    with pytest.raises(InvalidName) as raised:
        Watermarks("")
    assert isinstance(raised.value, ValueError) and raised.value.value == ""


def handler_raising(error: BaseException):
    def register(subparsers):
        command = subparsers.add_parser("boom")
        command.set_defaults(handler=lambda args: (_ for _ in ()).throw(error))

    return register


def test_the_cli_prints_a_domain_error_as_one_line(monkeypatch, capsys):
    monkeypatch.setattr(
        cli, "COMMAND_GROUPS", [("boom", handler_raising(ArgumentError("x", "bad --x")))]
    )
    assert cli.main(["boom"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err == "error: bad --x\n"


def test_the_cli_lets_a_bug_raise_with_its_traceback(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_GROUPS", [("boom", handler_raising(ValueError("a bug")))])
    with pytest.raises(ValueError, match="a bug"):
        cli.main(["boom"])


@pytest.mark.parametrize(
    ("error", "traceback_shown"),
    [(ArgumentError("x", "bad --x"), False), (KeyError("a bug"), True)],
)
def test_a_script_prints_one_line_first_and_a_traceback_only_for_a_bug(
    capsys, error, traceback_shown
):
    def main(argv):
        raise error

    with pytest.raises(SystemExit) as exited:
        run_script(main, [])
    err = capsys.readouterr().err
    assert exited.value.code == 1 and err.startswith("error: ")
    assert ("Traceback" in err) is traceback_shown


class _Java:
    """A py4j Java throwable's two methods ``first_line`` calls."""

    def __init__(self, text: str, cause: _Java | None = None) -> None:
        self.text, self.cause = text, cause

    def getCause(self) -> _Java | None:
        return self.cause

    def toString(self) -> str:
        return self.text


class _JvmError(Exception):
    """Like py4j's ``Py4JJavaError``: a useless message, the Java exception beside it."""

    def __init__(self, java: _Java) -> None:
        super().__init__("An error occurred while calling o173.collectToPython.\n: trace")
        self.java_exception = java


def test_an_error_raised_in_the_jvm_reads_as_its_deepest_causes_first_line():
    gone = _Java("java.io.FileNotFoundException: File file:/s/a.json does not exist\nhint")
    error = _JvmError(_Java("org.apache.spark.SparkException: Job aborted", gone))

    assert first_line(error) == "java.io.FileNotFoundException: File file:/s/a.json does not exist"


def test_a_python_error_reads_as_its_first_line_or_its_type():
    assert first_line(ValueError("bad value\nsecond")) == "bad value"
    assert first_line(KeyError()) == "KeyError"


def test_a_scripts_own_error_line_names_type_first_line_and_the_scripts_frame():
    def read_orders():
        raise _JvmError(_Java("top", _Java("java.io.FileNotFoundException: gone\n\tat x")))

    try:
        read_orders()
    except _JvmError as error:
        line = script_error_line(error)
    raised_at = read_orders.__code__.co_firstlineno + 1
    assert line == (
        "error: _JvmError: java.io.FileNotFoundException: gone "
        f"(in read_orders at test_errors.py:{raised_at})"
    )
    assert script_error_line(KeyError()).startswith("error: KeyError")  # no traceback, no frame
