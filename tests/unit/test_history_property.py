"""The central property of history targets, on the pure core: any deliveries (inserts,
updates, deletes, re-inserts, ties, a column only some have), split into any batches
applied in any order (late and duplicate deliveries), reading only what ``needed_from``
says, give exactly the independent reference's history (tests/harness/history_reference.py),
each version once."""

from __future__ import annotations

from typing import Any

from glue_incremental.history.core import Delivery, Version, apply, needed_from
from glue_incremental.history.options import HistoryOptions
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.history_reference import Made, history

KEY, WATERMARK = "id", "ts"

made_strategy = st.builds(
    lambda key, ts, delivery, deleted, v, note, tier: Made(
        {KEY: key, WATERMARK: ts, "v": v, "note": note, **tier}, delivery, deleted
    ),
    key=st.sampled_from([1, 1, 1, 2]),
    ts=st.integers(0, 3),
    # Files (modification time, name) or a source without delivery (JDBC), a null part too.
    delivery=st.sampled_from([None, (0, "a"), (1, "a"), (1, "b"), (1, None), (2, "a")]),
    # Few deletes and few distinct rows: runs of equal rows, and ties that merge or split them.
    deleted=st.sampled_from([False, False, True]),
    v=st.integers(0, 1),
    note=st.sampled_from(["x", "x", "y"]),
    # Schema evolution: a column some deliveries have (null or not) and others lack.
    tier=st.sampled_from([*[{}] * 6, {"tier": None}, {"tier": "gold"}]),
)


def same_place(placed: Made, other: Made) -> Made:
    """``other`` moved to the key and watermark of ``placed``."""
    return Made(
        {**other.row, KEY: placed.row[KEY], WATERMARK: placed.row[WATERMARK]},
        other.delivery,
        other.deleted,
    )


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[list[Made], list[list[Made]]]:
    """Deliveries, and the batches they arrive in: any split, any order, some twice."""
    made = draw(st.lists(made_strategy, max_size=10))
    if made:  # rows at a watermark already delivered for the key: ties that merge or split
        made += draw(
            st.lists(st.builds(same_place, st.sampled_from(made), made_strategy), max_size=4)
        )
    count = draw(st.integers(1, 3))
    batches: list[list[Made]] = [[] for _ in range(count)]
    for one in made:
        batches[draw(st.integers(0, count - 1))].append(one)
        if draw(st.integers(0, 5)) == 0:  # delivered again, in any batch
            batches[draw(st.integers(0, count - 1))].append(one)
    return made, draw(st.permutations(batches))


def as_delivery(one: Made) -> Delivery:
    return Delivery.of(one.row, WATERMARK, delivery=one.delivery, deleted=one.deleted)


def run_batches(
    batches: list[list[Made]], options: HistoryOptions
) -> dict[Any, tuple[list[Version], list[Delivery]]]:
    store: dict[Any, tuple[list[Version], list[Delivery]]] = {}
    for batch in batches:
        keys = sorted({one.row[KEY] for one in batch})
        for key in keys:
            incoming = [as_delivery(one) for one in batch if one.row[KEY] == key]
            versions, absorbed = store.setdefault(key, ([], []))
            since = needed_from(versions, min(d.watermark for d in incoming))
            change = apply(
                [version for version in versions if version.valid_from >= since],
                [delivery for delivery in absorbed if delivery.watermark >= since],
                incoming,
                options,
            )
            for version in change.replace:
                versions.remove(version)  # fails if it was not stored
            for delivery in change.release:
                absorbed.remove(delivery)
            versions.extend(change.write)
            absorbed.extend(change.absorb)
            assert len(set(versions)) == len(versions) and len(set(absorbed)) == len(absorbed)
    return store


@settings(max_examples=2000 if IN_DEEP_RUN else 200)
@given(arrivals(), st.sampled_from([None, ("v",)]))
def test_property_any_batches_in_any_order_give_the_reference_history_each_version_once(
    arrived: tuple[list[Made], list[list[Made]]], tracked: tuple[str, ...] | None
):
    made, batches = arrived
    options = HistoryOptions(WATERMARK, history_columns=tracked, primary_key=(KEY,))
    store = run_batches(batches, options)
    rows = [
        version.as_row(options)
        for key in sorted(store)
        for version in sorted(store[key][0], key=lambda version: version.valid_from)
    ]
    assert rows == history(made, [KEY], WATERMARK, tracked)
