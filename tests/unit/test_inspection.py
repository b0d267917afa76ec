"""The inspection commands' pure parts, on plain data: no AWS, no Spark.

A Parquet target is laid out by hand with pyarrow (live files, a staging run, the key
index, deliveries, the recorded schema), and compared with the rows a reader should see,
listed here independently.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental_tools import cli, pages, run_history, target_view, watermark_text
from glue_incremental_tools.errors import CommandError

# What a reader of the target sees: the live files only, partition values unescaped.
LIVE = [
    {"id": 1, "amount": 10, "p": "a", "note": None},
    {"id": 2, "amount": 20, "p": "a", "note": None},
    {"id": 3, "amount": 30, "p": "b/x", "note": "added later"},
    {"id": 4, "amount": 40, "p": None, "note": None},
]


def write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.fixture
def target(tmp_path):
    root = tmp_path / "orders"
    write(root / "p=a" / "part-0.parquet", [{"id": 1, "amount": 10}, {"id": 2, "amount": 20}])
    # A later run added a column: older files read it as null.
    write(root / "p=b%2Fx" / "part-1.parquet", [{"id": 3, "amount": 30, "note": "added later"}])
    write(root / "p=__HIVE_DEFAULT_PARTITION__" / "part-2.parquet", [{"id": 4, "amount": 40}])
    # Never read: a run's staging, the key index, deliveries, the recorded schema, dot files.
    write(root / "_staging" / "jr_9" / "data" / "p=a" / "part-9.parquet", [{"id": 1, "amount": 99}])
    write(root / "_index" / "generation=1" / "part-0.parquet", [{"id": 1, "p": "a"}])
    write(root / "_delivery" / "p=a" / "part-0.parquet", [{"id": 1, "file": "f"}])
    (root / "_schema.json").write_text("{}")
    (root / "p=a" / ".part-0.parquet.crc").write_bytes(b"crc")
    return root.as_uri()


def test_a_parquet_target_shows_the_published_rows_schema_and_partitions(target):
    view = target_view.read_parquet(target, [], limit=10)

    assert view.row_count == len(LIVE)
    key = lambda row: row["id"]  # noqa: E731
    assert sorted(view.rows, key=key) == sorted(LIVE, key=key)
    assert dict(view.schema) == {"id": "int64", "amount": "int64", "note": "string", "p": "string"}
    assert view.partitions == [
        ("p=__HIVE_DEFAULT_PARTITION__", 1, 1),
        ("p=a", 1, 2),
        ("p=b%2Fx", 1, 1),
    ]


def test_a_key_lookup_and_a_where_filter_match_like_the_reference(target):
    by_key = target_view.read_parquet(target, target_view.parse_filters(["id=3"], []), limit=10)
    assert (by_key.matched, by_key.rows) == (1, [row for row in LIVE if row["id"] == 3])

    by_partition = target_view.read_parquet(
        target, target_view.parse_filters([], ["p=b/x"]), limit=10
    )
    assert by_partition.rows == [row for row in LIVE if row["p"] == "b/x"]

    nulls = target_view.read_parquet(target, target_view.parse_filters([], ["p=null"]), limit=10)
    assert nulls.rows == [row for row in LIVE if row["p"] is None]

    limited = target_view.read_parquet(target, target_view.parse_filters([], ["p=a"]), limit=1)
    assert (limited.matched, len(limited.rows)) == (2, 1)


@pytest.mark.parametrize(
    ("keys", "wheres", "fragments"),
    [
        (["nope=1"], [], ["--key nope=...", "no column 'nope'", "id, amount"]),
        (["id=abc"], [], ["--key id=abc", "not a int64 value"]),
        ([], ["amount"], ["--where 'amount'", "COLUMN=VALUE"]),
    ],
)
def test_a_filter_that_does_not_fit_is_one_line_naming_option_column_and_value(
    target, keys, wheres, fragments
):
    with pytest.raises(CommandError) as raised:
        target_view.read_parquet(target, target_view.parse_filters(keys, wheres), limit=1)
    message = str(raised.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_target_without_published_files_shows_no_rows(tmp_path):
    (tmp_path / "t" / "_staging" / "jr_1").mkdir(parents=True)
    view = target_view.read_parquet((tmp_path / "t").as_uri(), [], limit=5)
    assert (view.row_count, view.rows, view.schema) == (0, [], [])
    assert "no published files yet" in target_view.render(view, [], 5)


def test_only_paths_without_a_hidden_component_are_published():
    assert target_view.is_published("p=a/part-0.parquet")
    assert target_view.is_published("_ingest_date=2024-01-01/part-0.parquet")  # a partition
    assert not target_view.is_published("_staging/jr_1/data/p=a/part-0.parquet")
    assert not target_view.is_published("p=a/_SUCCESS")
    assert not target_view.is_published("p=a/")


def test_the_rendered_target_names_rows_schema_partitions_and_sample(target):
    filters = target_view.parse_filters(["id=1"], [])
    text = target_view.render(target_view.read_parquet(target, filters, 5), filters, 5)
    assert "rows: 4" in text and "partitions: 3" in text and "rows where id=1: 1" in text
    header, row = text.splitlines()[-2:]
    assert header.split() == ["id", "amount", "note", "p"] and row.split() == ["1", "10", "-", "a"]


# -- runs ---------------------------------------------------------------------------------------


def test_the_runners_record_overrides_the_local_glues_succeeded():
    glue_run = {"Id": "jr_1", "JobRunState": "SUCCEEDED", "StartedOn": datetime(2024, 5, 1)}
    record = {
        "Id": "jr_1",
        "JobRunState": "FAILED",
        "StartedOn": "2024-05-01T00:00:00+00:00",
        "CompletedOn": "2024-05-01T00:00:07+00:00",
        "ExecutionTime": 7,
        "ErrorMessage": "column 'x'\n  is missing",
        "Summary": {"records_read": 3, "records_written": 0},
    }
    row = run_history.merge_run(glue_run, record)
    assert (row.state, row.error, row.records_read, row.seconds) == (
        "FAILED",
        "column 'x' is missing",
        3.0,
        7.0,
    )
    assert row.source == "runner record"

    alone = run_history.merge_run(glue_run, None)
    assert (alone.state, alone.source, alone.started_on) == (
        "SUCCEEDED",
        "glue",
        "2024-05-01T00:00:00Z",
    )
    assert run_history.render_runs([row]).splitlines()[1].split()[:5] == [
        "jr_1",
        "FAILED",
        "2024-05-01T00:00:00Z",
        "7s",
        "3/0",
    ]


# -- pages --------------------------------------------------------------------------------------

ALARM = {
    "AlarmName": "gi-local-orders-zero-records",
    "NewStateValue": "ALARM",
    "NewStateReason": "Threshold  crossed",
    "StateChangeTime": "2024-05-01T00:00:00.000+0000",
}
RUN_FAILED = {
    "time": "2024-05-01T00:01:00Z",
    "detail": {
        "jobName": "gi-local-orders",
        "jobRunId": "jr_2",
        "state": "FAILED",
        "message": "boom",
    },
}


def test_a_page_is_an_alarm_or_a_failed_run_raw_or_in_an_sns_envelope():
    assert pages.parse_page(json.dumps(ALARM)) == {
        "kind": "alarm",
        "time": ALARM["StateChangeTime"],
        "state": "ALARM",
        "name": "gi-local-orders-zero-records",
        "summary": "Threshold crossed",
    }
    envelope = {"Type": "Notification", "Message": json.dumps(RUN_FAILED)}
    assert pages.parse_page(json.dumps(envelope)) == {
        "kind": "run",
        "time": "2024-05-01T00:01:00Z",
        "state": "FAILED",
        "name": "gi-local-orders",
        "summary": "run jr_2 boom",
    }
    assert pages.parse_page("plain text")["summary"] == "plain text"


def test_the_endpoint_exports_quote_values_and_route_every_service():
    environment = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:4566",
        "AWS_ENDPOINT_URL_GLUE": "http://127.0.0.1:5001",
        "AWS_REGION": "us-east-1",
        "AWS_SECRET_ACCESS_KEY": "te st",
        "HOME": "/root",
    }
    lines = pages.endpoint_exports(environment)
    assert lines == [
        "export AWS_ENDPOINT_URL=http://127.0.0.1:4566",
        "export AWS_ENDPOINT_URL_GLUE=http://127.0.0.1:5001",
        "export AWS_REGION=us-east-1",
        "export AWS_SECRET_ACCESS_KEY='te st'",
    ]
    assert [shlex.split(line)[1] for line in lines][-1] == "AWS_SECRET_ACCESS_KEY=te st"
    assert pages.account_exports(environment, "eu-west-1") == [
        "unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_GLUE",
        "export AWS_REGION=eu-west-1",
    ]


# -- watermarks in human units ------------------------------------------------------------------


def test_timestamps_print_as_iso_utc_and_millisecond_marks_as_times():
    paris = timezone(timedelta(hours=2))
    assert watermark_text.utc(datetime(2024, 5, 1, 14, 0, tzinfo=paris)) == "2024-05-01T12:00:00Z"
    assert watermark_text.utc(datetime(2024, 5, 1, 12, 0, 0, 5, tzinfo=UTC)) == (
        "2024-05-01T12:00:00.000005Z"
    )
    assert watermark_text.epoch_ms(1700000100000) == "2023-11-14T22:15:00Z"
    assert watermark_text.epoch_ms(1700000100123) == "2023-11-14T22:15:00.123Z"
    assert watermark_text.value_text("full_listing_high_mark_ms", 1700000100000) == (
        "2023-11-14T22:15:00Z"
    )


def test_a_file_bookmark_prints_its_high_mark_band_and_directories():
    files = {
        "version": 1,
        "high_mark_ms": 1700000100000,
        "band_start_ms": 1700000040000,
        "band_fingerprints": ["3f1c0d9a2b7e4c11", "0a"],
        "dir_old_counts": [["s3://b/t/dt=2024-01-01", 42, 1700000100000]],
        "dir_counts_complete": True,
    }
    text = watermark_text.summary({"files": files, "cursor": datetime(2024, 5, 1, tzinfo=UTC)})
    assert text == (
        "cursor=2024-05-01T00:00:00Z, files=[files up to 2023-11-14T22:15:00Z, "
        "2 file(s) of the band after 2023-11-14T22:14:00Z remembered, "
        "directories s3://b/t/dt=2024-01-01: 42 to 2023-11-14T22:15:00Z]"
    )
    # The marks lead: a long table cell is cut at its end, never there.
    assert watermark_text.summary({"discovery": {"a": 1}, "files": files}).startswith("files=[")
    empty = {**files, "high_mark_ms": None, "band_start_ms": None}
    assert (
        watermark_text.value_text("files", empty)
        == "[no file read yet (next run reads everything)]"
    )
    assert watermark_text.summary(None) == "(reset: next run loads everything)"


def test_every_cli_command_the_runbook_shows_parses():
    runbook = (Path(__file__).resolve().parents[2] / "docs" / "runbook.md").read_text()
    prefix = ".venv/bin/python -m glue_incremental "
    commands = [
        re.split(r"\s+#\s", found, maxsplit=1)[0].rstrip("`").removesuffix(')"')
        for found in re.findall(rf"{re.escape(prefix)}[^`\n]+", runbook.replace("\\\n", " "))
    ]
    assert any(command.startswith(prefix + "runs ") for command in commands)
    parser = cli.build_parser()
    for command in commands:
        # Placeholders (<run id>) stand for one argument.
        argv = shlex.split(re.sub(r"<[^>]+>", "PLACEHOLDER", command.removeprefix(prefix)))
        args, extras = parser.parse_known_args(argv)
        assert (extras, args.handler is not None) == ([], True), command


def test_env_for_an_account_unsets_the_endpoints_and_names_its_region(monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    tfvars = (
        Path(__file__).resolve().parents[2] / "terraform" / "environments" / "aws" / "dev.tfvars"
    ).read_text()
    region = re.search(r'^\s*region\s*=\s*"([a-z0-9-]+)"', tfvars, re.MULTILINE).group(1)

    code = cli.main(["env", "--env", "dev"])
    out = capsys.readouterr().out

    assert code == 0
    unset, export = out.splitlines()
    assert unset.startswith("unset ") and "AWS_ENDPOINT_URL" in unset.split()
    assert export == f"export AWS_REGION={region}"


def _recent_local_runs(monkeypatch, started: datetime, now: datetime) -> run_history.RunRow:
    glue_run = {"Id": "jr_1", "JobRunState": "SUCCEEDED", "StartedOn": started, "Timeout": 60}
    monkeypatch.setattr(run_history, "_glue_runs", lambda job: [glue_run])
    monkeypatch.setattr(run_history, "_scripts_bucket", lambda job: "gi-local-scripts")
    monkeypatch.setattr(run_history, "_recorded_run_ids", lambda bucket, job: set())
    monkeypatch.setattr(run_history, "_logged_summary", lambda job, run_id: None)
    (row,) = run_history.recent_runs("gi-local-orders", local=True, now=now)
    return row


def test_a_local_run_without_the_runners_record_yet_is_running(monkeypatch):
    started = datetime(2026, 11, 29, 19, 52, 34, tzinfo=UTC)

    row = _recent_local_runs(monkeypatch, started, started + timedelta(minutes=5))

    assert (row.state, row.started_on, row.seconds) == ("RUNNING", "2026-11-29T19:52:34Z", None)
    assert row.error is None


def test_a_local_run_without_a_record_after_the_jobs_timeout_says_the_runner_stopped(monkeypatch):
    started = datetime(2026, 11, 29, 19, 52, 34, tzinfo=UTC)

    row = _recent_local_runs(monkeypatch, started, started + timedelta(minutes=61))

    assert row.state == "NO RECORD"
    assert row.error is not None and "the runner stopped?" in row.error
