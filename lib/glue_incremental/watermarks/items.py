"""The stored form of a state: what a commit writes, and the dict a read returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict, cast

from glue_incremental.watermarks.encoding import decode, encode
from glue_incremental.watermarks.errors import WatermarkItemTooLarge
from glue_incremental.watermarks.keys import (
    DEFAULT_SLOT,
    HASH_KEY,
    ITEM_OVERHEAD_BYTES,
    MAX_ITEM_BYTES,
    item_key,
    state_key,
)

ChangeKind = Literal["run", "reset", "rewind", "set"]


@dataclass(frozen=True)
class WatermarkItem:
    """A state ready to commit: the values plus the version it was computed from.

    ``watermarks`` None is a reset: the next run starts from nothing.
    """

    job_name: str
    job_run_id: str
    watermarks: Mapping[str, Any] | None
    slot: str = DEFAULT_SLOT
    expected_version: int = 0
    kind: ChangeKind = "run"
    note: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:  # playbook code indexes the item like a dict
        return self.as_dict()[key]

    def as_dict(self) -> dict[str, Any]:
        return {
            "job_name": self.job_name,
            "job_run_id": self.job_run_id,
            "slot": self.slot,
            "watermarks": None if self.watermarks is None else dict(self.watermarks),
            "expected_version": self.expected_version,
        }


class CommittedState(TypedDict):
    """A committed state as read back: ``watermarks`` None is a reset.

    Notes given with a manual change (``who``, ``why``, ``rewound_to_run``...) are
    flattened into it.
    """

    job_name: str
    slot: str
    job_run_id: str
    version: int
    committed_at: str
    kind: ChangeKind
    watermarks: dict[str, Any] | None
    who: NotRequired[str]
    why: NotRequired[str]
    rewound_to_run: NotRequired[str]


@dataclass(frozen=True)
class HistoryPage:
    items: list[CommittedState]
    next_token: str | None


def state_attributes(item: WatermarkItem, version: int, committed_at: str) -> dict[str, Any]:
    """The ``STATE#`` item that commits ``item`` as ``version``; raises if it would not fit."""
    encoded = "null" if item.watermarks is None else encode(item.watermarks)
    attributes: dict[str, Any] = {
        **item_key(item.job_name, state_key(item.slot)),
        "slot": {"S": item.slot},
        "version": {"N": str(version)},
        "job_run_id": {"S": item.job_run_id},
        "watermarks": {"S": encoded},
        "committed_at": {"S": committed_at},
        "kind": {"S": item.kind},
    }
    for key, value in item.note.items():
        attributes[f"note_{key}"] = {"S": str(value)}
    # DynamoDB counts UTF-8 bytes of names and values, not characters.
    size = sum(
        len(name.encode()) + len(next(iter(value.values())).encode())
        for name, value in attributes.items()
    )
    if size + ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
        raise WatermarkItemTooLarge(item.job_name, size)
    return attributes


def state_from_item(raw: Mapping[str, Any]) -> CommittedState:
    """A stored ``STATE#`` or ``HIST#`` item as the dict readers get (notes flattened)."""
    state = CommittedState(
        job_name=raw[HASH_KEY]["S"],
        slot=raw.get("slot", {}).get("S", DEFAULT_SLOT),
        job_run_id=raw["job_run_id"]["S"],
        version=int(raw["version"]["N"]),
        committed_at=raw["committed_at"]["S"],
        kind=raw.get("kind", {}).get("S", "run"),
        watermarks=decode(raw["watermarks"]["S"]),
    )
    notes = cast(dict[str, Any], state)  # any note a manual change carried
    for name, value in raw.items():
        if name.startswith("note_"):
            notes[name[5:]] = value["S"]
    return state
