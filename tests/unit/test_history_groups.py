"""What the Spark path runs per key group (``history.groups.key_rows``), on plain dicts: the
rows it stores, read back as the next run's input, give the reference's history whatever the
batches; a key without a delivery in the run passes through unchanged."""

from __future__ import annotations

from typing import Any

from glue_incremental.history import groups
from glue_incremental.history.options import HistoryOptions
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.history_reference import Made, history
from tests.harness.history_rows import incoming_row

OPTIONS = HistoryOptions("ts", primary_key=("id",))
LAYOUT = groups.Layout(OPTIONS, ("id", "ts", "v", "part"), ("modified", "name"), ("part",))
STORED = (groups.VERSION, groups.REPRESENTATIVE, groups.ABSORBED)


def run(stored: list[dict[str, Any]], batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [
        dict(zip(LAYOUT.columns, row, strict=True))
        for row in groups.key_rows(LAYOUT, ((1,), [*stored, *batch]))
    ]
    return [row for row in out if row[groups.ROLE] in STORED]


def versions(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = [row for row in stored if row[groups.ROLE] == groups.VERSION]
    return sorted(
        (
            {name: row[name] for name in (*LAYOUT.data, *OPTIONS.added_columns.values())}
            for row in rows
        ),
        key=lambda row: row["valid_from"],
    )


made = st.builds(
    lambda ts, v, part, delivery, deleted: Made(
        {"id": 1, "ts": ts, "v": v, "part": part}, delivery, deleted
    ),
    ts=st.integers(0, 3),
    v=st.sampled_from(["x", "x", "y"]),
    part=st.sampled_from(["a", "b"]),
    delivery=st.sampled_from([(0, "f0"), (1, "f1"), (1, "f2")]),
    deleted=st.sampled_from([False, False, True]),
)


@settings(max_examples=1000 if IN_DEEP_RUN else 150)
@given(st.lists(st.lists(made, min_size=1, max_size=4), min_size=1, max_size=4))
def test_property_stored_rows_read_back_give_the_reference_history(batches: list[list[Made]]):
    stored: list[dict[str, Any]] = []
    for batch in batches:
        stored = run(
            stored, [incoming_row(dict(m.row), m.delivery, deleted=m.deleted) for m in batch]
        )
    expected = history([m for batch in batches for m in batch], ["id"], "ts")
    assert versions(stored) == expected


def test_a_key_without_a_delivery_in_the_run_passes_through_unchanged():
    stored = run([], [incoming_row({"id": 1, "ts": 1, "v": "x", "part": "a"}, (0, "f0"))])
    stored = run(stored, [incoming_row({"id": 1, "ts": 2, "v": "x", "part": "a"}, (1, "f1"))])

    again = run(stored, [])

    assert sorted(map(repr, again)) == sorted(map(repr, stored))
    assert all(row[groups.ROLE] != groups.COUNTS for row in again)


def test_rows_sorted_by_key_are_given_to_the_step_one_key_at_a_time():
    rows = [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}, {"id": 2, "v": "c"}, {"id": None, "v": "d"}]
    seen = list(
        groups.by_key(
            lambda layout, group: [(group[0], [r["v"] for r in group[1]])], LAYOUT, ("id",), rows
        )
    )
    assert seen == [((1,), ["a", "b"]), ((2,), ["c"]), ((None,), ["d"])]


def test_no_rows_give_no_keys():
    assert list(groups.by_key(groups.key_rows, LAYOUT, ("id",), [])) == []
