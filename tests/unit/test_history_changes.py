"""One key's change as upserts and deletes of one table's rows (``history.changes``), on plain
dicts: applying each run's changes to a table of rows keyed by identity gives the reference's
history whatever the batches; a delivery already stored changes nothing."""

from __future__ import annotations

from typing import Any

from glue_incremental.history import changes, groups
from glue_incremental.history.options import HistoryOptions
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.deep import IN_DEEP_RUN
from tests.harness.history_reference import Made, history

OPTIONS = HistoryOptions("ts", primary_key=("id",))
LAYOUT = groups.Layout(OPTIONS, ("id", "ts", "v", "part"), ("modified", "name"), ("part",))
Table = dict[tuple[Any, ...], dict[str, Any]]


def tagged(made: Made) -> dict[str, Any]:
    modified, name = made.delivery or (None, None)
    return {
        **made.row,
        "modified": modified,
        "name": name,
        groups.DELETED: made.deleted,
        groups.ROLE: groups.INCOMING,
    }


def run(table: Table, batch: list[Made]) -> tuple[Table, list[dict[str, Any]]]:
    """The table after one run's changes (as the MERGE applies them), and the changes."""
    out = [
        dict(zip((*LAYOUT.columns, changes.OP), row, strict=True))
        for row in changes.key_changes(LAYOUT, ((1,), [*table.values(), *map(tagged, batch)]))
    ]
    rows = [row for row in out if row[groups.ROLE] != groups.COUNTS]
    after = dict(table)
    for row in rows:
        identity = (row[groups.ROLE], row["valid_from"])
        if row[changes.OP] == changes.DELETE:
            assert identity in after  # a delete names a stored row
            del after[identity]
        else:
            after[identity] = {k: v for k, v in row.items() if k != changes.OP}
    assert len({(r[groups.ROLE], r["valid_from"]) for r in rows}) == len(rows)  # one per row
    return after, rows


def versions(table: Table) -> list[dict[str, Any]]:
    rows = [row for row in table.values() if row[groups.ROLE] == groups.VERSION]
    names = (*LAYOUT.data, *OPTIONS.added_columns.values())
    return sorted(({n: row[n] for n in names} for row in rows), key=lambda r: r["valid_from"])


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
def test_property_each_runs_changes_applied_give_the_reference_history(batches: list[list[Made]]):
    table: Table = {}
    for batch in batches:
        table, _ = run(table, batch)
    assert versions(table) == history([m for batch in batches for m in batch], ["id"], "ts")


def test_an_absorbed_delivery_is_stored_as_a_version_valid_for_no_time():
    table, _ = run({}, [Made({"id": 1, "ts": 1, "v": "x", "part": "a"}, (0, "f0"))])
    table, _ = run(table, [Made({"id": 1, "ts": 2, "v": "x", "part": "a"}, (1, "f1"))])

    absorbed = [row for row in table.values() if row[groups.ROLE] == groups.ABSORBED]

    assert [(r["ts"], r["valid_from"], r["valid_to"], r["is_current"]) for r in absorbed] == [
        (1, 1, 1, False)
    ]


def test_a_delivery_already_stored_changes_nothing():
    first = [Made({"id": 1, "ts": 1, "v": "x", "part": "a"}, (0, "f0"))]
    table, _ = run({}, first)

    _, rows = run(table, first)

    assert rows == []
