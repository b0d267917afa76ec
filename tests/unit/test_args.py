"""Glue-style argument parsing: getResolvedOptions-compatible, with clear errors."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from glue_incremental import join
from glue_incremental.args import (
    COMMON_OPTIONS,
    ArgumentError,
    BookmarkOption,
    markdown_table,
    parse_duration,
    parse_list,
    parse_positive_int,
    resolve_options,
)
from glue_incremental.load import job as load_job
from glue_incremental.run.context import BookmarkControl, glue_init_args


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


# -- issue 16: arguments as Glue passes them ------------------------------------------------------


def test_durations_accept_bare_seconds_as_glue_consoles_write_them():
    assert parse_duration("lookback", "3600") == timedelta(hours=1)
    assert parse_duration("lookback", " 90 ") == timedelta(seconds=90)


@pytest.mark.parametrize("text", ["9" * 400 + " days", "1e400 seconds", "99999999999999 days"])
def test_an_overflowing_duration_is_an_error_naming_the_argument(text):
    with pytest.raises(ArgumentError, match=r"^--lookback ") as raised:
        parse_duration("lookback", text)
    assert raised.value.name == "lookback"


@pytest.mark.parametrize("text", ["ten", "1.5", "9" * 40, "", "٣"])
def test_a_non_numeric_integer_is_an_error_naming_the_argument(text):
    with pytest.raises(ArgumentError, match=r"^--lease_seconds ") as raised:
        parse_positive_int("lease_seconds", text)
    assert raised.value.name == "lease_seconds"


@pytest.mark.parametrize(
    ("spelling", "intended"),
    [
        ("dry-run", "dry_run"),
        ("Dry_Run", "dry_run"),
        ("DRY_RUN", "dry_run"),
        ("job_bookmark_option", "job-bookmark-option"),
        ("target-path", "target_path"),
        ("targetpath", "target_path"),
        ("Lookback", "lookback"),
    ],
)
def test_a_name_close_to_a_declared_one_is_an_error_naming_the_intended_argument(
    spelling, intended
):
    argv = ["script.py", "--JOB_NAME", "j", "--target_path", "t", f"--{spelling}", "true"]
    with pytest.raises(ArgumentError, match=f"did you mean --{intended}") as raised:
        resolve_options(argv, ["target_path"], {"lookback": "0"})
    assert raised.value.name == intended


@pytest.mark.parametrize(
    "special",
    [
        "conf",
        "scriptLocation",
        "enable-metrics",
        "TempDir",
        "extra-py-files",
        "datalake-formats",
        "job-language",
        "enable-glue-datacatalog",
        "JOB_ID",
    ],
)
def test_glue_special_parameters_are_accepted_and_ignored(special):
    argv = ["script.py", "--JOB_NAME", "j", f"--{special}", "some value", "--target_path", "t"]
    args = resolve_options(argv, ["target_path"])
    assert special not in args and args["target_path"] == "t"


def test_pause_with_only_one_end_of_the_replay_range_is_refused():
    with pytest.raises(ArgumentError, match="--job-bookmark-to is missing"):
        BookmarkControl(BookmarkOption.PAUSE, from_run="jr_1")
    with pytest.raises(ArgumentError, match="--job-bookmark-from is missing"):
        BookmarkControl(BookmarkOption.PAUSE, to_run="jr_2")


def test_job_init_gets_the_keys_awsglue_get_resolved_options_gives():
    args = resolve_options(
        ["script.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-pause"], []
    )
    shaped = glue_init_args(args)
    assert shaped["job_bookmark_option"] == "job-bookmark-pause"
    assert not any("-" in key for key in shaped)


def test_the_load_job_refuses_a_plain_text_password():
    argv = [
        "script.py",
        "--JOB_NAME",
        "j",
        "--source",
        "jdbc:postgresql://db/shop",
        "--source_table",
        "orders",
        "--watermark_column",
        "updated_at",
        "--primary_key",
        "id",
        "--target_path",
        "file:///tmp/t",
        "--source_password",
        "hunter2",
    ]
    with pytest.raises(ArgumentError, match="--source_password is refused") as raised:
        load_job.main(argv, spark=object())
    assert "hunter2" not in str(raised.value)


def test_the_load_job_validates_declared_arguments_strictly():
    base = ["script.py", "--JOB_NAME", "j", "--source", "file:///s", "--watermark_column", "u"]
    base += ["--primary_key", "id", "--target_path", "file:///t"]
    with pytest.raises(ArgumentError, match="--jdbc_num_partitions 'two'"):
        load_job.LoadConfig.from_args(
            resolve_options(
                [*base, "--jdbc_num_partitions", "two"],
                load_job.REQUIRED_ARGS,
                load_job.OPTIONAL_ARGS,
            )
        )
    with pytest.raises(ArgumentError, match="--dry_run 'maybe'"):
        load_job.main([*base, "--dry_run", "maybe"], spark=object())


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    ("page", "marker", "options"),
    [
        ("load-job.md", "load-arguments", load_job.LOAD_OPTIONS),
        ("incremental-join.md", "join-arguments", join.JOIN_OPTIONS),
    ],
)
def test_the_docs_argument_tables_are_generated_from_the_declarations(page, marker, options):
    text = (DOCS / page).read_text()
    begin, end = f"<!-- {marker}:begin -->\n", f"<!-- {marker}:end -->"
    assert begin in text and end in text, f"docs/{page} lacks the generated {marker} block"
    block = text.split(begin, 1)[1].split(end, 1)[0]
    assert block == markdown_table([*options, *COMMON_OPTIONS]), (
        f"docs/{page}'s {marker} table is out of date: replace the block with "
        "glue_incremental.args.markdown_table([*<JOB>_OPTIONS, *COMMON_OPTIONS])"
    )


def test_each_generated_argument_table_is_printed_once_in_the_docs():
    pages = [Path(__file__).resolve().parents[2] / "README.md", *sorted(DOCS.glob("*.md"))]
    for marker in ("load-arguments", "join-arguments"):
        printed = [page.name for page in pages if f"<!-- {marker}:begin -->" in page.read_text()]
        assert len(printed) == 1, (marker, printed)


@pytest.mark.parametrize(
    "url",
    [
        "jdbc:postgresql://db/shop?user=a&password=hunter2",
        "jdbc:mysql://app:hunter2@db/shop",
        "jdbc:redshift://db:5439/shop;UID=a;PWD=hunter2",
    ],
)
def test_a_password_inside_the_source_url_is_refused_like_source_password(url):
    base = ["script.py", "--JOB_NAME", "j", "--source", url, "--source_table", "orders"]
    base += ["--watermark_column", "u", "--primary_key", "id", "--target_path", "file:///t"]
    with pytest.raises(ArgumentError, match="--source carries a password") as raised:
        load_job.LoadConfig.from_args(
            resolve_options(base, load_job.REQUIRED_ARGS, load_job.OPTIONAL_ARGS)
        )
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("legacy", "meaning"),
    [
        ("continuation-enabled", BookmarkOption.ENABLE),
        ("continuation-readonly", BookmarkOption.PAUSE),
        ("continuation-ignore", BookmarkOption.DISABLE),
    ],
)
def test_the_legacy_continuation_option_means_what_glue_translates_it_to(legacy, meaning):
    args = resolve_options(["s.py", "--JOB_NAME", "j", "--continuation-option", legacy], [])
    assert args["job-bookmark-option"] == meaning.value


def test_the_bookmark_option_wins_over_the_legacy_continuation_option():
    args = resolve_options(
        [
            *("s.py", "--JOB_NAME", "j", "--continuation-option", "continuation-ignore"),
            *("--job-bookmark-option", "job-bookmark-pause"),
        ],
        [],
    )
    assert args["job-bookmark-option"] == BookmarkOption.PAUSE.value


def test_an_unknown_continuation_option_is_named():
    with pytest.raises(ArgumentError, match="--continuation-option 'continuation-off'") as raised:
        resolve_options(
            ["s.py", "--JOB_NAME", "j", "--continuation-option", "continuation-off"], []
        )
    assert raised.value.name == "continuation-option"
