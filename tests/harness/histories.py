"""Hypothesis strategies for delivery histories: what lands in a source, and when the job runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Step = tuple[str, list[dict[str, Any]] | None, int]


@st.composite
def delivery_histories(
    draw: Any,
    batches: st.SearchStrategy[list[dict[str, Any]]],
    first: list[dict[str, Any]],
    *,
    min_steps: int,
    max_steps: int,
    late_redeliveries: bool = False,
) -> list[Step]:
    """Steps ``(kind, rows, late)``: ``first`` lands, then batches and runs; the last step runs.

    A batch is new (drawn from ``batches``), late (``late`` 1: stamped before the previous run)
    or a redelivery of an earlier batch (late too, sometimes, when ``late_redeliveries``).
    """
    steps: list[Step] = [("batch", first, 0)]
    delivered = [first]
    for _ in range(draw(st.integers(min_value=min_steps, max_value=max_steps))):
        kind = draw(st.sampled_from(["batch", "batch", "late", "duplicate", "run"]))
        if kind == "duplicate":
            late = draw(st.integers(0, 1)) if late_redeliveries else 0
            steps.append(("batch", draw(st.sampled_from(delivered)), late))
        elif kind == "run":
            steps.append(("run", None, 0))
        else:
            batch = draw(batches)
            delivered.append(batch)
            steps.append(("batch", batch, 1 if kind == "late" else 0))
    steps.append(("run", None, 0))
    return steps


# -- the combined history: source changes, schema changes, deletes, batches and crashes --------

OPTIONAL_COLUMNS = ("value", "discount")
INT_MAX = 2**31 - 1


def declared_schema(columns: tuple[str, ...], widened: bool, *, with_marker: bool) -> str:
    """``--source_schema``: the base columns (``op``, the delete marker, when ``with_marker``),
    ``qty`` int or bigint once ``widened``, then ``columns`` of ``OPTIONAL_COLUMNS``."""
    extra = {"value": "value string", "discount": "discount bigint"}
    return ", ".join(
        ["id bigint", "part string", "updated bigint"]
        + (["op string"] if with_marker else [])
        + ["qty bigint" if widened else "qty int"]
        + [extra[name] for name in columns]
    )


@dataclass(frozen=True)
class Land:
    """One JSON-lines file landed in the source."""

    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class Run:
    """One run: batches of at most ``batch_files`` files (None: unbounded), crashing at its
    ``crash_at``-th hook point (None: no crash; past the run's last point: no crash either)."""

    batch_files: int | None
    crash_at: int | None


@dataclass(frozen=True)
class Epoch:
    """Steps under one declared source schema: ``--source_schema`` is ``base`` plus ``columns``
    (of ``OPTIONAL_COLUMNS``), ``qty`` bigint once ``widened``. An epoch ends with a run that
    does not crash, so every file it landed is read under its schema."""

    columns: tuple[str, ...]
    widened: bool
    steps: list[Land | Run]

    def source_schema(self) -> str:
        return declared_schema(self.columns, self.widened, with_marker=True)

    def declared(self) -> list[str]:
        return ["id", "part", "updated", "op", "qty", *self.columns]


@st.composite
def _rows(draw: Any, columns: tuple[str, ...], widened: bool) -> list[dict[str, Any]]:
    drawn = draw(
        st.lists(
            st.tuples(
                st.integers(1, 4),  # id: few keys, so versions, deletes and re-inserts meet
                st.sampled_from("ab"),  # part: keys move between partitions
                st.integers(1, 12),  # updated: ties and older versions arriving later
                st.sampled_from(["U", "U", "D", None]),  # op: D deletes, null never does
                st.integers(0, 9) | (st.just(INT_MAX + 7) if widened else st.nothing()),
            ),
            min_size=1,
            max_size=4,
            unique_by=lambda t: (t[0], t[2]),  # one version per (key, watermark) in a file
        )
    )
    rows = []
    for key, part, updated, op, qty in drawn:
        row: dict[str, Any] = {"id": key, "part": part, "updated": updated, "op": op, "qty": qty}
        if "value" in columns:
            row["value"] = f"v{key}.{updated}"
        if "discount" in columns:
            row["discount"] = key * 100 + updated
        rows.append(row)
    return rows


@st.composite
def change_histories(draw: Any, *, max_epochs: int = 3, max_steps: int = 4) -> list[Epoch]:
    """Epochs of landed files and runs; between epochs the declared schema changes: ``value``
    and ``discount`` appear or disappear, ``qty`` widens from int to bigint (never back).
    Versions come in any order: one older than a delete delivered before it loses to the
    delete's tombstone (``docs/deletes.md``, "Tombstones").
    """
    epochs: list[Epoch] = []
    widened = False
    for number in range(draw(st.integers(2, max_epochs))):
        columns = tuple(name for name in OPTIONAL_COLUMNS if draw(st.booleans()))
        widened = widened or (number > 0 and draw(st.booleans()))
        batch_files = st.sampled_from([None, 1, 2])
        crash_at = st.integers(1, 12)  # Iceberg: 4 hook points a batch, Parquet 10 to 15
        runs = st.builds(Run, batch_files, st.none() | crash_at)
        lands = _rows(columns, widened).map(Land)
        steps: list[Land | Run] = [] if number else [draw(lands)]
        steps += draw(st.lists(st.one_of(lands, lands, runs), max_size=max_steps))
        if draw(st.booleans()):  # the epoch's files meet a crash, then the closing run
            steps.append(Run(draw(batch_files), draw(crash_at)))
        steps.append(Run(draw(batch_files), None))
        epochs.append(Epoch(columns, widened, steps))
    return epochs


# -- snapshot histories: every delivery a full snapshot, keys gone between them, reconciles ---


@dataclass(frozen=True)
class Snapshot:
    """One file holding every row the source has now (``--file_snapshots``), its columns
    declared as ``id, part, updated, qty`` (bigint once ``widened``) plus ``columns`` (of
    ``OPTIONAL_COLUMNS``): a row has exactly those columns."""

    rows: list[dict[str, Any]]
    columns: tuple[str, ...] = ()
    widened: bool = False

    def source_schema(self) -> str:
        return declared_schema(self.columns, self.widened, with_marker=False)

    def declared(self) -> list[str]:
        return ["id", "part", "updated", "qty", *self.columns]


@dataclass(frozen=True)
class SnapshotRun:
    """One run: batches of at most ``batch_files`` files (None: unbounded), a reconcile on
    demand when ``reconcile``, crashing at its ``crash_at``-th hook point (None: none)."""

    batch_files: int | None
    crash_at: int | None
    reconcile: bool


@dataclass(frozen=True)
class SnapshotHistory:
    """Snapshots and runs of one job with ``--reconcile_every reconcile_every`` (0: never).
    A run reads under the declared schema of the newest snapshot before it; a run that
    commits comes before a snapshot of another schema, so every snapshot is read under its
    own. It ends with a run that commits, then a reconcile on demand: after it the target
    holds exactly the newest snapshot's keys."""

    reconcile_every: int
    steps: list[Snapshot | SnapshotRun]


def snapshot_row(
    key: int, part: str, updated: int, qty: int, text: str, columns: tuple[str, ...]
) -> dict[str, Any]:
    """A snapshot's row of ``key`` carrying exactly the declared ``columns`` (``value`` is
    ``text``; ``discount`` follows the key and watermark, so a row re-delivered unchanged
    under a schema that gained it has it, and one that lost it has it no more)."""
    row: dict[str, Any] = {"id": key, "part": part, "updated": updated, "qty": qty}
    row.update({"value": text} if "value" in columns else {})
    row.update({"discount": key * 100 + updated} if "discount" in columns else {})
    return row


@st.composite
def _snapshot(
    draw: Any,
    last: dict[int, dict[str, Any]],
    columns: tuple[str, ...],
    widened: bool,
    previous: frozenset[int] = frozenset(),
) -> Snapshot:
    """The source now: a non-empty subset of keys 1..5 (a key absent is gone, it may come
    back). A present key keeps its row, or changes it (value, quantity, partition) at the
    same or a later watermark (a source row's update time); a key gone from the
    ``previous`` snapshot may come back restored from an older copy: an older watermark
    than its last one, in either partition. A row kept unchanged carries the snapshot's
    columns: one that appeared is there, one that disappeared is not."""
    keys = draw(st.sets(st.integers(1, 5), min_size=1, max_size=5))
    qty = st.integers(0, 9) | (st.just(INT_MAX + 7) if widened else st.nothing())
    rows = []
    for key in sorted(keys):
        before = last.get(key)
        gone = before is not None and key not in previous and before["updated"] > 1
        if gone and draw(st.booleans()):
            assert before is not None
            older = draw(st.integers(1, before["updated"] - 1))
            part = draw(st.sampled_from("ab"))
            before = {**before, "part": part, "updated": older, "text": f"r{key}.{len(last)}"}
            last[key] = before
        elif before is None or not draw(st.booleans()):
            updated = (before["updated"] if before else 1) + draw(st.integers(0, 3))
            text = f"v{key}.{len(last)}.{draw(st.integers(0, 9))}"
            before = {"part": draw(st.sampled_from("ab")), "updated": updated, "text": text}
            before["qty"] = draw(qty)
            last[key] = before
        rows.append(snapshot_row(key, **before, columns=columns))
    return Snapshot(rows, columns, widened)


def _columns(draw: Any) -> tuple[str, ...]:
    return tuple(name for name in OPTIONAL_COLUMNS if draw(st.booleans()))


@st.composite
def snapshot_histories(draw: Any, *, max_steps: int = 5) -> SnapshotHistory:
    """A first snapshot, then snapshots and runs (some crash, some reconcile on demand), then
    a run that commits and a reconcile that commits. Between snapshots the declared schema
    may change: ``value`` and ``discount`` appear or disappear, ``qty`` widens from int to
    bigint (never back); a run that commits reads the older snapshots first."""
    last: dict[int, dict[str, Any]] = {}
    batch_files = st.sampled_from([None, 1, 2])
    runs = st.builds(SnapshotRun, batch_files, st.none() | st.integers(1, 12), st.booleans())
    columns, widened = _columns(draw), False
    steps: list[Snapshot | SnapshotRun] = [draw(_snapshot(last, columns, widened))]
    previous = frozenset(row["id"] for row in steps[0].rows)
    for _ in range(draw(st.integers(0, max_steps))):
        if not draw(st.booleans()):
            steps.append(draw(runs))
            continue
        if draw(st.booleans()):  # the source's schema changes
            changed = _columns(draw), widened or draw(st.booleans())
            if changed != (columns, widened):
                steps.append(SnapshotRun(draw(batch_files), None, draw(st.booleans())))
                columns, widened = changed
        snapshot = draw(_snapshot(last, columns, widened, previous))
        steps.append(snapshot)
        previous = frozenset(row["id"] for row in snapshot.rows)
    steps.append(SnapshotRun(draw(batch_files), None, False))
    steps.append(SnapshotRun(draw(batch_files), None, True))
    return SnapshotHistory(draw(st.integers(0, 3)), steps)
