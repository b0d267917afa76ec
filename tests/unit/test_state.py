"""Typed job state: what ``to_state`` writes is what the jobs always committed, and reads back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from glue_incremental.errors import UnreadableState
from glue_incremental.run.state import (
    JoinSideState,
    LayoutChanged,
    LoadState,
    UpstreamState,
    check_same_layout,
    stored_without_times,
    target_layout,
)
from glue_incremental.sources.discovery import DiscoveryState
from glue_incremental.sources.files import FileBookmark
from glue_incremental.watermarks.encoding import decode, encode

BOOKMARK = FileBookmark(
    high_mark_ms=2_000, band_start_ms=1_000, band_fingerprints=("0123456789abcdef",)
)
UPSTREAM = UpstreamState(job="orders_load", version=3, run_id="jr_1", published_at_ms=1_500)


def test_a_first_run_has_no_state():
    assert LoadState.from_state(None) is None
    assert JoinSideState.from_state(None) is None


def test_a_file_side_writes_the_keys_the_join_always_wrote_and_reads_them_back():
    side = JoinSideState(
        published_at_ms=9,
        pending_partitions=(("2024-01-01", None),),
        upstream=UPSTREAM,
        files=BOOKMARK,
    )
    stored = side.to_state()
    assert stored == {
        "files": BOOKMARK.to_state(),
        "pending_partitions": [["2024-01-01", None]],
        "upstream": dict(UPSTREAM),
        "published_at_ms": 9,
    }
    assert JoinSideState.from_state(stored) == side


def test_an_iceberg_side_keeps_its_snapshot_and_table():
    side = JoinSideState(published_at_ms=9, iceberg_snapshot_id=42, iceberg_table="c.db.t")
    stored = side.to_state()
    assert stored == {
        "iceberg_snapshot_id": 42,
        "iceberg_table": "c.db.t",
        "pending_partitions": [],
        "upstream": None,
        "published_at_ms": 9,
    }
    assert JoinSideState.from_state(stored) == side


def test_only_a_new_publish_time_is_not_a_change():
    before = JoinSideState(published_at_ms=1, files=BOOKMARK)
    assert JoinSideState(published_at_ms=2, files=BOOKMARK).same_apart_from_publish_time(before)
    moved = FileBookmark(high_mark_ms=3_000, band_start_ms=2_000)
    assert not JoinSideState(published_at_ms=2, files=moved).same_apart_from_publish_time(before)
    assert not before.same_apart_from_publish_time(None)


def test_a_load_state_round_trips_with_and_without_files():
    jdbc = LoadState(cursor=17, published_at_ms=5)
    assert jdbc.to_state() == {"cursor": 17, "published_at_ms": 5}
    files = LoadState(cursor=None, published_at_ms=5, files=BOOKMARK, iceberg_table="c.db.t")
    assert LoadState.from_state(files.to_state()) == files
    assert LoadState.from_state(jdbc.to_state()) == jdbc


def test_a_run_under_another_layout_than_its_state_is_refused_in_one_line_naming_both():
    before = {"cursor": 1, "layout": target_layout(["part"], ["id"], "updated")}
    check_same_layout(before, target_layout(["part"], ["id"], "updated"))
    check_same_layout({"cursor": 1}, target_layout([], ["id"], "updated"))  # not recorded yet
    with pytest.raises(LayoutChanged) as refused:
        check_same_layout(before, target_layout(["part"], ["id", "part"], "updated"))
    assert str(refused.value).startswith("--primary_key changed from ['id'] to ['id', 'part']")
    assert "\n" not in str(refused.value)


PARQUET_A = {"target_format": "parquet", "target_path": "s3://b/a"}


def test_a_run_into_another_target_is_refused_and_a_state_naming_none_is_accepted():
    before = {"cursor": 1, "layout": target_layout(["part"], ["id"], "updated", PARQUET_A)}
    check_same_layout(before, target_layout(["part"], ["id"], "updated", PARQUET_A))
    moved = {"target_format": "parquet", "target_path": "s3://b/b"}
    with pytest.raises(LayoutChanged) as refused:
        check_same_layout(before, target_layout(["part"], ["id"], "updated", moved))
    assert str(refused.value).startswith("--target_path changed from 's3://b/a' to 's3://b/b'")
    assert "\n" not in str(refused.value) and "watermarks reset" in str(refused.value)
    iceberg = {"target_format": "iceberg", "target_table": "db.t"}
    with pytest.raises(LayoutChanged, match=r"^--target_format changed from 'parquet'"):
        check_same_layout(before, target_layout(["part"], ["id"], "updated", iceberg))
    # Written before the target was recorded: accepted (the next commit records it).
    older = {"cursor": 1, "layout": target_layout(["part"], ["id"], "updated")}
    check_same_layout(older, target_layout(["part"], ["id"], "updated", moved))


def test_a_file_load_state_keeps_its_s3_discovery_state_on_a_round_trip():
    discovery = DiscoveryState(
        runs_since_full_listing=2, ordered_start="dt=2024-01-02/", full_listing_high_mark_ms=9
    )
    state = LoadState(cursor=4, published_at_ms=5, files=BOOKMARK, discovery=discovery)
    stored = state.to_state()
    assert stored["discovery"] == discovery.to_state()
    assert LoadState.from_state(stored) == state
    assert state.without_times() == stored_without_times(stored)
    assert "cursor" not in state.without_times()


def test_a_stored_state_reads_back_through_the_store_encoding_unchanged():
    layout = target_layout(["part"], ["id"], "updated", PARQUET_A)
    state = LoadState(
        cursor=datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        published_at_ms=5,
        iceberg_snapshot=42,
        partition_types={"part": "date"},
        layout=layout,
        runs_since_reconcile=3,
    )
    stored = decode(encode(state.to_state()))
    assert LoadState.from_state(stored) == state
    assert decode(encode(state.to_state())) == state.to_state()
    side = JoinSideState(published_at_ms=9, pending_partitions=(("a", None),), upstream=UPSTREAM)
    assert JoinSideState.from_state(decode(encode(side.to_state()))) == side


@pytest.mark.parametrize(
    "stored",
    [
        {"cursor": 1, "published_at_ms": 5, "iceberg_snapshot": "42"},
        {"cursor": [1, 2], "published_at_ms": 5},
        {"cursor": 1, "published_at_ms": 5, "runs_since_reconcile": {"n": 1}},
    ],
)
def test_a_load_state_value_of_the_wrong_type_is_unreadable_not_carried_on(stored):
    with pytest.raises(UnreadableState, match=r"^stored "):
        LoadState.from_state(stored)


def test_a_join_side_pending_partition_that_is_not_a_list_of_values_is_unreadable():
    stored = {"pending_partitions": [[1, "a"]], "upstream": None, "published_at_ms": 1}
    with pytest.raises(UnreadableState, match=r"pending partition \[1, 'a'\]"):
        JoinSideState.from_state(stored)
