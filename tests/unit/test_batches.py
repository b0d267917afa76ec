"""Bounded batches, planned on plain data: how files and watermark ranges are cut."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.engine.batch_plan import (
    BatchLimits,
    FileBatch,
    batch_end_query,
    file_batches,
    first_file_cut,
    row_batch_ends,
    rows_after_query,
)
from glue_incremental.load.batched_run import read_position
from glue_incremental.load.config import LOAD_OPTIONS, LoadConfig
from glue_incremental.sources.jdbc import JdbcSource, incremental_query


@dataclass(frozen=True)
class Listed:
    modified_ms: int
    size: int = 10


def test_files_are_cut_by_count_in_discovery_order():
    files = [Listed(1), Listed(2), Listed(3), Listed(4), Listed(5)]
    assert file_batches(files, BatchLimits(max_files=2)) == [
        FileBatch(2, 20, 2),
        FileBatch(2, 20, 4),
        FileBatch(1, 10, 5),
    ]


def test_files_are_cut_by_bytes_and_a_larger_file_is_a_batch_of_its_own():
    files = [Listed(1, 40), Listed(2, 70), Listed(3, 500), Listed(4, 30)]
    assert file_batches(files, BatchLimits(max_bytes=100)) == [
        FileBatch(1, 40, 1),
        FileBatch(1, 70, 2),
        FileBatch(1, 500, 3),
        FileBatch(1, 30, 4),
    ]


def test_files_sharing_a_modification_time_are_never_split():
    files = [Listed(1), Listed(2), Listed(2), Listed(2), Listed(3)]
    # The bound is reached inside the run of 2s: they all join the batch that holds one.
    assert file_batches(files, BatchLimits(max_files=2)) == [
        FileBatch(4, 40, 2),
        FileBatch(1, 10, 3),
    ]


def test_late_files_up_to_the_high_mark_stay_in_the_first_batch():
    files = [Listed(1), Listed(2), Listed(3), Listed(9), Listed(10)]
    batches = file_batches(files, BatchLimits(max_files=1), after_ms=3)
    assert [batch.last_modified_ms for batch in batches] == [3, 9, 10]


def test_every_file_fitting_one_batch_needs_no_cut():
    files = [Listed(1), Listed(2)]
    assert first_file_cut(files, BatchLimits(max_files=2)) is None
    assert first_file_cut(files, BatchLimits(max_files=1)) == 1
    assert file_batches([], BatchLimits(max_files=1)) == []


def test_row_batches_end_at_each_boundary_until_the_source_has_no_more():
    rows = [1, 2, 2, 2, 3, 4, 5]

    def next_end(after):  # what the batch-end query returns for 2 rows per batch
        later = sorted(value for value in rows if after is None or value > after)
        return later[1] if len(later) >= 2 else None

    assert row_batch_ends(next_end, None, 10) == [2, 4]  # then 5 alone: the last batch
    assert row_batch_ends(next_end, None, 1) == [2]


def test_the_batch_end_query_takes_the_nth_watermark_after_the_cursor():
    source = JdbcSource(url="jdbc:postgresql://db/x", table="public.orders")
    first = batch_end_query(source, watermark_column="updated", after=None, max_rows=500)
    later = batch_end_query(source, watermark_column="updated", after=41, max_rows=1)
    assert first == (
        'SELECT "updated" AS "batch_end" FROM "public"."orders" '
        'WHERE "updated" IS NOT NULL ORDER BY "updated" LIMIT 1 OFFSET 499'
    )
    assert 'WHERE "updated" > 41 ORDER BY "updated" LIMIT 1 OFFSET 0' in later


def test_a_row_batch_reads_up_to_and_including_its_end_of_any_numeric_type():
    source = JdbcSource(url="jdbc:postgresql://db/x", table="orders")
    query = incremental_query(
        source,
        watermark_column="seq",
        lower_bound=Decimal("60"),
        upper_bound=Decimal("120"),
        include_null_watermarks=False,
        upper_inclusive=True,
    )
    assert query.endswith('WHERE ("seq" >= 60 AND "seq" <= 120)')
    after = rows_after_query(source, watermark_column="seq", after=Decimal("120"))
    assert after == 'SELECT "seq" AS "next_watermark" FROM "orders" WHERE "seq" > 120 LIMIT 1'


def test_a_batch_made_progress_only_when_its_cursor_or_file_bookmark_moved():
    before = {"cursor": 1, "published_at_ms": 5, "layout": {"a": 1}}
    assert read_position(before) != read_position({**before, "cursor": 2})
    assert read_position(before) != read_position({**before, "files": {"high_mark_ms": 9}})
    # A new publish time or reconcile count alone (rows past --max_future_skew): no progress.
    assert read_position(before) == read_position(
        {**before, "published_at_ms": 6, "runs_since_reconcile": 3}
    )


BASE = {"watermark_column": "updated", "primary_key": ("id",), "target_path": "/tmp/t"}


@pytest.mark.parametrize(
    ("options", "named", "says"),
    [
        ({"source": "/data", "max_batch_rows": 5}, "max_batch_rows", "bounds JDBC sources"),
        (
            {"source": "jdbc:postgresql://db/x", "source_table": "t", "max_batch_files": 5},
            "max_batch_files",
            "bounds file sources",
        ),
        ({"source": "/data", "max_batches_per_run": 2}, "max_batches_per_run", "needs a batch"),
        ({"source": "/data", "max_batch_files": 0}, "max_batch_files", "at least 1"),
        (
            {
                "source": "s3://bucket/in",
                "discovery": "notifications",
                "notification_queue_url": "https://sqs.eu-west-1.amazonaws.com/1/q",
                "max_batch_files": 5,
            },
            "discovery",
            "cannot be batched",
        ),
    ],
)
def test_a_bound_the_source_cannot_honour_is_one_line_naming_it(options, named, says):
    with pytest.raises(ArgumentError) as raised:
        LoadConfig(**BASE, **options)
    assert raised.value.name == named
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_batch_options_parse_from_job_arguments():
    args = {
        **{option.name: option.default for option in LOAD_OPTIONS},
        "source": "/data",
        "watermark_column": "updated",
        "primary_key": "id",
        "target_path": "/tmp/t",
        "max_batch_files": "3",
        "max_batches_per_run": "2",
    }
    config = LoadConfig.from_args(args)
    assert config.batch_limits == BatchLimits(max_files=3, max_batches=2)
    with pytest.raises(ArgumentError, match="max_batch_bytes"):
        LoadConfig.from_args({**args, "max_batch_bytes": "lots"})
