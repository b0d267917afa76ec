"""The history core's rules, one example each (docs/history.md), and its options' refusals."""

from __future__ import annotations

from typing import Any

import pytest
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.history.core import Delivery, Version, apply, needed_from, versions_of
from glue_incremental.history.errors import (
    HistoryColumnTaken,
    HistoryOptionError,
    InconsistentHistory,
    LatestVersionTarget,
    NullWatermark,
    UnknownHistoryColumn,
)
from glue_incremental.history.options import HistoryOptions

OPTIONS = HistoryOptions("ts", primary_key=("id",))
SEGMENT_ONLY = HistoryOptions("ts", history_columns=("segment",), primary_key=("id",))


def row(ts: Any, segment: str = "a", *, note: str = "", file: int = 0, deleted: bool = False):
    return Delivery.of(
        {"id": 1, "ts": ts, "segment": segment, "note": note},
        "ts",
        delivery=(file, f"part-{file}.json"),
        deleted=deleted,
    )


def bounds(versions: list[Version]) -> list[tuple[Any, Any, str]]:
    return [(v.valid_from, v.valid_to, v.representative.values["segment"]) for v in versions]


def run(batches: list[list[Delivery]], options: HistoryOptions = OPTIONS) -> list[Version]:
    """Each batch through ``apply`` against what the previous ones stored, from where
    ``needed_from`` says."""
    versions: list[Version] = []
    absorbed: list[Delivery] = []
    for batch in batches:
        since = needed_from(versions, min(delivery.watermark for delivery in batch))
        change = apply(
            [version for version in versions if version.valid_from >= since],
            [delivery for delivery in absorbed if delivery.watermark >= since],
            batch,
            options,
        )
        versions = [v for v in versions if v not in change.replace] + list(change.write)
        absorbed = [d for d in absorbed if d not in change.release] + list(change.absorb)
    return sorted(versions, key=lambda version: version.valid_from)


def test_a_late_version_slots_in_between_its_neighbours():
    versions = run([[row(1, "a"), row(5, "c")], [row(3, "b")]])
    assert bounds(versions) == [(1, 3, "a"), (3, 5, "b"), (5, None, "c")]


def test_a_late_version_closes_its_predecessor_and_is_closed_by_its_successor_in_one_change():
    stored, absorbed = versions_of([row(1, "a"), row(5, "c")], OPTIONS)
    change = apply(stored, absorbed, [row(3, "b")], OPTIONS)
    assert bounds(list(change.replace)) == [(1, 5, "a")]
    assert bounds(list(change.write)) == [(1, 3, "a"), (3, 5, "b")]
    assert (change.opened, change.closed) == (1, 1)


def test_a_delete_closes_the_current_version_and_removes_nothing():
    versions = run([[row(1, "a")], [row(4, "a", deleted=True)]])
    assert bounds(versions) == [(1, 4, "a")]
    assert not versions[0].is_current
    assert versions[0].as_row(OPTIONS)["is_current"] is False


def test_a_reinsert_after_a_delete_opens_a_new_version_even_with_equal_values():
    versions = run([[row(1, "a")], [row(4, "a", deleted=True)], [row(6, "a")]])
    assert bounds(versions) == [(1, 4, "a"), (6, None, "a")]


def test_a_late_row_before_a_delete_is_closed_by_that_delete():
    versions = run([[row(4, deleted=True)], [row(2, "a")]])
    assert bounds(versions) == [(2, 4, "a")]


def test_unchanged_tracked_columns_open_no_version_and_update_the_untracked_ones():
    versions = run([[row(1, "a", note="first")], [row(3, "a", note="second")]], SEGMENT_ONLY)
    assert bounds(versions) == [(1, None, "a")]
    assert versions[0].as_row(SEGMENT_ONLY)["note"] == "second"
    assert versions[0].as_row(SEGMENT_ONLY)["ts"] == 3


def test_by_default_every_column_but_the_watermark_is_tracked():
    versions = run([[row(1, "a", note="first")], [row(3, "a", note="second")]])
    assert [v.representative.values["note"] for v in versions] == ["first", "second"]


def test_a_late_winner_at_a_version_start_equal_to_the_version_before_merges_them():
    # ts 3 first delivered as "b" (file 0), then again as "a" in a later file: "b" never was.
    versions = run([[row(1, "a"), row(3, "b")], [row(3, "a", file=1)]])
    assert bounds(versions) == [(1, None, "a")]


def test_a_late_row_inside_a_run_of_equal_rows_splits_it_where_the_next_equal_row_was():
    versions = run([[row(1, "a"), row(3, "a"), row(5, "a")], [row(2, "b")]])
    assert bounds(versions) == [(1, 2, "a"), (2, 3, "b"), (3, None, "a")]


def test_a_duplicate_delivery_changes_nothing():
    stored, absorbed = versions_of([row(1, "a"), row(3, "b")], OPTIONS)
    assert apply(stored, absorbed, [row(3, "b"), row(1, "a")], OPTIONS).empty


def test_at_one_watermark_the_later_delivery_wins_whatever_the_arrival_order():
    early, late = row(2, "b", file=1), row(2, "c", file=2)
    assert bounds(run([[early], [late]])) == bounds(run([[late], [early]])) == [(2, None, "c")]


def test_needed_from_reads_the_version_before_when_the_earliest_row_is_at_a_version_start():
    versions, _ = versions_of([row(1, "a"), row(3, "b"), row(5, "c")], OPTIONS)
    assert [needed_from(versions, ts) for ts in (0, 1, 2, 3, 4, 5, 6)] == [0, 1, 1, 1, 3, 3, 5]


def test_a_null_watermark_is_refused_naming_the_key():
    with pytest.raises(NullWatermark, match=r"key \{'id': 1\} has a null watermark") as raised:
        apply([], [], [row(None)], OPTIONS)
    assert raised.value.key == {"id": 1}
    assert isinstance(raised.value, GlueIncrementalError)


def test_stored_versions_that_do_not_follow_from_their_deliveries_are_refused():
    tampered = Version(1, None, row(1, "a"))
    with pytest.raises(InconsistentHistory, match=r"key \{'id': 1\}"):
        apply([tampered], [row(3, "b")], [row(5, "c")], OPTIONS)


@pytest.mark.parametrize(
    ("options", "option", "value"),
    [
        ({"valid_to": "valid_from"}, "valid_from", "valid_from"),
        ({"is_current": ""}, "is_current", ""),
        ({"valid_from": "ts"}, "valid_from", "ts"),
        ({"valid_to": "id"}, "valid_to", "id"),
        ({"history_columns": ()}, "history_columns", ""),
        ({"history_columns": ("ts",)}, "history_columns", "ts"),
        ({"history_columns": ("valid_to",)}, "history_columns", "valid_to"),
    ],
)
def test_options_that_cannot_work_are_refused_at_construction_naming_the_value(
    options: dict[str, Any], option: str, value: Any
):
    with pytest.raises(HistoryOptionError) as raised:
        HistoryOptions("ts", primary_key=("id",), **options)
    assert (raised.value.option, raised.value.value) == (option, value)
    assert len(str(raised.value).splitlines()) == 1


def test_a_tracked_column_the_source_lacks_is_refused_in_one_line():
    options = HistoryOptions("ts", history_columns=("segmnet",))
    with pytest.raises(UnknownHistoryColumn, match="'segmnet' is not a source column") as raised:
        options.check_columns(["id", "ts", "segment", "__glue_incremental_deleted"])
    assert raised.value.available == ["id", "segment", "ts"]


def test_a_source_column_named_like_an_added_column_is_refused():
    with pytest.raises(HistoryColumnTaken, match="'is_current'") as raised:
        OPTIONS.check_columns(["id", "ts", "is_current"])
    assert raised.value.option == "is_current"
    assert "rename the source column (a load: with a --transform;" in str(raised.value)


def test_history_on_a_target_holding_latest_version_rows_is_refused():
    with pytest.raises(LatestVersionTarget, match="already holds latest-version rows") as raised:
        OPTIONS.check_target("s3://lake/customers", ["id", "ts", "segment", "valid_from"])
    assert raised.value.missing == ["is_current", "valid_to"]


def test_history_on_a_new_target_or_a_history_target_is_accepted():
    OPTIONS.check_target("s3://lake/customers", None)
    OPTIONS.check_target(
        "s3://lake/customers", ["id", "ts", "valid_from", "valid_to", "is_current"]
    )
