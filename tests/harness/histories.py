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
        qty = "qty bigint" if self.widened else "qty int"
        extra = {"value": "value string", "discount": "discount bigint"}
        return ", ".join(
            ["id bigint", "part string", "updated bigint", "op string", qty]
            + [extra[name] for name in self.columns]
        )

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

    Every delivery respects the one order soft deletes need (``docs/deletes.md``, "No
    tombstones"): no version of a key older than a delete of that key delivered before it,
    whether the delete was applied by an earlier run or by an earlier batch of the same run
    (that shape is ``test_attack_deletes_batches.py``'s strict xfail). A drawn version that
    would break it is raised to the delete's watermark (a tie, which the later delivery wins).
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
    return _in_delete_order(epochs)


def _in_delete_order(epochs: list[Epoch]) -> list[Epoch]:
    newest_delete: dict[int, int] = {}
    ordered = []
    for epoch in epochs:
        steps: list[Land | Run] = []
        for step in epoch.steps:
            if isinstance(step, Land):
                raised: dict[tuple[int, int], dict[str, Any]] = {}
                for row in step.rows:
                    row = {**row, "updated": max(row["updated"], newest_delete.get(row["id"], 0))}
                    raised.setdefault((row["id"], row["updated"]), row)
                for row in raised.values():
                    if row["op"] == "D":
                        newest_delete[row["id"]] = max(
                            newest_delete.get(row["id"], 0), row["updated"]
                        )
                step = Land(list(raised.values()))
            steps.append(step)
        ordered.append(Epoch(epoch.columns, epoch.widened, steps))
    return ordered
