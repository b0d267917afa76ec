"""What a commit changed in its outputs: the partitions each Parquet target wrote or removed.

A job on ``CustomJob`` commits, in every slot's state, ``output_changes``: per Parquet
target (its path, normalised by ``location``) the partition columns and the partitions
its publish wrote or removed (an emptied partition is removed, and named), none when not
written, or ``"all": true`` past ``MAX_LISTED`` or DynamoDB's item limit. Before a publish
touches the live target it leaves a note (``note_uncommitted``) that the next commit
names and then deletes: a publish a crash kept from its commit is named all the same. A
downstream unions these over the upstream's history (``engine.upstream.committed_changes``).
An Iceberg target is not recorded (its readers follow its snapshots). Design:
``docs/upstream-commits.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import NotRequired, Protocol, TypedDict

from glue_incremental.partitions.paths import dir_to_values
from glue_incremental.watermarks.errors import WatermarkItemTooLarge

# Notes of publishes whose commit has not cleaned them up yet (``note_uncommitted``).
UNCOMMITTED_DIR = "_uncommitted"


class NoteStore(Protocol):
    """What the notes need of a file system (``io.hadoop_fs.HadoopFileSystem``)."""

    def exists(self, uri: str) -> bool: ...
    def list_files(self, uri: str) -> list[tuple[str, int]]: ...
    def read_bytes(self, uri: str) -> bytes | None: ...
    def write_bytes(self, uri: str, data: bytes) -> None: ...
    def delete_file(self, uri: str) -> None: ...


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


class ChangesEntry(TypedDict):
    """One target's record for one commit: its partition columns, and the partitions it
    wrote or removed (each a list of values, in the columns' order) or ``all``."""

    columns: list[str]
    partitions: NotRequired[list[list[str | None]]]
    all: NotRequired[bool]


def entry(columns: Sequence[str], partitions: Sequence[Mapping[str, str | None]]) -> ChangesEntry:
    """One target's record for one commit: its columns and the distinct partitions, sorted
    (nulls first), or ``all`` past ``MAX_LISTED``."""
    rows = {tuple(values.get(column) for column in columns) for values in partitions}
    if len(rows) > MAX_LISTED:
        return {"columns": list(columns), "all": True}
    ordered = sorted(rows, key=lambda row: tuple((v is not None, v or "") for v in row))
    return {"columns": list(columns), "partitions": [list(row) for row in ordered]}


def everything(changes: Mapping[str, ChangesEntry]) -> dict[str, ChangesEntry]:
    """``changes`` with every target's entry saying ``all`` (what a too-large item keeps)."""
    return {where: {"columns": e.get("columns", []), "all": True} for where, e in changes.items()}


def with_changes(
    states: Mapping[str, dict[str, object]],
    changes: Mapping[str, ChangesEntry],
    fits: Callable[[str, Mapping[str, object]], None],
) -> dict[str, dict[str, object]]:
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


def note_uncommitted(
    fs: NoteStore, target_uri: str, run_id: str, relative_dirs: Sequence[str]
) -> None:
    """Before a publish touches the live target: the partition directories it replaces, in
    ``_uncommitted/<run_id>.json``. The job that commits deletes the note after its commit;
    a run that crashed between its publish and its commit leaves it, and the next commit
    names those partitions too."""
    fs.write_bytes(
        _notes_dir(target_uri) + f"/{run_id}.json", json.dumps(sorted(relative_dirs)).encode()
    )


def uncommitted_partitions(
    fs: NoteStore, target_uri: str, partition_by: Sequence[str]
) -> tuple[list[dict[str, str | None]], list[str]]:
    """The partitions the notes left in the target name, and the notes' URIs (to delete
    once a commit has named them)."""
    root = _notes_dir(target_uri)
    if not fs.exists(root):
        return [], []
    partitions: list[dict[str, str | None]] = []
    notes = []
    for uri, _ in fs.list_files(root):
        if not uri.endswith(".json"):  # Hadoop's local checksum files sit beside them
            continue
        for relative in json.loads(fs.read_bytes(uri) or b"[]"):
            partitions.append(dir_to_values(relative, partition_by))
        notes.append(uri)
    return partitions, notes


def forget_uncommitted(fs: NoteStore, notes: Sequence[str]) -> None:
    """After the commit that named them: the notes go."""
    for uri in notes:
        fs.delete_file(uri)


def _notes_dir(target_uri: str) -> str:
    return target_uri.rstrip("/") + "/" + UNCOMMITTED_DIR
