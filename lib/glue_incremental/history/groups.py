"""One key's stored rows and the run's deliveries as plain dicts in, its new rows out.

The function the Spark path runs per key group on executors (``key_rows``): module-level,
its arguments plain data (``Layout``), so executors import it rather than unpickle driver
state. A key with no delivery in the run passes through unchanged; otherwise the stored
rows become ``core`` versions and deliveries, ``core.apply`` gives the change, and the
key's whole new state is returned (version rows, their representatives' deliveries, the
absorbed deliveries, one row of counts). A null value is an absent column (schema
evolution), so a row reads the same whatever batch wrote it. Design: ``docs/history.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from glue_incremental.history.core import Delivery, Version, apply, needed_from
from glue_incremental.history.errors import InconsistentHistory, NullWatermark
from glue_incremental.history.options import HistoryOptions

T = TypeVar("T")

# The hidden columns of a tagged row (never in a version row).
ROLE = "__history_role"
DELETED = "__history_deleted"
OPENED = "__history_opened"
CLOSED = "__history_closed"
# A dry run's batch number of an incoming row (``Layout.batch``): the batches a bounded run
# would commit one after the other, counted as such without writing any of them.
BATCH = "__history_batch"
# A row's role: a delivery of this run, a stored version row, the delivery of a stored
# version's representative (its key, watermark and delivery columns), a stored absorbed
# delivery, and one row of counts per changed key.
INCOMING, VERSION, REPRESENTATIVE, ABSORBED, COUNTS = (
    "incoming",
    "version",
    "representative",
    "absorbed",
    "counts",
)


@dataclass(frozen=True)
class Layout:
    """The columns of a tagged row: ``data`` (the source's, key and watermark among them),
    ``delivery`` (a file's modification time and name; none for JDBC), ``partition_by``,
    and ``batch`` (``BATCH``, a dry run's incoming rows numbered by the batch they are in)."""

    options: HistoryOptions
    data: tuple[str, ...]
    delivery: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    batch: str | None = None

    @cached_property
    def columns(self) -> tuple[str, ...]:
        """Every column of a tagged row, in order."""
        added = tuple(self.options.added_columns.values())
        numbered = (self.batch,) if self.batch else ()
        return (*self.data, *added, *self.delivery, *numbered, DELETED, ROLE, OPENED, CLOSED)

    @cached_property
    def _stored(self) -> tuple[str, ...]:
        # Every column but the four hidden ones, which ``out`` fills itself (run once per
        # output row: computed once per layout, per executor process).
        return self.columns[:-4]

    def values(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {name: row[name] for name in self.data if row.get(name) is not None}

    def delivery_of(self, row: Mapping[str, Any]) -> tuple[Any, ...] | None:
        order = tuple(row.get(name) for name in self.delivery)
        return order if any(part is not None for part in order) else None

    def delivered(self, row: Mapping[str, Any]) -> Delivery:
        return Delivery.of(
            self.values(row),
            self.options.watermark_column,
            delivery=self.delivery_of(row),
            deleted=bool(row.get(DELETED)),
        )

    def out(self, role: str, values: Mapping[str, Any]) -> tuple[Any, ...]:
        get = values.get
        return (*map(get, self._stored), get(DELETED, False), role, get(OPENED), get(CLOSED))


def by_key(
    per_key: Callable[[Layout, tuple[Any, Iterable[Any]]], Iterable[T]],
    layout: Layout,
    key_columns: tuple[str, ...],
    rows: Iterable[Any],
) -> Iterator[T]:
    """``per_key(layout, (key, its rows))`` for each key of ``rows``, which hold each key's
    rows next to each other (shuffled and sorted by key in the JVM: Python only walks them,
    no Python shuffle). Keys compare as Spark compares them, as the merge and the key index do."""
    pending: list[Any] = []
    current: tuple[Any, ...] = ()
    for row in rows:
        key = tuple(row[name] for name in key_columns)
        if pending and key != current:
            yield from per_key(layout, (current, pending))
            pending = []
        current = key
        pending.append(row)
    if pending:
        yield from per_key(layout, (current, pending))


def key_rows(layout: Layout, grouped: tuple[Any, Iterable[Any]]) -> Iterator[tuple[Any, ...]]:
    """A key's new rows (``Layout.columns`` order) from its tagged rows (Spark ``Row``s or
    dicts): unchanged without an incoming delivery, else after ``core.apply``, once per
    batch in the batches' order (``Layout.batch``; one batch without it), counts summed."""
    options, watermark = layout.options, layout.options.watermark_column
    batches: dict[int, list[Delivery]] = {}
    stored: list[Mapping[str, Any]] = []
    order: dict[Any, tuple[Any, ...] | None] = {}
    absorbed: list[Delivery] = []
    for tagged in grouped[1]:
        row = tagged.asDict() if hasattr(tagged, "asDict") else dict(tagged)
        role = row[ROLE]
        if role == INCOMING:
            if row.get(watermark) is None:
                raise NullWatermark({name: row.get(name) for name in options.primary_key})
            number = (row.get(layout.batch) or 0) if layout.batch else 0
            batches.setdefault(number, []).append(layout.delivered(row))
        elif role == VERSION:
            stored.append(row)
        elif role == REPRESENTATIVE:
            order[row[watermark]] = layout.delivery_of(row)
        else:
            absorbed.append(layout.delivered(row))
    if batches and any(row[options.valid_from] is None or row[watermark] is None for row in stored):
        key = {name: stored[0].get(name) for name in options.primary_key}
        raise InconsistentHistory(key, "a stored version without its watermark or valid_from")
    versions = [
        Version(
            row[options.valid_from],
            row[options.valid_to],
            Delivery.of(layout.values(row), watermark, delivery=order.get(row[watermark])),
        )
        for row in stored
    ]
    opened = closed = 0
    for number in sorted(batches):
        incoming = batches[number]
        since = needed_from(versions, min(delivery.watermark for delivery in incoming))
        change = apply(
            [version for version in versions if version.valid_from >= since],
            [delivery for delivery in absorbed if delivery.watermark >= since],
            incoming,
            options,
        )
        replaced, released = set(change.replace), set(change.release)
        versions = [v for v in versions if v not in replaced] + list(change.write)
        absorbed = [d for d in absorbed if d not in released] + list(change.absorb)
        opened, closed = opened + change.opened, closed + change.closed
    if batches:
        yield layout.out(COUNTS, {OPENED: opened, CLOSED: closed})
    yield from _state(layout, versions, absorbed)


def _state(
    layout: Layout, versions: list[Version], absorbed: list[Delivery]
) -> Iterator[tuple[Any, ...]]:
    """The rows that store ``versions`` and ``absorbed``."""
    options = layout.options
    keep = {*options.primary_key, *layout.partition_by, options.watermark_column}
    for version in versions:
        yield layout.out(VERSION, version.as_row(options))
        representative = version.representative
        if layout.delivery and representative.delivery is not None:
            values = {k: v for k, v in representative.row if k in keep}
            parts = dict(zip(layout.delivery, representative.delivery, strict=True))
            yield layout.out(REPRESENTATIVE, {**values, **parts})
    for delivery in absorbed:
        parts = dict(zip(layout.delivery, delivery.delivery or (), strict=False))
        yield layout.out(ABSORBED, {**delivery.values, **parts, DELETED: delivery.deleted})
