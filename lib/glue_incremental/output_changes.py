"""What a commit changed in its outputs: the partitions each Parquet target wrote or removed.

A job on ``CustomJob`` (the load, the join, a custom script) commits, in every slot's
state, ``output_changes``: per Parquet target (its path, normalised by ``location``) the
partition columns and the partitions its publish in this commit wrote or removed (a
partition emptied by a delete or a key moving away is removed, and named), or
``"all": true`` when they are too many to list (``MAX_LISTED``) or the item would not
fit DynamoDB's 400 KB item limit. A target not written in the commit is recorded with no
partition. A downstream reads these from the upstream's history
(``join.upstream.committed_changes``): the upstream's commits, not the files that
appeared, name what it must recompute. Design: ``docs/upstream-commits.md``.

An Iceberg target is not recorded: its readers follow its snapshots (changelog).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glue_incremental.watermarks.errors import WatermarkItemTooLarge

CHANGES_KEY = "output_changes"
# Beyond this many partitions in one commit a target's entry says "all" instead: an entry
# stays a few tens of KB, well under DynamoDB's 400 KB item limit (state, file bookmark and
# history copy share that item: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
MAX_LISTED = 1000

PartitionList = list[list[str | None]]


def location(path: str) -> str:
    """A path as the upstream and its readers both name it (``s3a://`` and ``s3://``, a
    ``file:`` scheme and a trailing slash are not differences)."""
    text = path.strip().rstrip("/")
    if text.startswith("s3a://") or text.startswith("s3n://"):
        text = "s3://" + text[6:]
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif text.startswith("file:"):
        text = text[len("file:") :]
    return text


def entry(columns: Sequence[str], partitions: Sequence[Mapping[str, str | None]]) -> dict[str, Any]:
    """One target's record for one commit: its columns and the distinct partitions, sorted
    (nulls first), or ``all`` past ``MAX_LISTED``."""
    rows = {tuple(values.get(column) for column in columns) for values in partitions}
    if len(rows) > MAX_LISTED:
        return {"columns": list(columns), "all": True}
    ordered = sorted(rows, key=lambda row: tuple((v is not None, v or "") for v in row))
    return {"columns": list(columns), "partitions": [list(row) for row in ordered]}


def everything(changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes`` with every target's entry saying ``all`` (what a too-large item keeps)."""
    return {where: {"columns": e.get("columns", []), "all": True} for where, e in changes.items()}


def with_changes(
    states: Mapping[str, dict[str, Any]],
    changes: Mapping[str, Any],
    fits: Any,
) -> dict[str, dict[str, Any]]:
    """Each slot's state with ``changes``; a slot whose item would exceed DynamoDB's item
    limit with the list keeps ``all`` instead (``fits(slot, state)`` raises
    ``WatermarkItemTooLarge``), so recording changes never stops a commit."""
    if not changes:
        return dict(states)
    result = {}
    for slot, state in states.items():
        candidate = {**state, CHANGES_KEY: dict(changes)}
        try:
            fits(slot, candidate)
        except WatermarkItemTooLarge:
            candidate = {**state, CHANGES_KEY: everything(changes)}
        result[slot] = candidate
    return result
