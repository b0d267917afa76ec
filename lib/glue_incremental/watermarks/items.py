"""The stored form of a state: what a commit writes, and the dict a read returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict, TypeGuard

from glue_incremental.watermarks.encoding import StateValues, decode, encode
from glue_incremental.watermarks.errors import WatermarkItemTooLarge
from glue_incremental.watermarks.keys import (
    DEFAULT_SLOT,
    HASH_KEY,
    ITEM_OVERHEAD_BYTES,
    MAX_ITEM_BYTES,
    AttributeValue,
    Item,
    item_key,
    state_key,
)

ChangeKind = Literal["run", "reset", "rewind", "set"]


class ItemFields(TypedDict):
    """``WatermarkItem.as_dict``: the playbook's dict of an item to commit."""

    job_name: str
    job_run_id: str
    slot: str
    watermarks: dict[str, object] | None
    expected_version: int


@dataclass(frozen=True)
class WatermarkItem:
    """A state ready to commit: the values plus the version it was computed from.

    ``watermarks`` None is a reset: the next run starts from nothing.
    """

    job_name: str
    job_run_id: str
    watermarks: Mapping[str, object] | None
    slot: str = DEFAULT_SLOT
    expected_version: int = 0
    kind: ChangeKind = "run"
    note: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> object:  # playbook code indexes the item like a dict
        fields: Mapping[str, object] = self.as_dict()
        return fields[key]

    def as_dict(self) -> ItemFields:
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
    watermarks: StateValues | None
    who: NotRequired[str]
    why: NotRequired[str]
    rewound_to_run: NotRequired[str]


@dataclass(frozen=True)
class HistoryPage:
    items: list[CommittedState]
    next_token: str | None


def state_attributes(item: WatermarkItem, version: int, committed_at: str) -> Item:
    """The ``STATE#`` item that commits ``item`` as ``version``; raises if it would not fit."""
    encoded = "null" if item.watermarks is None else encode(item.watermarks)
    attributes: Item = {
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
        len(name.encode()) + len(value.get("S", value.get("N", "")).encode())
        for name, value in attributes.items()
    )
    if size + ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
        raise WatermarkItemTooLarge(item.job_name, size)
    return attributes


def state_from_item(raw: Mapping[str, AttributeValue]) -> CommittedState:
    """A stored ``STATE#`` or ``HIST#`` item as the dict readers get (notes flattened)."""
    state: dict[str, object] = {
        "job_name": raw[HASH_KEY]["S"],
        "slot": raw.get("slot", {}).get("S", DEFAULT_SLOT),
        "job_run_id": raw["job_run_id"]["S"],
        "version": int(raw["version"]["N"]),
        "committed_at": raw["committed_at"]["S"],
        "kind": raw.get("kind", {}).get("S", "run"),
        "watermarks": decode(raw["watermarks"]["S"]),
    }
    for name, value in raw.items():
        if name.startswith("note_"):  # any note a manual change carried, as one more key
            state[name[5:]] = value["S"]
    assert _is_committed_state(state), f"not a state item: {sorted(raw)}"
    return state


def _is_committed_state(fields: Mapping[str, object]) -> TypeGuard[CommittedState]:
    """Whether ``fields`` has the keys and types ``CommittedState`` promises (notes aside)."""
    return (
        all(isinstance(fields.get(name), str) for name in _TEXT_FIELDS)
        and isinstance(fields.get("version"), int)
        and fields.get("kind") in ("run", "reset", "rewind", "set")
        and (fields.get("watermarks") is None or isinstance(fields.get("watermarks"), dict))
    )


_TEXT_FIELDS = ("job_name", "slot", "job_run_id", "committed_at")
