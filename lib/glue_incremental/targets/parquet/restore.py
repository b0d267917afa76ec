"""Restoring a Parquet target to what it was after an earlier publish (``watermarks rewind``).

Each publish with a retention is number ``seq`` of the target's lineage and keeps the files
it replaced under ``_retained/<seq>/`` (``publish``). After publish ``n``, every partition a
later publish touched held the files the first such publish found there (its intent's old
files). Data, index segments, deliveries and tombstones are partitions of the same intents,
so they come back together. A restore copies those files into its staging prefix and is
itself a publish (no retention): ``targets.parquet.publish.recover`` finishes or undoes one cut short. Then
the later publishes' records are dropped, newest first; run again, a restore skips the
partitions already restored. Design: ``docs/writer-protocol.md`` ("Retention and restore").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.hooks import hooks
from glue_incremental.partitions.paths import is_hidden
from glue_incremental.targets.parquet import publish
from glue_incremental.targets.parquet.publish import FileEntry, join

# The state key of the lineage number of the last publish the committed output holds.
STATE_KEY: Final = "parquet_publish"
# A rewind's history note (``output``) when it restores the files: the next run finishes a
# restore the rewind did not (``ParquetTarget.recover``).
RESTORED = "restored"


class CopyingStore(publish.ObjectStore, Protocol):
    """The publish's object operations plus a copy (a restore copies retained files)."""

    def copy_file(self, source: str, destination: str) -> None: ...


class OutputNotRetained(GlueIncrementalError, ValueError):
    """The files to restore the output to a run were pruned (or never retained)."""

    def __init__(self, target_uri: str, to_seq: int, missing: list[int]) -> None:
        self.missing = missing
        first, last = missing[0], missing[-1]
        named = f"publish {first}" if first == last else f"publishes {first}-{last}"
        super().__init__(
            f"{target_uri}: the files replaced by {named} (after publish {to_seq}) are no longer "
            f"retained under {publish.retained_root(target_uri)}; nothing was changed: rewind "
            "with --keep-output and deliver a fix file, or reset (a full reload)"
        )


@dataclass(frozen=True)
class RestorePlan:
    """What restoring the output to publish ``to_seq`` rewrites: per partition directory
    (data or side file, relative to the target), the retained files it holds then."""

    target_uri: str
    to_seq: int
    undone: tuple[int, ...]
    files: dict[str, tuple[tuple[str, FileEntry], ...]]
    # The schema file as the first undone publish found it ("" none; None: not kept).
    schema: str | None = None

    @property
    def partitions(self) -> list[str]:
        return sorted(self.files)


def latest_seq(fs: publish.ObjectStore, target_uri: str) -> int | None:
    """The number of the target's latest retained publish (None: none retained yet)."""
    return max(publish.retained_seqs(fs, target_uri), default=None)


def plan(fs: publish.ObjectStore, target_uri: str, to_seq: int) -> RestorePlan:
    """What bringing the output back to publish ``to_seq`` rewrites; OutputNotRetained (one
    line naming the missing publishes) when a publish after it is no longer retained."""
    later = [seq for seq in publish.retained_seqs(fs, target_uri) if seq > to_seq]
    records = {seq: publish.read_record(fs, target_uri, seq) for seq in later}
    # Directories without a record above the last recorded one are a drop cut short (records
    # go first); below it, publishes pruned by the retention: their files are gone.
    top = max((seq for seq, record in records.items() if record is not None), default=to_seq)
    missing = [seq for seq in range(to_seq + 1, top + 1) if records.get(seq) is None]
    if missing:
        raise OutputNotRetained(target_uri, to_seq, missing)
    files: dict[str, tuple[tuple[str, FileEntry], ...]] = {}
    for seq in later:  # ascending: the first publish after to_seq that touched a partition wins
        record = records[seq]
        if record is None:
            continue
        source = publish.record_prefix(target_uri, seq)
        for partition in record.partitions:
            if partition in files:
                continue
            files[partition] = tuple(
                (join(source, entry.path), entry)
                for entry in record.old_files
                if _parent(entry.path) == partition
            )
    first = next((records[seq] for seq in later if records[seq] is not None), None)
    schema = first.schema if first is not None else None
    return RestorePlan(target_uri, to_seq, tuple(later), files, schema)


def restored_partitions(plan: RestorePlan) -> list[str]:
    """The data partitions (``part=a/day=1``; ``""`` for an unpartitioned target) a restore
    rewrites, side-file directories left out: the partitions a downstream must read again."""
    return [
        partition
        for partition in plan.partitions
        if not any(is_hidden(part) for part in partition.split("/") if part)
    ]


def restore(fs: CopyingStore, target_uri: str, to_seq: int, *, run_id: str) -> RestorePlan:
    """Make the output what it was after publish ``to_seq``, and drop the later publishes'
    records; returns the plan followed. Idempotent: run again after a crash at any point, it
    finishes (or, with ``targets.parquet.publish.recover``, undoes and redoes) the restore."""
    publish.recover(fs, target_uri)
    wanted = plan(fs, target_uri, to_seq)
    live = {
        partition: sorted(publish.live_files(fs, target_uri, [partition]), key=_path)
        for partition in wanted.partitions
    }
    changed = [
        partition
        for partition, sources in wanted.files.items()
        if sorted((entry for _, entry in sources), key=_path) != live[partition]
    ]
    if changed:
        stage = publish.stage_data_uri(target_uri, run_id)
        fs.delete_tree(publish.run_prefix(target_uri, run_id))
        for partition in sorted(changed):
            for source, entry in wanted.files[partition]:
                hooks.point("restore.stage", source=source)
                fs.copy_file(source, join(stage, entry.path))
        publish.publish(fs, target_uri, run_id, sorted(changed))
    # With the files, the schema they were written in: a widening undone leaves no
    # decimal schema over bigint files (the next publish would mix the two types).
    schema_uri = join(target_uri, publish.SCHEMA_FILE)
    if wanted.schema:
        fs.write_bytes(schema_uri, wanted.schema.encode())
    elif wanted.schema == "" and fs.size(schema_uri) is not None:
        fs.delete_file(schema_uri)
    for seq in sorted(wanted.undone, reverse=True):
        hooks.point("restore.drop", seq=seq)
        fs.delete_file(join(publish.record_prefix(target_uri, seq), publish.RECORD_FILE))
        fs.delete_tree(publish.record_prefix(target_uri, seq))
    return wanted


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _path(entry: FileEntry) -> str:
    return entry.path
