"""SCD type 2 on plain rows: a key's deliveries give its versions, whatever their order.

Versions are one function of the set of a key's deliveries (``versions_of``): one winner
per watermark by the load's tie rule, then runs of equal tracked values, closed by the
next change or a delete. ``apply`` is the incremental step the Spark path applies per key
group: stored versions and absorbed deliveries plus the run's deliveries in, the versions
to write and the ones they replace out. No Spark, no I/O. Rules: ``docs/history.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glue_incremental.history.errors import InconsistentHistory, NullWatermark
from glue_incremental.history.options import HistoryOptions
from glue_incremental.history.values import canonical, canonical_row


@dataclass(frozen=True, eq=False)
class Delivery:
    """One source row of a key: its values (the watermark column among them), its delivery
    order (a file's modification time, then its name; ``None``: unknown, the lowest) and
    whether it is a delete. Hashable: the same row delivered twice is one delivery, its
    values compared as ``history.values.canonical`` says (as read before or after a widening,
    NaN equal to NaN, arrays and maps by content)."""

    row: tuple[tuple[str, object], ...]
    watermark: Any
    delivery: tuple[object, ...] | None = None
    deleted: bool = False

    @classmethod
    def of(
        cls,
        values: Mapping[str, object],
        watermark_column: str,
        *,
        delivery: Sequence[object] | None = None,
        deleted: bool = False,
    ) -> Delivery:
        return cls(
            tuple(sorted(values.items())),
            values.get(watermark_column),
            None if delivery is None else tuple(delivery),
            deleted,
        )

    @property
    def values(self) -> dict[str, object]:
        return dict(self.row)

    def __post_init__(self) -> None:
        # Computed once: every delivery is hashed and compared (functools.cached_property
        # takes a lock per read on Python 3.11). Not a field: repr and pickling ignore it.
        identity = (canonical_row(self.row), canonical(self.watermark), self.delivery, self.deleted)
        self.__dict__["_identity"] = identity

    _identity: tuple[Any, ...] = field(init=False, repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Delivery) and self._identity == other._identity

    def __hash__(self) -> int:
        return hash(self._identity)


@dataclass(frozen=True)
class Version:
    """A version row: ``valid_from`` to ``valid_to`` (``None`` while current), holding the
    values of ``representative``, the latest delivery of the run of equal ones it covers."""

    valid_from: Any
    valid_to: Any
    representative: Delivery

    @property
    def is_current(self) -> bool:
        return self.valid_to is None

    def as_row(self, options: HistoryOptions) -> dict[str, object]:
        """The row a history target stores: the values and the three added columns."""
        return {
            **self.representative.values,
            options.valid_from: self.valid_from,
            options.valid_to: self.valid_to,
            options.is_current: self.is_current,
        }


@dataclass(frozen=True)
class Change:
    """What one run does to one key: ``write`` replaces ``replace`` (versions compared
    whole: one whose ``valid_to`` moves is in both, old and new), and the absorbed
    deliveries kept beside the versions gain ``absorb`` and lose ``release``."""

    write: tuple[Version, ...] = ()
    replace: tuple[Version, ...] = ()
    absorb: tuple[Delivery, ...] = ()
    release: tuple[Delivery, ...] = ()

    @property
    def opened(self) -> int:
        """Versions written that begin where no replaced one began (``VersionsOpened``)."""
        before = {version.valid_from for version in self.replace}
        return sum(version.valid_from not in before for version in self.write)

    @property
    def closed(self) -> int:
        """Versions written with an end that were current or absent before
        (``VersionsClosed``)."""
        current = {version.valid_from for version in self.replace if version.is_current}
        ended = {version.valid_from for version in self.replace if not version.is_current}
        return sum(
            not version.is_current
            and (version.valid_from in current or version.valid_from not in ended)
            for version in self.write
        )

    @property
    def empty(self) -> bool:
        return not (self.write or self.replace or self.absorb or self.release)


def tie_digest(delivery: Delivery) -> str:
    """The last step of the tie rule: the SHA-256 of the row's canonical text (its delete flag
    and sorted items, values as ``history.values.canonical`` gives them, as ``repr``).
    Deterministic, the same in every process, and the same before and after a widening."""
    text = repr((delivery.deleted, delivery._identity[0]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rank(delivery: Delivery) -> tuple[object, ...]:
    # Spark's desc_nulls_last per delivery column: a null sorts below every value.
    if delivery.delivery is None:
        order: tuple[object, ...] = (False,)
    else:
        order = (True, tuple((part is not None, part) for part in delivery.delivery))
    return (*order, tie_digest(delivery))


def winners(deliveries: Iterable[Delivery], options: HistoryOptions) -> dict[Any, Delivery]:
    """One delivery per watermark, the greatest by the tie rule; a null watermark refused."""
    best: dict[Any, Delivery] = {}
    for delivery in deliveries:
        if delivery.watermark is None:
            raise NullWatermark(_key(delivery, options))
        held = best.get(delivery.watermark)
        if held is None or _rank(delivery) > _rank(held):
            best[delivery.watermark] = delivery
    return best


def versions_of(
    deliveries: Iterable[Delivery], options: HistoryOptions
) -> tuple[list[Version], list[Delivery]]:
    """A key's versions from its deliveries, oldest first, and the winners no version row
    shows (absorbed upserts and every delete): together, everything the next run needs."""
    versions: list[Version] = []
    absorbed: list[Delivery] = []
    start: Any = None
    held: Delivery | None = None
    for watermark, delivery in sorted(winners(deliveries, options).items()):
        if delivery.deleted:
            absorbed.append(delivery)
            if held is not None:
                versions.append(Version(start, watermark, held))
                held = None
        elif held is not None and options.same_tracked(delivery.values, held.values):
            absorbed.append(held)
            held = delivery
        else:
            if held is not None:
                versions.append(Version(start, watermark, held))
            start, held = watermark, delivery
    if held is not None:
        versions.append(Version(start, None, held))
    return versions, absorbed


def needed_from(versions: Sequence[Version], earliest: Any) -> Any:
    """From which watermark a run whose earliest delivery of a key is at ``earliest`` must
    read the key's stored versions (by ``valid_from``) and absorbed deliveries (by
    watermark): the version holding ``earliest`` or, when it begins there, the one before
    it (a late winner there can merge the two). Earlier versions cannot change."""
    starts = sorted(version.valid_from for version in versions)
    before = [start for start in starts if start <= earliest]
    if not before:
        return earliest
    if before[-1] < earliest or len(before) == 1:
        return before[-1]
    return before[-2]


def apply(
    versions: Sequence[Version],
    absorbed: Sequence[Delivery],
    incoming: Iterable[Delivery],
    options: HistoryOptions,
) -> Change:
    """One key's change for one run: its stored ``versions`` and ``absorbed`` deliveries
    (all of them, or all from ``needed_from`` on) and the run's ``incoming`` deliveries.

    The result is the history ``versions_of`` gives for every delivery ever made, whatever
    the batches and their order; an incoming delivery already stored changes nothing.
    Stored versions that do not follow from the stored deliveries are refused
    (``InconsistentHistory``) before anything is computed on them."""
    stored = [*(version.representative for version in versions), *absorbed]
    expected, kept = versions_of(stored, options)
    if sorted(expected, key=_start) != sorted(versions, key=_start) or set(kept) != set(absorbed):
        key = _key(stored[0], options) if stored else {}
        raise InconsistentHistory(key, f"{len(versions)} versions, {len(absorbed)} absorbed")
    after, now_absorbed = versions_of([*stored, *incoming], options)
    before_set, after_set = set(versions), set(after)
    return Change(
        write=tuple(version for version in after if version not in before_set),
        replace=tuple(version for version in expected if version not in after_set),
        absorb=tuple(sorted(set(now_absorbed) - set(absorbed), key=_watermark)),
        release=tuple(sorted(set(absorbed) - set(now_absorbed), key=_watermark)),
    )


def _start(version: Version) -> Any:
    return version.valid_from


def _watermark(delivery: Delivery) -> Any:
    return delivery.watermark


def _key(delivery: Delivery, options: HistoryOptions) -> dict[str, object]:
    values = delivery.values
    return {name: values.get(name) for name in options.primary_key} or values
