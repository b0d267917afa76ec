"""The tombstone rule on plain Python data: batch by batch, a removed key's last version is
kept and ranks as a stored delete, so any cut of any history into batches (or runs) ends
where the full refresh does (``tests.harness.reference``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glue_incremental.deletes.tombstones import latest_kept
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


# -- a reconcile's delete of a snapshot source: an absence, not a version ---------------------

UNKNOWN = -1  # the removed row's delivery as the merge ranks it: earliest


def reconcile_in_batches(
    snapshots: Sequence[Sequence[Mapping[str, Any]]], events: Sequence[tuple[str, int]]
) -> list[dict[str, Any]]:
    """The incremental rule (``deletes.tombstones.absent_versions``): each batch reads the next files
        (in delivery order), reconciling against the newest snapshot landed; a removed key stays
        out holding its greatest version until a version from a later delivery than the snapshot
        that lacked it is read. ``events``: ``("land", 0)``, or a batch of at most ``files``
    files, ``("batch", files)`` or ``("reconcile", files)``."""
    stored: dict[int, Mapping[str, Any]] = {}
    gone: dict[int, tuple[Mapping[str, Any], int]] = {}  # key: (greatest version, gone at)
    landed = read = 0
    for event, files in events:
        if event == "land":
            landed += 1
            continue
        end = min(landed, read + files)
        batch = [row for rows in snapshots[read:end] for row in rows]
        read = end
        newest = {row["id"] for row in snapshots[landed - 1]}
        absent = {key: landed - 1 for key in stored if key not in newest and event == "reconcile"}
        for key in {row["id"] for row in batch} | set(absent):
            versions = [row for row in batch if row["id"] == key]
            removed, gone_at = gone.pop(key, (None, None))
            kept = stored.pop(key, None)
            if key in absent:
                removed, gone_at = kept, absent[key]
            candidates = [*versions, *([kept] if kept else [])]
            if removed is not None:
                candidates.append({**removed, "delivery": UNKNOWN})
            winner = latest_kept(candidates, None, ORDER)
            assert winner is not None
            back = gone_at is None or any(row["delivery"] > gone_at for row in versions)
            if back:
                stored[key] = winner
            else:
                gone[key] = (winner, gone_at)
    return sorted((dict(row) for row in stored.values()), key=str)


SNAPSHOTS = st.lists(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 4)), min_size=1, max_size=3),
    min_size=1,
    max_size=6,
)


@given(SNAPSHOTS, st.lists(st.integers(1, 3), max_size=6), st.randoms(use_true_random=False))
def test_property_snapshots_reconciled_in_batches_end_where_the_full_refresh_does(
    drawn, sizes, random
):
    snapshots = [
        list(
            {
                key: {"id": key, "updated": updated, "delivery": number, "value": f"{number}.{key}"}
                for key, updated in rows
            }.values()
        )
        for number, rows in enumerate(drawn)
    ]
    events: list[tuple[str, int]] = []
    landed = 0
    for size in sizes:  # batches between landings, reading files landed so far
        while landed < len(snapshots) and (landed == 0 or random.random() < 0.5):
            events.append(("land", 0))
            landed += 1
        events.append((random.choice(["batch", "reconcile"]), size))
    events += [("land", 0)] * (len(snapshots) - landed)
    events += [("batch", len(snapshots)), ("reconcile", 0)]  # the rest, a closing reconcile

    expected = reference.latest_snapshot_merged(
        [[{k: v for k, v in row.items() if k != "delivery"} for row in rows] for rows in snapshots],
        ["id"],
        "updated",
    )
    seen = [
        {k: v for k, v in row.items() if k != "delivery"}
        for row in reconcile_in_batches(snapshots, events)
    ]
    assert sorted(seen, key=str) == sorted(expected, key=str)
