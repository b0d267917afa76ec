"""File bookmarks: every file read exactly once, late files reported, unchanged partitions pruned.

Modification times are set explicitly with ``os.utime`` (never sleep); run start
times are synthetic milliseconds around ``T0``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from glue_incremental.sources.files import (
    FileBookmark,
    InvalidBookmarkState,
    ListingStats,
    SourceFile,
    SourceNotFound,
    count_late_files,
    list_source_files,
    next_band,
    plan_file_read,
    plan_from_listing,
    read_files,
)
from hypothesis import given
from hypothesis import strategies as st

T0 = 1_700_000_000_000  # ms
SECOND = 1_000


def put(root: Path, relative: str, modified_ms: int, content: str = "{}\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    touch(path, modified_ms)
    return path


def touch(path: Path, modified_ms: int) -> None:
    os.utime(path, ns=(modified_ms * 1_000_000, modified_ms * 1_000_000))


def names(plan) -> list[str]:
    return [source.uri.rsplit("/", 1)[-1] for source in plan.files]


def source(name: str, modified_ms: int, directory: str = "file:/data/dt=1") -> SourceFile:
    return SourceFile(f"{directory}/{name}", modified_ms, 10, (("dt", "1"),))


# --------------------------------------------------------------------------- with the file system


@pytest.mark.spark
def test_first_run_reads_everything_up_to_the_run_start_and_skips_hidden_files(spark, tmp_path):
    put(tmp_path, "date=2024-01-02/b.json", T0 + 2 * SECOND)
    put(tmp_path, "date=2024-01-01/a.json", T0 + 1 * SECOND)
    put(tmp_path, "date=2024-01-01/late-writer.json", T0 + 99 * SECOND)  # after the run start
    put(tmp_path, "date=2024-01-01/_SUCCESS", T0)
    put(tmp_path, "date=2024-01-01/.a.json.crc", T0)
    put(tmp_path, "_temporary/0/part-0.json", T0)
    put(tmp_path, ".spark-staging-1/part-0.json", T0)

    plan = plan_file_read(spark, str(tmp_path), None, run_start_ms=T0 + 10 * SECOND)

    assert plan.first_run
    assert names(plan) == ["a.json", "b.json"]
    assert [s.partition for s in plan.files] == [
        (("date", "2024-01-01"),),
        (("date", "2024-01-02"),),
    ]
    assert plan.files[0].uri.startswith("file:")
    assert plan.deferred_file_count == 1
    assert plan.files_listed == 3
    assert plan.next_bookmark.high_mark_ms == T0 + 2 * SECOND
    assert plan.late_file_count == 0
    assert json.loads(json.dumps(plan.summary()))["files_to_read"] == 2


@pytest.mark.spark
def test_a_file_modified_after_the_run_start_waits_for_the_next_run(spark, tmp_path):
    put(tmp_path, "a.json", T0)
    put(tmp_path, "still-writing.json", T0 + 20 * SECOND)
    first = plan_file_read(spark, str(tmp_path), None, run_start_ms=T0 + 10 * SECOND)
    assert names(first) == ["a.json"]
    assert first.deferred_file_count == 1

    second = plan_file_read(
        spark, str(tmp_path), first.next_bookmark, run_start_ms=T0 + 30 * SECOND
    )
    assert names(second) == ["still-writing.json"]
    assert second.deferred_file_count == 0


@pytest.mark.spark
def test_a_late_file_inside_the_band_is_read_exactly_once_over_two_runs(spark, tmp_path):
    put(tmp_path, "dt=1/a.json", T0 + 100 * SECOND)
    put(tmp_path, "dt=1/b.json", T0 + 200 * SECOND)
    first = plan_file_read(spark, str(tmp_path), None, run_start_ms=T0 + 300 * SECOND)
    assert names(first) == ["a.json", "b.json"]

    # A multipart upload that began before b.json was written completes now.
    put(tmp_path, "dt=1/multipart.json", T0 + 150 * SECOND)
    second = plan_file_read(
        spark, str(tmp_path), first.next_bookmark, run_start_ms=T0 + 400 * SECOND
    )
    assert names(second) == ["multipart.json"]
    assert second.late_file_count == 0

    third = plan_file_read(
        spark, str(tmp_path), second.next_bookmark, run_start_ms=T0 + 500 * SECOND
    )
    assert third.files == ()


@pytest.mark.spark
def test_files_sharing_one_mtime_are_read_exactly_once(spark, tmp_path):
    shared = T0 + 60 * SECOND
    for index in range(3):
        put(tmp_path, f"dt=1/early-{index}.json", shared)
    first = plan_file_read(spark, str(tmp_path), None, run_start_ms=shared + SECOND)
    assert len(first.files) == 3
    assert first.next_bookmark.high_mark_ms == shared

    for index in range(2):  # same mtime, exactly the high mark, visible only after the run
        put(tmp_path, f"dt=1/later-{index}.json", shared)
    put(tmp_path, "dt=2/later-2.json", shared)
    second = plan_file_read(
        spark, str(tmp_path), first.next_bookmark, run_start_ms=shared + 2 * SECOND
    )
    assert names(second) == ["later-0.json", "later-1.json", "later-2.json"]

    third = plan_file_read(
        spark, str(tmp_path), second.next_bookmark, run_start_ms=shared + 3 * SECOND
    )
    assert third.files == ()
    assert len(third.next_bookmark.band_fingerprints) == 6


@pytest.mark.spark
def test_a_file_older_than_the_band_is_counted_late_not_read(spark, tmp_path):
    put(tmp_path, "dt=1/a.json", T0 + 100 * SECOND)
    first = plan_file_read(
        spark, str(tmp_path), None, run_start_ms=T0 + 110 * SECOND, band_seconds=60
    )
    assert first.next_bookmark.band_start_ms == T0 + 40 * SECOND

    put(tmp_path, "dt=1/too-late.json", T0 + 10 * SECOND)  # in a directory listed before
    put(tmp_path, "dt=0/too-late.json", T0 + 5 * SECOND)  # in a new directory
    second = plan_file_read(
        spark, str(tmp_path), first.next_bookmark, run_start_ms=T0 + 120 * SECOND, band_seconds=60
    )
    assert second.files == ()
    assert second.late_file_count == 2
    assert sorted(d.rsplit("/", 1)[-1] for d, _ in second.late_directories) == ["dt=0", "dt=1"]
    assert second.summary()["late_files"] == 2

    third = plan_file_read(
        spark, str(tmp_path), second.next_bookmark, run_start_ms=T0 + 130 * SECOND, band_seconds=60
    )
    assert (third.files, third.late_file_count) == ((), 0)  # reported once, not every run


@pytest.mark.spark
def test_unchanged_partition_directories_are_not_listed(spark, tmp_path):
    put(tmp_path, "date=2024-01-01/hour=00/a.json", T0 + 1 * SECOND)
    put(tmp_path, "date=2024-01-01/hour=01/b.json", T0 + 2 * SECOND)
    put(tmp_path, "date=2024-01-02/hour=00/c.json", T0 + 100 * SECOND)
    put(tmp_path, "date=2024-01-02/hour=00/_SUCCESS", T0 + 100 * SECOND)
    # Directories published by rename: their time is when their last entry arrived.
    touch(tmp_path / "date=2024-01-01/hour=00", T0 + 1 * SECOND)
    touch(tmp_path / "date=2024-01-01/hour=01", T0 + 2 * SECOND)
    touch(tmp_path / "date=2024-01-02/hour=00", T0 + 100 * SECOND)
    touch(tmp_path / "date=2024-01-01", T0)
    touch(tmp_path / "date=2024-01-02", T0)

    first = plan_file_read(
        spark, str(tmp_path), None, run_start_ms=T0 + 110 * SECOND, band_seconds=60
    )
    assert (len(first.files), first.files_listed, first.partitions_pruned) == (3, 3, 0)
    assert first.next_bookmark.band_start_ms == T0 + 40 * SECOND

    second = plan_file_read(
        spark, str(tmp_path), first.next_bookmark, run_start_ms=T0 + 120 * SECOND, band_seconds=60
    )
    # root + both date= directories (intermediate: always listed) + the one changed hour=.
    assert (second.directories_listed, second.files_listed, second.partitions_pruned) == (4, 1, 2)
    assert second.files == () and second.late_file_count == 0

    put(tmp_path, "date=2024-01-01/hour=01/d.json", T0 + 200 * SECOND)  # bumps hour=01's time
    third = plan_file_read(
        spark, str(tmp_path), second.next_bookmark, run_start_ms=T0 + 300 * SECOND, band_seconds=60
    )
    assert names(third) == ["d.json"]
    assert third.files[0].partition == (("date", "2024-01-01"), ("hour", "01"))
    assert (third.directories_listed, third.files_listed, third.partitions_pruned) == (5, 3, 1)
    assert third.late_file_count == 0

    unpruned = plan_file_read(
        spark,
        str(tmp_path),
        second.next_bookmark,
        run_start_ms=T0 + 300 * SECOND,
        band_seconds=60,
        prune_directories=False,
    )
    assert unpruned.files == third.files and unpruned.files_listed == 4

    touch(tmp_path / "date=2024-01-01/hour=00", 0)  # what a store without directory times says
    no_times = plan_file_read(
        spark, str(tmp_path), third.next_bookmark, run_start_ms=T0 + 400 * SECOND, band_seconds=60
    )
    assert (no_times.partitions_pruned, no_times.files_listed, no_times.files) == (0, 4, ())
    assert not no_times.summary()["directory_mtimes_usable"]


@pytest.mark.spark
def test_a_missing_root_raises_source_not_found_naming_the_uri(spark, tmp_path):
    missing = str(tmp_path / "no-such-source")
    with pytest.raises(SourceNotFound, match="no-such-source") as raised:
        list_source_files(spark, missing)
    assert raised.value.uri == missing
    assert isinstance(raised.value, ValueError)


@pytest.mark.spark
def test_read_files_returns_rows_with_partition_columns(spark, tmp_path):
    schema = "id INT, v STRING"
    spark.createDataFrame([(1, "p")], schema).coalesce(1).write.parquet(
        str(tmp_path / "parquet/dt=2024-01-01")
    )
    put(tmp_path, "json/dt=2024-01-02/part[1].json", T0, '{"id": 2, "v": "j"}\n')
    put(tmp_path, "csv/dt=2024-01-03/a.csv", T0, "id,v\n3,c\n")
    rows = []
    for fmt, options in (("parquet", None), ("json", None), ("csv", {"header": "true"})):
        root = str(tmp_path / fmt)
        files, _ = list_source_files(spark, root)
        assert len(files) == 1, files  # _SUCCESS and .crc files are not data
        frame = read_files(
            spark, files, root_uri=root, source_format=fmt, schema=schema, options=options
        )
        rows += [(row.id, row.v, str(row.dt)) for row in frame.collect()]
    assert rows == [(1, "p", "2024-01-01"), (2, "j", "2024-01-02"), (3, "c", "2024-01-03")]
    assert read_files(spark, [], root_uri=str(tmp_path), source_format="json") is None


# --------------------------------------------------------------------------- pure planning


def test_a_replay_reads_only_up_to_its_upper_bound():
    listing = [source("a", T0), source("b", T0 + 10 * SECOND), source("c", T0 + 20 * SECOND)]
    plan = plan_from_listing(
        listing, None, run_start_ms=T0 + 30 * SECOND, upper_bound_ms=T0 + 10 * SECOND
    )
    assert names(plan) == ["a", "b"]
    assert plan.deferred_file_count == 1
    assert plan.next_bookmark.high_mark_ms == T0 + 10 * SECOND


def test_a_bounded_band_keeps_the_state_size_bounded():
    listing = [source(f"f{i:02d}", T0 + i * SECOND) for i in range(50)]
    plan = plan_from_listing(
        listing, None, run_start_ms=T0 + 60 * SECOND, band_seconds=3600, max_band_files=10
    )
    bookmark = plan.next_bookmark
    assert len(plan.files) == 50
    assert plan.band_truncated
    assert len(bookmark.band_fingerprints) == 10
    assert bookmark.band_start_ms == T0 + 39 * SECOND  # just below the oldest kept file (f40)

    # Files older than the shrunk band count as processed; a newly visible one is late.
    later = [*listing, source("f39-twin", T0 + 39 * SECOND)]
    second = plan_from_listing(
        later, bookmark, run_start_ms=T0 + 70 * SECOND, band_seconds=3600, max_band_files=10
    )
    assert (second.files, second.late_file_count) == ((), 1)
    assert len(json.dumps(second.next_bookmark.to_state())) < 2_000


def test_band_truncation_never_splits_one_modification_time():
    candidates = [(T0, f"{i:016x}") for i in range(12)] + [(T0 + SECOND, "f" * 16)]
    start, fingerprints, truncated = next_band(
        candidates, high_mark_ms=T0 + SECOND, floor_ms=None, band_ms=60_000, max_band_files=10
    )
    assert (start, fingerprints, truncated) == (T0, ("f" * 16,), True)


def test_directory_tracking_is_bounded_and_then_no_longer_complete():
    listing = [source("a", T0, f"file:/data/dt={day}") for day in range(3)]
    listing.append(source("new", T0 + 600 * SECOND, "file:/data/dt=9"))
    plan = plan_from_listing(
        listing, None, run_start_ms=T0 + 601 * SECOND, band_seconds=60, max_tracked_directories=2
    )
    bookmark = plan.next_bookmark
    assert [d for d, *_ in bookmark.dir_old_counts] == ["file:/data/dt=9", "file:/data/dt=0"]
    assert not bookmark.dir_counts_complete
    # Untracked directories are assumed fully processed once tracking is incomplete.
    assert count_late_files([*listing, source("b", T0, "file:/data/dt=2")], bookmark) == {}
    assert count_late_files([*listing, source("b", T0, "file:/data/dt=0")], bookmark) == {
        "file:/data/dt=0": 1
    }


def test_the_state_round_trips_through_json():
    listing = [source("a", T0), source("b", T0 + 500 * SECOND), source("c", T0 + 900 * SECOND)]
    bookmark = plan_from_listing(
        listing, None, run_start_ms=T0 + 1000 * SECOND, band_seconds=600
    ).next_bookmark
    state = bookmark.to_state()
    assert FileBookmark.from_state(json.loads(json.dumps(state))) == bookmark
    # Every file up to the high mark was read or reported: the count and the mark it is up to.
    assert state["dir_old_counts"] == [["file:/data/dt=1", 3, T0 + 900 * SECOND]]
    assert len(state["band_fingerprints"]) == 2  # b and c
    # DynamoDB hands numbers back as Decimal.
    as_dynamodb = {**state, "high_mark_ms": Decimal(state["high_mark_ms"])}
    assert FileBookmark.from_state(as_dynamodb) == bookmark
    assert FileBookmark.from_state(None) == FileBookmark.initial()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"high_mark_ms": "yesterday"}, "high_mark_ms"),
        ({"high_mark_ms": 1.5}, "high_mark_ms"),
        ({"band_start_ms": None}, "band_start_ms"),
        ({"band_start_ms": T0 + 10**9}, "band_start_ms"),
        ({"band_fingerprints": "abc"}, "band_fingerprints"),
        ({"band_fingerprints": ["not-a-fingerprint"]}, "band_fingerprints[0]"),
        ({"dir_old_counts": [["file:/d", -1]]}, "dir_old_counts[0][1]"),
        ({"dir_old_counts": [["file:/d"]]}, "dir_old_counts[0]"),
        ({"dir_old_counts": [["file:/d", 1, "noon"]]}, "dir_old_counts[0][2]"),
        ({"dir_counts_complete": "yes"}, "dir_counts_complete"),
        ({"version": 2}, "version"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_malformed_state_is_rejected_naming_the_field(change, field):
    state = {**FileBookmark(T0, T0 - 1, ("0" * 16,), (("file:/d", 1, T0),)).to_state(), **change}
    with pytest.raises(InvalidBookmarkState) as raised:
        FileBookmark.from_state(state)
    assert raised.value.field == field
    assert field in str(raised.value)
    with pytest.raises(InvalidBookmarkState, match="missing field"):
        FileBookmark.from_state({"version": 1})


BAND_SECONDS = 60
DIRECTORIES = ("file:/data/dt=1", "file:/data/dt=2", "file:/data/dt=3")

steps = st.one_of(
    # A file becomes visible; its mtime is relative to the clock (backwards, equal, or ahead).
    st.tuples(st.just("file"), st.integers(-BAND_SECONDS - 20, 20), st.sampled_from(DIRECTORIES)),
    # A file becomes visible stamped exactly with the current high mark.
    st.tuples(st.just("at-high-mark"), st.just(0), st.sampled_from(DIRECTORIES)),
    st.tuples(st.just("run"), st.integers(0, 90), st.just("")),
)


@given(
    history=st.lists(steps, max_size=40),
    max_band_files=st.sampled_from([2, 5, 10_000]),
    max_tracked_directories=st.sampled_from([1, 1_000]),
)
def test_property_in_band_files_are_read_exactly_once_and_none_twice(
    history, max_band_files, max_tracked_directories
):
    clock = T0
    bookmark = FileBookmark.initial()
    visible: list[SourceFile] = []
    in_band: set[str] = set()
    out_of_band_since_run = 0
    reads: Counter[str] = Counter()

    def run(run_start: int) -> None:
        nonlocal bookmark, out_of_band_since_run
        plan = plan_from_listing(
            visible,
            bookmark,
            run_start_ms=run_start,
            band_seconds=BAND_SECONDS,
            max_band_files=max_band_files,
            max_tracked_directories=max_tracked_directories,
        )
        for read in plan.files:
            assert reads[read.uri] == 0, f"{read.uri} read twice"
            assert read.modified_ms <= run_start
            reads[read.uri] += 1
        assert list(plan.files) == sorted(plan.files, key=lambda s: (s.modified_ms, s.uri))
        if bookmark.dir_counts_complete:
            assert plan.late_file_count == out_of_band_since_run
        else:
            assert plan.late_file_count <= out_of_band_since_run
        nxt = plan.next_bookmark
        assert len(nxt.band_fingerprints) <= max_band_files
        assert len(nxt.dir_old_counts) <= max_tracked_directories
        assert FileBookmark.from_state(json.loads(json.dumps(nxt.to_state()))) == nxt
        bookmark, out_of_band_since_run = nxt, 0

    for index, (kind, value, directory) in enumerate(history):
        if kind == "run":
            clock += value * SECOND
            run(clock)
            continue
        if kind == "at-high-mark":
            modified = clock if bookmark.high_mark_ms is None else bookmark.high_mark_ms
        else:
            modified = clock + value * SECOND
        arrived = SourceFile(f"{directory}/f{index}.json", modified, 10, ())
        visible.append(arrived)
        if bookmark.high_mark_ms is None or modified > bookmark.band_start_ms:
            in_band.add(arrived.uri)
        else:
            out_of_band_since_run += 1
    run(clock + 100 * BAND_SECONDS * SECOND)  # everything has been written by now

    for arrived in visible:
        assert reads[arrived.uri] == (1 if arrived.uri in in_band else 0), arrived


def test_a_state_without_count_marks_counts_each_directory_to_its_band_start():
    """States written before the per-directory mark: [directory, count], counted to S."""
    state = {**FileBookmark(T0, T0 - 1, (), (("file:/d", 1, T0),)).to_state()}
    state["dir_old_counts"] = [["file:/d", 1]]
    assert FileBookmark.from_state(state).dir_old_counts == (("file:/d", 1, T0 - 1),)


def test_a_file_read_in_its_band_is_not_late_when_its_directory_is_listed_after_the_band_moved():
    read_in_band = source("a", T0, "file:/data/dt=1")
    first = plan_from_listing([read_in_band], None, run_start_ms=T0 + SECOND, band_seconds=1)
    # dt=1 is not listed while the band moves past its file (a notification run elsewhere).
    elsewhere = source("b", T0 + 10 * SECOND, "file:/data/dt=2")
    stats = ListingStats(
        root_uri="file:/data",
        files_listed=1,
        directories_listed=1,
        partitions_pruned=1,
        directory_mtimes_usable=False,
        recursive=True,
        pruned_directories=("file:/data/dt=1",),
    )
    second = plan_from_listing(
        [elsewhere],
        first.next_bookmark,
        run_start_ms=T0 + 11 * SECOND,
        band_seconds=1,
        stats=stats,
    )
    new = source("c", T0 + 20 * SECOND, "file:/data/dt=1")
    third = plan_from_listing(
        [read_in_band, new],
        second.next_bookmark,
        run_start_ms=T0 + 21 * SECOND,
        band_seconds=1,
        stats=replace(stats, pruned_directories=("file:/data/dt=2",)),
    )
    assert (third.files, third.late_file_count) == ((new,), 0)


def test_an_old_file_announced_within_a_band_of_its_modification_is_read_not_late():
    """Its message was received by a run that never committed and came back after the band
    moved past the file: the file was new when the message was sent."""
    bookmark = plan_from_listing(
        [source("a", T0)], None, run_start_ms=T0 + SECOND, band_seconds=60
    ).next_bookmark
    moved = plan_from_listing(
        [source("a", T0), source("n", T0 + 900 * SECOND)],
        bookmark,
        run_start_ms=T0 + 901 * SECOND,
        band_seconds=60,
    ).next_bookmark
    held_back = source("f", T0 + 30 * SECOND)
    listing = [source("a", T0), source("n", T0 + 900 * SECOND), held_back]
    sent = {held_back.uri: held_back.modified_ms + 2 * SECOND}

    announced = plan_from_listing(
        listing, moved, run_start_ms=T0 + 2000 * SECOND, band_seconds=60, announced=sent
    )
    unannounced = plan_from_listing(
        listing, moved, run_start_ms=T0 + 2000 * SECOND, band_seconds=60
    )

    assert (announced.files, announced.late_file_count) == ((held_back,), 0)
    assert (unannounced.files, unannounced.late_file_count) == ((), 1)
    sent_too_late = {held_back.uri: held_back.modified_ms + 61 * SECOND}
    judged = plan_from_listing(
        listing, moved, run_start_ms=T0 + 2000 * SECOND, band_seconds=60, announced=sent_too_late
    )
    assert (judged.files, judged.late_file_count) == ((), 1)
