"""The common key of a history run, in the JVM: one new delivery after everything stored.

``history.groups.key_rows`` gives every key's new rows in Python, each row crossing into a
Python worker and back. Most keys of a run are simpler: one delivery, not a delete, whose
watermark is above every stored one of its key (a dimension's daily change). Its result
follows from the key's current version alone: a change of a tracked column closes it at the
delivery's watermark and opens a version; no change makes the delivery the version's
representative and absorbs the one it held. ``split`` computes exactly those rows (and
passes keys without a delivery through) with window functions over the key, and leaves
every other key to ``key_rows``, which the tests hold to the pure-Python reference.
Not taken: a dry run's numbered batches, tracked columns holding a map (not comparable in
Spark SQL). Design: ``docs/history.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from glue_incremental.history import groups
from glue_incremental.io.jvm_calls import quoted, select_sql, type_sql

# Helper columns, dropped before the rows leave ``split``.
_INCOMING = "__append_incoming"
_DELETE = "__append_delete"
_INCOMING_AT = "__append_incoming_at"
_STORED_AT = "__append_stored_at"
_CURRENT = "__append_current"
_CURRENT_AT = "__append_current_at"
_CURRENT_FROM = "__append_current_from"
_SIDE_ROW_FAULTS = "__append_side_row_faults"
# How many rows of each role a key has at a row's watermark.
_AT_WATERMARK = {
    groups.VERSION: "__append_versions_at",
    groups.REPRESENTATIVE: "__append_representatives_at",
    groups.ABSORBED: "__append_absorbed_at",
}
_INCOMING_TRACKED = "__append_incoming_tracked"
_CURRENT_TRACKED = "__append_current_tracked"
_CURRENT_DELIVERY = "__append_current_delivery"
_FAST = "__append_fast"
_FOR_CORE = "__append_for_core"
_OUT = "__append_out"
_ELEMENT = "__append_element"
_ROLE = quoted(groups.ROLE)
_IS_INCOMING = f"{_ROLE} = '{groups.INCOMING}'"


def usable(layout: groups.Layout, schema: StructType) -> bool:
    """Whether ``split`` can take keys of a run with this layout: no dry run's batch numbers,
    and no tracked column holding a map."""
    return layout.batch is None and not any(
        _has_map(schema[name].dataType) for name in tracked_columns(layout)
    )


def tracked_columns(layout: groups.Layout) -> tuple[str, ...]:
    """The columns whose change opens a version (``HistoryOptions.same_tracked``)."""
    options = layout.options
    if options.history_columns is not None:
        return tuple(options.history_columns)
    return tuple(name for name in layout.data if name != options.watermark_column)


def mark(tagged: DataFrame, layout: groups.Layout, key: Sequence[str]) -> DataFrame:
    """``tagged`` with what each row needs to know of its key's other rows, and whether the
    key is one ``split`` takes. ``tagged`` must hold each key's rows in one partition
    (repartitioned by ``key``): the windows add no shuffle. SQL text
    (``io.jvm_calls.select_sql``): a few py4j round trips, not hundreds."""
    keys = ", ".join(quoted(name) for name in key)
    window = f"OVER (PARTITION BY {keys})"
    # Before the key's own windows: the sort by (key, watermark) this window needs also
    # serves them, so Spark sorts once.
    at = f"OVER (PARTITION BY {keys}, {quoted(layout.options.watermark_column)})"
    alike = select_sql(
        tagged,
        [
            "*",
            *(
                f"count(CASE WHEN {_ROLE} = '{role}' THEN 1 END) {at} AS {name}"
                for role, name in _AT_WATERMARK.items()
            ),
        ],
    )
    counted = select_sql(alike, ["*", *_key_figures(layout, window)])
    fast = _fast(_consistent(layout, window))
    return select_sql(counted, ["*", _current_delivery(layout, window), f"{fast} AS {_FAST}"])


@dataclass(frozen=True)
class Split:
    """``split``'s halves, both read from ``held`` (persisted: the caller unpersists it)."""

    out: DataFrame
    rest: DataFrame
    held: DataFrame


def split(
    marked: DataFrame, layout: groups.Layout, schema: StructType, columns: Sequence[str]
) -> Split:
    """``mark``'s rows split: ``out`` the new rows (``schema``, ``Layout.columns``) of the
    keys without a delivery and of those with one new delivery after every stored row;
    ``rest`` the rows (``columns``) of every other key, for ``key_rows``, still in their
    partitions. One persisted projection holds both (a row of ``rest`` as it is), so the
    windows are computed once, and ``rest`` can be counted before the core is planned."""
    kinds = f"CASE WHEN {_FAST} THEN {_kinds(layout)} ELSE array({_AS_IT_IS}) END"
    rows = select_sql(marked, ["*", f"explode({kinds}) AS {_OUT}"])
    held = select_sql(rows, [*_rows(layout, schema), f"{_OUT} = {_AS_IT_IS} AS {_FOR_CORE}"])
    held = held.persist()
    out = select_sql(held.where(f"NOT {_FOR_CORE}"), [quoted(name) for name in schema.names])
    rest = select_sql(held.where(_FOR_CORE), [quoted(name) for name in columns])
    return Split(out, rest, held)


def _key_figures(layout: groups.Layout, window: str) -> list[str]:
    """What each row needs to know of its key's other rows."""
    options = layout.options
    watermark = quoted(options.watermark_column)
    tracked = _struct_of(tracked_columns(layout))
    incoming, current = _IS_INCOMING, _is_current(layout)
    versions, representatives, absorbed = _AT_WATERMARK.values()
    return [
        f"count(CASE WHEN {incoming} THEN 1 END) {window} AS {_INCOMING}",
        f"max(CASE WHEN {incoming} THEN {quoted(groups.DELETED)} END) {window} AS {_DELETE}",
        f"max(CASE WHEN {incoming} THEN {watermark} END) {window} AS {_INCOMING_AT}",
        f"max(CASE WHEN NOT {incoming} THEN {watermark} END) {window} AS {_STORED_AT}",
        f"count(CASE WHEN {current} THEN 1 END) {window} AS {_CURRENT}",
        f"max(CASE WHEN {current} THEN {watermark} END) {window} AS {_CURRENT_AT}",
        f"max(CASE WHEN {current} THEN {quoted(options.valid_from)} END) {window}"
        f" AS {_CURRENT_FROM}",
        f"first(CASE WHEN {incoming} THEN {tracked} END, true) {window} AS {_INCOMING_TRACKED}",
        f"first(CASE WHEN {current} THEN {tracked} END, true) {window} AS {_CURRENT_TRACKED}",
        # Two side rows of one role at one watermark, or a representative of no version.
        f"count(CASE WHEN {representatives} > 1 OR {absorbed} > 1"
        f" OR ({_ROLE} = '{groups.REPRESENTATIVE}' AND {versions} = 0)"
        f" THEN 1 END) {window} AS {_SIDE_ROW_FAULTS}",
    ]


def _current_delivery(layout: groups.Layout, window: str) -> str:
    """The current version's representative delivery: the stored one at its watermark."""
    if not layout.delivery:
        return f"NULL AS {_CURRENT_DELIVERY}"
    watermark = quoted(layout.options.watermark_column)
    at_current = f"{_ROLE} = '{groups.REPRESENTATIVE}' AND {watermark} = {_CURRENT_AT}"
    delivery = _struct_of(layout.delivery)
    return (
        f"first(CASE WHEN {at_current} THEN {delivery} END, true) {window} AS {_CURRENT_DELIVERY}"
    )


def _fast(consistent: str) -> str:
    """A key without a delivery, or with one new delivery after all it stores, which are
    ``consistent``."""
    appended = (
        f"{_INCOMING} = 1 AND NOT coalesce({_DELETE}, false)"
        f" AND ({_STORED_AT} IS NULL OR {_INCOMING_AT} > {_STORED_AT}) AND {consistent}"
    )
    return f"({_INCOMING} = 0 OR ({appended}))"


def _consistent(layout: groups.Layout, window: str) -> str:
    """Whether the stored rows ``split`` reads of a key with a delivery are the ones
    ``core.versions_of`` gives for its current version (what ``core.apply`` checks of that
    slice): none stored, or one current version and no other from its start on, its
    representative the latest stored delivery, opened at its earliest, every delivery it
    absorbed earlier than the representative, each at its own watermark, with its tracked
    values and no delete; and one representative delivery per version, at a version's
    watermark (as ``key_rows`` keeps them). Any other key goes to ``key_rows``, which
    refuses an inconsistent history (``InconsistentHistory``) or reopens a deleted key."""
    options = layout.options
    watermark = quoted(options.watermark_column)
    since = f"{_ROLE} = '{groups.ABSORBED}' AND {watermark} >= {_CURRENT_FROM}"
    tracked = _struct_of(tracked_columns(layout))
    deleted = f"coalesce({quoted(groups.DELETED)}, false)"
    differs = f"{deleted} OR {watermark} >= {_CURRENT_AT} OR NOT ({tracked} <=> {_CURRENT_TRACKED})"
    earliest = f"min(CASE WHEN {since} THEN {watermark} END) {window}"
    is_version = f"{_ROLE} = '{groups.VERSION}'"
    versions_since = f"{is_version} AND {quoted(options.valid_from)} >= {_CURRENT_FROM}"
    return (
        f"({_STORED_AT} IS NULL OR ({_CURRENT} = 1 AND {_CURRENT_AT} = {_STORED_AT}"
        f" AND {_SIDE_ROW_FAULTS} = 0"
        f" AND count(CASE WHEN {versions_since} THEN 1 END) {window} = 1"
        f" AND count(CASE WHEN {since} AND ({differs}) THEN 1 END) {window} = 0"
        f" AND least({_CURRENT_AT}, {earliest}) = {_CURRENT_FROM}))"
    )


# The output rows a marked row gives (``_kinds``), each built by ``_rows``'s projection;
# ``_AS_IT_IS``: a row of a key left to ``key_rows`` (every column its own value).
_UNCHANGED, _VERSION, _REPRESENTATIVE, _COUNTS, _ABSORBED, _CLOSED, _AS_IT_IS = range(7)


def _kinds(layout: groups.Layout) -> str:
    """The kinds of output row each marked row gives (an array of none to three). Small
    integers rather than the rows themselves: a projection per column builds them, which
    Spark compiles per column, where an array of whole rows makes one method too long to
    compile (Spark then interprets it, row by row)."""
    options = layout.options
    watermark = quoted(options.watermark_column)
    same = _same()
    delivered = " OR ".join(f"{quoted(name)} IS NOT NULL" for name in layout.delivery) or "false"
    current = _is_current(layout)
    gone = f"{_ROLE} = '{groups.REPRESENTATIVE}' AND {same} AND {watermark} = {_CURRENT_AT}"
    incoming = (
        f"filter(array({_VERSION}, CASE WHEN {delivered} THEN {_REPRESENTATIVE} END, {_COUNTS}),"
        f" {_ELEMENT} -> {_ELEMENT} IS NOT NULL)"
    )
    return (
        f"CASE WHEN {_INCOMING} = 0 THEN array({_UNCHANGED})"
        f" WHEN {_IS_INCOMING} THEN {incoming}"
        f" WHEN {current} AND {same} THEN array({_ABSORBED})"
        f" WHEN {current} THEN array({_CLOSED})"
        f" WHEN {gone} THEN CAST(array() AS ARRAY<INT>)"
        f" ELSE array({_UNCHANGED}) END"
    )


def _rows(layout: groups.Layout, schema: StructType) -> list[str]:
    """``schema``'s columns of the output row of each kind (``_OUT``), as ``key_rows``
    gives them: the marked row's own value unless the kind sets the column."""
    options = layout.options
    watermark = quoted(options.watermark_column)
    has_current = f"{_CURRENT} = 1"
    same = _same()
    data = set(layout.data)
    kept = {*options.primary_key, *layout.partition_by, options.watermark_column}
    nulls = dict.fromkeys(schema.names, "NULL")
    delivery_nulls = dict.fromkeys(layout.delivery, "NULL")
    added_nulls = dict.fromkeys(options.added_columns.values(), "NULL")
    role = groups.ROLE
    held = {name: f"{_CURRENT_DELIVERY}.{quoted(name)}" for name in layout.delivery}
    kinds: dict[int, dict[str, str]] = {
        _UNCHANGED: {groups.DELETED: f"coalesce({quoted(groups.DELETED)}, false)"},
        _VERSION: {
            **delivery_nulls,
            options.valid_from: f"CASE WHEN {same} THEN {_CURRENT_FROM} ELSE {watermark} END",
            options.valid_to: "NULL",
            options.is_current: "true",
            groups.DELETED: "false",
            role: f"'{groups.VERSION}'",
        },
        _REPRESENTATIVE: {
            **dict.fromkeys(data - kept, "NULL"),
            **added_nulls,
            groups.DELETED: "false",
            role: f"'{groups.REPRESENTATIVE}'",
        },
        _COUNTS: {
            **nulls,
            groups.DELETED: "false",
            role: f"'{groups.COUNTS}'",
            groups.OPENED: f"CASE WHEN {same} THEN 0 ELSE 1 END",
            groups.CLOSED: f"CASE WHEN {has_current} AND NOT {same} THEN 1 ELSE 0 END",
        },
        _ABSORBED: {**added_nulls, **held, groups.DELETED: "false", role: f"'{groups.ABSORBED}'"},
        _CLOSED: {
            options.valid_to: _INCOMING_AT,
            options.is_current: "false",
            groups.DELETED: "false",
        },
    }
    columns = []
    for field in schema.fields:
        name, type_ = quoted(field.name), type_sql(field.dataType)
        branches = " ".join(
            f"WHEN {kind} THEN CAST({given[field.name]} AS {type_})"
            for kind, given in kinds.items()
            if field.name in given
        )
        own = f"CAST({name} AS {type_})"
        columns.append(
            f"CASE {_OUT} {branches} ELSE {own} END AS {name}" if branches else f"{own} AS {name}"
        )
    return columns


def _same() -> str:
    """The delivery's tracked values are the current version's."""
    return f"({_CURRENT} = 1 AND {_INCOMING_TRACKED} <=> {_CURRENT_TRACKED})"


def _struct_of(names: Sequence[str]) -> str:
    return "struct(" + ", ".join(quoted(name) for name in names) + ")"


def _is_current(layout: groups.Layout) -> str:
    return f"({_ROLE} = '{groups.VERSION}' AND {quoted(layout.options.valid_to)} IS NULL)"


def _has_map(data_type: DataType) -> bool:
    if isinstance(data_type, MapType):
        return True
    if isinstance(data_type, ArrayType):
        return _has_map(data_type.elementType)
    if isinstance(data_type, StructType):
        return any(_has_map(field.dataType) for field in data_type.fields)
    return False
