"""The side files of a publish are written side by side, and the caller resumes only once
every write has ended."""

from __future__ import annotations

import threading
import time

import pytest
from glue_incremental.targets.parquet.staged_writes import side_by_side


def test_side_by_side_returns_each_result_in_the_order_given():
    assert side_by_side([lambda: "index", lambda: "deliveries", lambda: "tombstones"]) == [
        "index",
        "deliveries",
        "tombstones",
    ]


def test_the_writes_run_at_the_same_time():
    both_started = threading.Barrier(2, timeout=5)  # broken (an error) if they ran one by one

    def write() -> bool:
        both_started.wait()
        return True

    assert side_by_side([write, write]) == [True, True]


def test_a_failed_write_is_raised_only_after_the_others_have_ended():
    ended = threading.Event()

    def fails() -> None:
        raise OSError("disk full")

    def slow() -> None:
        time.sleep(0.2)
        ended.set()

    with pytest.raises(OSError, match="disk full"):
        side_by_side([fails, slow])
    assert ended.is_set()


def test_a_single_write_runs_in_the_callers_thread():
    assert side_by_side([threading.current_thread]) == [threading.current_thread()]
