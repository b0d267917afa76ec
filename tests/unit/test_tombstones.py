"""The tombstone rule on plain Python data: batch by batch, a removed key's last version is
kept and ranks as a stored delete, so any cut of any history into batches (or runs) ends
where the full refresh does (``tests.harness.reference``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glue_incremental.tombstones import latest_kept
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import reference

ORDER = ("updated", "delivery")


def load_in_batches(batches: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The incremental rule: each batch merges with the stored rows and the tombstones."""
    stored: dict[int, Mapping[str, Any]] = {}
    buried: dict[int, Mapping[str, Any]] = {}
    for batch in batches:
        for key in {row["id"] for row in batch}:
            kept = stored.pop(key, None) or buried.pop(key, None)
            winner = latest_kept([row for row in batch if row["id"] == key], kept, ORDER)
            assert winner is not None
            (buried if winner["op"] == "D" else stored)[key] = winner
    return sorted((dict(row) for row in stored.values()), key=str)


def full_refresh(batches: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    delivered = [((row["delivery"],), row) for batch in batches for row in batch]
    latest = reference.latest_per_key(delivered, ["id"], "updated")
    return sorted(reference.without_deletes(latest, lambda row: row["op"] == "D"), key=str)


HISTORY = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 5), st.sampled_from("UUD")), max_size=12
)


@given(HISTORY, st.lists(st.integers(1, 4), max_size=6))
def test_property_batches_with_tombstones_end_where_the_full_refresh_does(drawn, cuts):
    rows = [
        {"id": key, "updated": updated, "op": op, "delivery": number}
        for number, (key, updated, op) in enumerate(drawn)
    ]
    batches, start = [], 0
    for size in [*cuts, len(rows)]:
        batches.append(rows[start : start + size])
        start += size

    assert load_in_batches(batches) == full_refresh([rows])


def test_an_older_version_after_a_delete_loses_to_its_tombstone_and_a_newer_one_wins():
    delete = {"id": 1, "updated": 30, "op": "D", "delivery": 2}
    older = {"id": 1, "updated": 20, "op": "U", "delivery": 3}
    newer = {"id": 1, "updated": 40, "op": "U", "delivery": 4}
    tie = {"id": 1, "updated": 30, "op": "U", "delivery": None}

    assert latest_kept([older], delete, ORDER) == delete
    assert latest_kept([newer], delete, ORDER) == newer
    assert latest_kept([tie], {**delete, "delivery": None}, ORDER) == tie  # read beats stored
