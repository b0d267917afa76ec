"""Hypothesis strategies for delivery histories: what lands in a source, and when the job runs."""

from __future__ import annotations

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
