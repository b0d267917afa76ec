"""The history run's common keys, computed in the JVM (``history_appends.split``), give the rows
``history.groups.key_rows`` gives in Python; every other key is left to it."""

from __future__ import annotations

from collections import Counter

import pytest
from glue_incremental.history import groups
from glue_incremental.history.errors import InconsistentHistory
from glue_incremental.history.options import HistoryOptions
from glue_incremental.targets.parquet import history_appends
from glue_incremental.targets.versions import tagged_schema

pytestmark = pytest.mark.spark

DATA = ("id", "part", "updated", "value", "score", "note")
DELIVERY = ("delivered_ms", "delivered_file")
SOURCE_DDL = (
    "id INT, part STRING, updated BIGINT, value STRING, score DOUBLE, note STRING, "
    "delivered_ms BIGINT, delivered_file STRING"
)


def _layout(tracked: tuple[str, ...] | None) -> groups.Layout:
    options = HistoryOptions("updated", tracked, "valid_from", "valid_to", "is_current", ("id",))
    return groups.Layout(options, DATA, DELIVERY, ("part",))


def _version(key, start, end, value, score=1.0, note="n"):
    return {
        "id": key,
        "part": "p",
        "updated": start,
        "value": value,
        "score": score,
        "note": note,
        "valid_from": start,
        "valid_to": end,
        "is_current": end is None,
        groups.ROLE: groups.VERSION,
    }


def _representative(key, at, ms):
    return {"id": key, "part": "p", "updated": at, "delivered_ms": ms, "delivered_file": f"f{ms}"}


def _delivery(key, at, value, score=1.0, note="n", deleted=False, ms=None):
    return {
        "id": key,
        "part": "p",
        "updated": at,
        "value": value,
        "score": score,
        "note": note,
        "delivered_ms": ms if ms is not None else at * 10,
        "delivered_file": f"f{ms if ms is not None else at * 10}",
        groups.DELETED: deleted,
        groups.ROLE: groups.INCOMING,
    }


def _stored(role, row):
    return {**row, groups.ROLE: role}


def _stored_delivery(key, at, value, **columns):
    return _stored(groups.ABSORBED, _delivery(key, at, value, **columns))


R = groups.REPRESENTATIVE

# Stored rows no run writes (a version's tracked columns changed since, part of the target
# lost or edited): the JVM leaves the key to Python, which refuses it.
INCONSISTENT = [
    (13, [_version(13, 5, 10, "z")]),  # the current version missing
    (14, [_version(14, 10, None, "a"), _stored_delivery(14, 20, "a")]),  # a delivery after it
    (  # a delivery absorbed into it that differs in a tracked column
        15,
        [
            {**_version(15, 10, None, "a"), "updated": 20},
            _stored_delivery(15, 10, "a"),
            _stored_delivery(15, 12, "x"),
        ],
    ),
    (16, [_version(16, 10, None, "a"), _version(16, 30, 40, "b")]),  # a version after it
    (17, [{**_version(17, 10, None, "a"), "updated": 12}]),  # opened before its first delivery
    (  # a delete absorbed into it
        18,
        [
            {**_version(18, 10, None, "a"), "updated": 20},
            _stored_delivery(18, 10, "a"),
            _stored_delivery(18, 12, "a", deleted=True),
        ],
    ),
    (19, [_version(19, 10, 15, "a"), _version(19, 10, None, "a")]),  # a closed twin of it
    (  # a delivery absorbed at its representative's watermark
        20,
        [
            {**_version(20, 10, None, "a"), "updated": 20},
            _stored_delivery(20, 10, "a"),
            _stored_delivery(20, 20, "a", ms=999),
            _stored(R, _representative(20, 20, 200)),
        ],
    ),
    (  # two deliveries absorbed at one watermark
        21,
        [
            {**_version(21, 10, None, "a"), "updated": 20},
            _stored_delivery(21, 10, "a"),
            _stored_delivery(21, 10, "a", ms=555),
        ],
    ),
    (24, [{**_version(24, 10, None, "a"), "valid_from": None}]),  # its start lost
]


# (key, its rows, whether the JVM takes it)
KEYS = [
    (1, [_delivery(1, 10, "a")], True),  # a new key
    (
        2,  # a tracked change: the current version closes, one opens
        [
            _version(2, 10, None, "a"),
            _stored(groups.REPRESENTATIVE, _representative(2, 10, 100)),
            _delivery(2, 20, "b"),
        ],
        True,
    ),
    (
        3,  # no tracked change (an untracked one): the delivery becomes the representative
        [
            _version(3, 10, None, "a"),
            _stored(groups.REPRESENTATIVE, _representative(3, 10, 100)),
            _delivery(3, 20, "a", note="changed"),
        ],
        True,
    ),
    (
        4,  # after a delete (no current version to check it against): Python
        [
            _version(4, 10, 15, "a"),
            _stored(groups.REPRESENTATIVE, _representative(4, 10, 100)),
            _stored(groups.ABSORBED, {**_delivery(4, 15, "a", deleted=True), groups.DELETED: True}),
            _delivery(4, 20, "a"),
        ],
        False,
    ),
    (5, [_version(5, 10, None, "a")], True),  # no delivery: passed through
    (
        6,  # NaN is NaN: no change, and no representative delivery stored for the version
        [_version(6, 10, None, "a", score=float("nan")), _delivery(6, 20, "a", float("nan"))],
        True,
    ),
    (
        7,  # earlier versions kept as they are
        [
            _version(7, 5, 10, "z"),
            _stored(groups.REPRESENTATIVE, _representative(7, 5, 50)),
            _version(7, 10, None, "a"),
            _stored(groups.REPRESENTATIVE, _representative(7, 10, 100)),
            _delivery(7, 20, "b"),
        ],
        True,
    ),
    (8, [_version(8, 30, None, "a"), _delivery(8, 20, "b")], False),  # late: Python
    (9, [_delivery(9, 10, "a"), _delivery(9, 20, "b")], False),  # two deliveries: Python
    (10, [_version(10, 10, None, "a"), _delivery(10, 20, "a", deleted=True)], False),  # delete
    (11, [_version(11, 10, None, "a"), _delivery(11, 10, "b")], False),  # a tie: Python
    (
        12,  # the current version's first delivery absorbed by a later unchanged one
        [
            {**_version(12, 10, None, "a"), "updated": 15},
            _stored_delivery(12, 10, "a"),
            _delivery(12, 20, "b"),
        ],
        True,
    ),
    *((key, [*rows, _delivery(key, 50, "b")], False) for key, rows in INCONSISTENT),
    (  # a representative delivery of no version: Python drops it
        22,
        [
            _version(22, 10, None, "a"),
            _stored(R, _representative(22, 10, 100)),
            _stored(R, _representative(22, 7, 70)),
            _delivery(22, 50, "b"),
        ],
        False,
    ),
    (  # two representative deliveries of one version: Python keeps the one it reads last
        23,
        [
            _version(23, 10, None, "a"),
            _stored(R, _representative(23, 10, 100)),
            _stored(R, _representative(23, 10, 90)),
            _delivery(23, 50, "a"),
        ],
        False,
    ),
]


@pytest.mark.parametrize("tracked", [None, ("value", "score")], ids=["every column", "tracked"])
def test_the_common_keys_computed_in_the_jvm_are_the_rows_python_computes(spark, tracked):
    layout = _layout(tracked)
    source = spark.createDataFrame([], SOURCE_DDL)
    schema = tagged_schema(source, layout)
    rows = [
        tuple(row.get(name, False if name == groups.DELETED else None) for name in schema.names)
        for _, key_rows, _ in KEYS
        for row in key_rows
    ]
    tagged = spark.createDataFrame(rows, schema).repartition(2, "id")

    marked = history_appends.mark(tagged, layout, ("id",))
    halves = history_appends.split(marked, layout, schema, tagged.columns)
    out, rest = halves.out, halves.rest

    fast = {key for key, _, in_jvm in KEYS if in_jvm}
    assert {row["id"] for row in rest.collect()} == {key for key, _, _ in KEYS} - fast
    python_rows = [dict(zip(schema.names, row, strict=True)) for row in rows if row[0] in fast]
    python_rows.sort(key=lambda row: row["id"])
    expected = groups.by_key(groups.key_rows, layout, ("id",), python_rows)
    assert Counter(repr(tuple(row)) for row in out.collect()) == Counter(map(repr, expected))


@pytest.mark.parametrize("key, rows", INCONSISTENT, ids=[str(key) for key, _ in INCONSISTENT])
def test_python_refuses_the_stored_histories_the_jvm_leaves_to_it(key, rows):
    layout = _layout(None)
    names = (*layout.columns,)
    plain = [{name: row.get(name) for name in names} for row in [*rows, _delivery(key, 50, "b")]]

    with pytest.raises(InconsistentHistory):
        list(groups.by_key(groups.key_rows, layout, ("id",), plain))
