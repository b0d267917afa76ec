"""``python -m glue_incremental watermarks ...`` against the session's endpoint.

Most tests call ``main([...])`` in-process and read stdout/stderr with capsys;
one runs the real module in a subprocess to check the exit code and the
one-line error a shell sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from glue_incremental.watermarks import Watermarks, create_table
from glue_incremental_tools import cli
from glue_incremental_tools.cli import main

ROOT = Path(__file__).resolve().parents[2]
TABLE = "glue-watermarks"
JOB = "orders_incremental"


def run_id() -> str:
    return "jr_" + uuid.uuid4().hex + uuid.uuid4().hex


@pytest.fixture
def table(aws, monkeypatch):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    create_table(TABLE)
    return TABLE


@pytest.fixture
def store(table):
    return Watermarks(table, client=boto3.client("dynamodb"))


def commit(store: Watermarks, run: str | None = None, job: str = JOB, **values) -> str:
    run = run or run_id()
    store.get_watermark(job)
    store.add_watermark(store.create_watermark_item(job, run, **values))
    return run


def cli_run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# -- show ---------------------------------------------------------------------------------------


def test_show_prints_the_current_state_as_an_aligned_table(store, capsys):
    run = commit(
        store, last_modified=datetime(2024, 5, 1, 12, 0, 0, 5, tzinfo=UTC), rows_extracted=42
    )
    code, out, err = cli_run(capsys, "watermarks", "show", JOB)

    assert (code, err) == (0, "")
    header, row = out.splitlines()
    assert header.split() == [
        "SLOT",
        "VERSION",
        "COMMITTED_AT",
        "KIND",
        "RUN",
        "ID",
        "WATERMARKS",
        "WHO/WHY",
    ]
    assert header.index("RUN ID") == row.index(run)  # columns line up
    assert header.index("VERSION") == row.index("1 ")
    assert "last_modified=2024-05-01T12:00:00.000005Z" in row
    assert "rows_extracted=42" in row
    assert row.startswith("default ")


def test_show_shortens_long_values_in_the_table_but_not_in_json(store, capsys):
    commit(store, note="x" * 500)
    _, out, _ = cli_run(capsys, "watermarks", "show", JOB)
    row = out.splitlines()[1]
    assert "note=" in row and row.endswith("...") and len(row) < 300
    _, out, _ = cli_run(capsys, "watermarks", "show", JOB, "--json")
    assert json.loads(out)["watermarks"]["note"] == "x" * 500


def test_show_json_prints_the_state(store, capsys):
    run = commit(store, last_id=2**60, price=1.5)
    code, out, _ = cli_run(capsys, "watermarks", "show", JOB, "--json")
    assert code == 0
    state = json.loads(out)
    assert state["job_run_id"] == run and state["version"] == 1
    assert state["watermarks"] == {"last_id": 2**60, "price": 1.5}


def test_common_options_work_before_and_after_the_command(store, capsys):
    commit(store, n=1)
    before = cli_run(capsys, "watermarks", "--json", "--table", TABLE, "show", JOB)
    after = cli_run(capsys, "watermarks", "show", JOB, "--table", TABLE, "--json")
    assert before[0] == after[0] == 0
    assert json.loads(before[1]) == json.loads(after[1])


def test_show_lists_every_slot_by_default(store, capsys):
    for slot in ("left", "right"):
        store.get_watermark(JOB, slot)
        store.add_watermark(store.create_watermark_item(JOB, run_id(), slot=slot, n=1))
    code, out, _ = cli_run(capsys, "watermarks", "show", JOB)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["left", "right"]
    code, out, _ = cli_run(capsys, "watermarks", "show", JOB, "--slot", "right", "--json")
    assert json.loads(out)["slot"] == "right"


def test_show_an_unknown_job_is_a_one_line_error_with_exit_code_2(table, capsys):
    code, out, err = cli_run(capsys, "watermarks", "show", "nope")
    assert_one_line_error(code, out, err, "no watermark state for job 'nope'")


def test_a_missing_table_is_a_one_line_error_saying_how_to_create_it(aws, capsys):
    code, out, err = cli_run(capsys, "watermarks", "--table", "missing", "show", JOB)
    assert_one_line_error(code, out, err, "'missing'", "create-table --table missing")


def test_the_table_defaults_to_the_environment_variable(aws, capsys, monkeypatch):
    monkeypatch.setenv(cli.TABLE_ENV, "from-env")
    code, out, _ = cli_run(capsys, "watermarks", "create-table")
    assert code == 0 and "from-env" in out
    boto3.client("dynamodb").describe_table(TableName="from-env")
    store = Watermarks("from-env", client=boto3.client("dynamodb"))
    commit(store, n=7)
    code, out, _ = cli_run(capsys, "watermarks", "show", JOB, "--json")
    assert json.loads(out)["watermarks"] == {"n": 7}


# -- history ------------------------------------------------------------------------------------


def test_history_is_newest_first_and_pages_with_next_token(store, capsys):
    runs = [commit(store, n=n) for n in range(1, 6)]
    code, out, _ = cli_run(capsys, "watermarks", "history", JOB, "--limit", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"job {JOB}, slot default: newest first"
    assert runs[4] in lines[2] and runs[3] in lines[3]
    assert lines[-1].startswith("more: --next-token ")
    token = lines[-1].split()[-1]

    code, out, _ = cli_run(
        capsys, "watermarks", "history", JOB, "--limit", "2", "--next-token", token, "--json"
    )
    page = json.loads(out)
    assert [item["version"] for item in page["items"]] == [3, 2]
    assert page["next_token"]


def test_history_of_an_unknown_job_is_a_one_line_error(table, capsys):
    assert_one_line_error(*cli_run(capsys, "watermarks", "history", "nope"), "'nope'")


def test_history_with_a_bad_limit_is_a_usage_error(store, capsys):
    code, _, err = cli_run(capsys, "watermarks", "history", JOB, "--limit", "0")
    assert code == 2 and "must be at least 1" in err


# -- set ------------------------------------------------------------------------------------------


def test_set_parses_json_values_and_timestamps_and_records_who_and_why(store, capsys):
    commit(store, last_id=1, rows_extracted=3)
    code, out, err = cli_run(
        capsys,
        "watermarks",
        "set",
        JOB,
        "--value",
        "last_id=1000",
        "--value",
        'regions=["eu", "us"]',
        "--datetime",
        "last_modified=2024-05-01T12:00:00.25Z",
        "--date",
        "day=2024-05-01",
        "--why",
        "skip the corrupt range",
        "--who",
        "ops",
    )
    assert (code, err) == (0, "")
    assert "set" in out and "ops: skip the corrupt range" in out

    state = store.get_watermark(JOB)
    assert state["watermarks"]["last_id"] == 1000
    assert state["watermarks"]["regions"] == ["eu", "us"]
    assert state["watermarks"]["rows_extracted"] == 3  # merged onto the current values
    assert state["watermarks"]["last_modified"] == datetime(2024, 5, 1, 12, 0, 0, 250000, UTC)
    assert str(state["watermarks"]["day"]) == "2024-05-01"
    assert (state["kind"], state["who"], state["why"]) == ("set", "ops", "skip the corrupt range")


@pytest.mark.parametrize(
    ("option", "fragments"),
    [
        (["--value", "region=eu"], ["--value 'region=eu'", "not JSON"]),
        (["--value", "noequals"], ["expected NAME="]),
        (["--datetime", "since=yesterday"], ["not an ISO 8601 timestamp"]),
        (["--datetime", "since=2024-05-01T12:00:00"], ["since", "no timezone"]),
        (["--value", "ratio=NaN"], ["ratio", "NaN"]),
        (["--value", 'cursor={"$date": 1}'], ["reserved"]),
        (["--value", "slot=1"], ["'slot' is reserved"]),
        (["--value", "deep=" + "[" * 100_000 + "]" * 100_000], ["deep", "nested too deeply"]),
    ],
    ids=["not-json", "no-name", "bad-datetime", "naive", "nan", "dollar", "reserved-name", "deep"],
)
def test_set_with_a_bad_value_is_a_one_line_error_and_changes_nothing(
    store, capsys, option, fragments
):
    commit(store, n=1)
    result = cli_run(capsys, "watermarks", "set", JOB, *option, "--why", "test")
    assert_one_line_error(*result, *fragments)
    assert store.get_watermark(JOB)["version"] == 1


def test_set_on_a_job_without_state_needs_create(table, store, capsys):
    result = cli_run(capsys, "watermarks", "set", "new_job", "--value", "id=5", "--why", "seed")
    assert_one_line_error(*result, "'new_job'", "--create")
    code, _, _ = cli_run(
        capsys, "watermarks", "set", "new_job", "--value", "id=5", "--why", "seed", "--create"
    )
    assert code == 0
    assert store.get_watermark("new_job")["watermarks"] == {"id": 5}


def test_set_without_why_is_a_usage_error(store, capsys):
    commit(store, n=1)
    code, _, err = cli_run(capsys, "watermarks", "set", JOB, "--value", "n=2")
    assert code == 2 and "--why" in err
    code, out, err = cli_run(capsys, "watermarks", "set", JOB, "--value", "n=2", "--why", " ")
    assert_one_line_error(code, out, err, "--why must say why")


# -- reset and rewind -----------------------------------------------------------------------------


def test_reset_makes_the_next_run_start_from_nothing(store, capsys):
    commit(store, n=1)
    code, out, _ = cli_run(capsys, "watermarks", "reset", JOB, "--why", "source reloaded")
    assert code == 0
    assert "reset" in out and "full load" in out
    assert store.get_watermark(JOB) is None

    code, out, _ = cli_run(capsys, "watermarks", "show", JOB)
    assert "(reset: next run loads everything)" in out


def test_reset_of_an_unknown_job_is_a_one_line_error(table, capsys):
    result = cli_run(capsys, "watermarks", "reset", "nope", "--why", "x")
    assert_one_line_error(*result, "'nope'")


def test_rewind_makes_a_runs_state_current_again(store, capsys):
    first = commit(store, n=1)
    commit(store, n=2)
    code, out, _ = cli_run(
        capsys, "watermarks", "rewind", JOB, first, "--why", "bad snapshot", "--json"
    )
    assert code == 0
    state = json.loads(out)
    assert (state["kind"], state["rewound_to_run"], state["why"]) == (
        "rewind",
        first,
        "bad snapshot",
    )
    assert store.get_watermark(JOB)["watermarks"] == {"n": 1}


def test_rewind_to_an_unknown_run_is_a_one_line_error(store, capsys):
    commit(store, n=1)
    result = cli_run(capsys, "watermarks", "rewind", JOB, "jr_nope", "--why", "x")
    assert_one_line_error(*result, "no committed run 'jr_nope'")
    assert store.get_watermark(JOB)["version"] == 1


# -- as a real process ---------------------------------------------------------------------


def test_the_module_in_a_subprocess_exits_2_with_one_error_line(table):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    assert env["AWS_ENDPOINT_URL_DYNAMODB"]  # exported by the endpoint fixture
    process = subprocess.run(
        [sys.executable, "-m", "glue_incremental", "watermarks", "show", "nope"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert process.returncode == 2
    assert process.stdout == ""
    assert process.stderr.splitlines() == [
        "error: no watermark state for job 'nope' (slot 'default')"
    ]


# -- the command-group registry --------------------------------------------------------------


def test_no_command_prints_help_and_exits_2(capsys):
    code, out, err = cli_run(capsys)
    assert code == 2 and "watermarks" in err and out == ""
    code, _, err = cli_run(capsys, "watermarks")
    assert code == 2 and "show" in err


def test_a_group_can_be_registered_as_a_function(monkeypatch, capsys):
    def register(subparsers):
        hello = subparsers.add_parser("hello")
        hello.add_argument("name")
        hello.set_defaults(handler=lambda args: print(f"hello {args.name}"))

    monkeypatch.setattr(cli, "COMMAND_GROUPS", [*cli.COMMAND_GROUPS, ("hello", register)])
    assert cli_run(capsys, "hello", "glue") == (0, "hello glue\n", "")
