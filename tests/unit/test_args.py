"""Glue-style argument parsing: getResolvedOptions-compatible, with clear errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from glue_incremental.args import (
    ArgumentError,
    BookmarkOption,
    parse_duration,
    parse_list,
    resolve_options,
)
from glue_incremental.runtime import BookmarkControl


def test_arguments_are_read_as_glue_passes_them():
    args = resolve_options(
        ["script.py", "--JOB_NAME", "orders", "--JOB_RUN_ID", "jr_1", "--target_path", "s3://b/t"],
        ["target_path"],
    )
    assert args["JOB_NAME"] == "orders"
    assert args["JOB_RUN_ID"] == "jr_1"
    assert args["target_path"] == "s3://b/t"
    assert args["job-bookmark-option"] == "job-bookmark-enable"
    assert args["watermarks_table"] == "glue-watermarks"


def test_a_run_id_is_generated_when_running_locally():
    args = resolve_options(["script.py", "--JOB_NAME", "orders"], [])
    assert args["JOB_RUN_ID"].startswith("local_")


def test_arguments_glue_adds_itself_are_ignored():
    args = resolve_options(
        [
            "script.py",
            "--JOB_NAME",
            "j",
            "--TempDir",
            "s3://t",
            "--enable-metrics",
            "true",
            "--JOB_ID",
            "x",
        ],
        [],
    )
    assert "TempDir" not in args


def test_a_missing_required_argument_is_named():
    with pytest.raises(ArgumentError, match="--target_path"):
        resolve_options(["script.py", "--JOB_NAME", "j"], ["target_path"])


def test_an_unknown_argument_is_named_with_a_suggestion():
    with pytest.raises(
        ArgumentError, match=r"unknown argument --target_pth \(did you mean --target_path\?\)"
    ):
        resolve_options(["script.py", "--JOB_NAME", "j", "--target_pth", "x"], ["target_path"])


def test_equals_form_is_accepted():
    args = resolve_options(
        ["script.py", "--JOB_NAME=j", "--lookback=2 hours"], [], {"lookback": "0"}
    )
    assert args["lookback"] == "2 hours"


def test_an_unknown_bookmark_option_is_rejected_with_the_valid_ones():
    with pytest.raises(
        ArgumentError, match="job-bookmark-enable, job-bookmark-disable, job-bookmark-pause"
    ):
        BookmarkOption.parse("job-bookmark-on")


def test_a_replay_range_needs_pause():
    with pytest.raises(ArgumentError, match="job-bookmark-pause"):
        BookmarkControl(BookmarkOption.ENABLE, from_run="jr_1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 hours", timedelta(hours=2)),
        ("90 minutes", timedelta(minutes=90)),
        ("15m", timedelta(minutes=15)),
        ("0", timedelta(0)),
    ],
)
def test_durations_read_as_people_write_them(text, expected):
    assert parse_duration("lookback", text) == expected


def test_a_bad_duration_names_the_argument():
    with pytest.raises(ArgumentError, match="--lookback 'two hours'"):
        parse_duration("lookback", "two hours")


def test_a_column_named_twice_is_rejected():
    with pytest.raises(ArgumentError, match="--primary_key names a column twice"):
        parse_list("primary_key", "id,id")
