"""Publishing staged files into a live target with a write-ahead intent.

Correctness does not depend on rename being atomic (on S3 a rename is a copy then a
delete). Staged files are listed, with their sizes, in ``_staging/<run_id>/_intent.json``
with the live files they replace, before anything live is touched; then new files move in,
and only when all of them are live are the old ones deleted, or, with a retention, moved
under ``_retained/<seq>/`` beside a copy of the intent (what ``restore`` brings back).

Recovery runs before the target is read: without a valid intent the staging prefix is
deleted; with one, it rolls forward when every new file is present (live or staged), and
back otherwise. The only complete copy of anything is never deleted, and nothing outside
the run's staging prefix and the affected partitions ever is. Steps, layout, retention and
what a reader sees: ``docs/writer-protocol.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.hooks import hooks
from glue_incremental.partitions.paths import is_hidden

STAGING_DIR = "_staging"
DATA_DIR = "data"
INTENT_FILE = "_intent.json"
INTENT_VERSION = 1
RETAINED_DIR = "_retained"
RECORD_FILE = "_publish.json"
# The schema each publish records after it (``targets.parquet.schema_file``).
SCHEMA_FILE = "_schema.json"


class ObjectStore(Protocol):
    """The object operations the protocol uses (``targets.parquet.writer.HadoopFileSystem`` on Spark)."""

    def size(self, uri: str) -> int | None: ...
    def list_files(self, uri: str) -> list[tuple[str, int]]: ...
    def list_dirs(self, uri: str) -> list[str]: ...
    def rename_file(self, source: str, destination: str) -> None: ...
    def delete_file(self, uri: str) -> None: ...
    def delete_dir_if_empty(self, uri: str) -> None: ...
    def delete_tree(self, uri: str) -> None: ...
    def write_bytes(self, uri: str, data: bytes) -> None: ...
    def read_bytes(self, uri: str) -> bytes | None: ...


class PublishError(GlueIncrementalError, RuntimeError):
    """A publish cannot be completed nor undone: a file it needs is gone (named)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(message)


@dataclass(frozen=True)
class FileEntry:
    """A file relative to the target (or to the staging data root), with its size."""

    path: str
    size: int


@dataclass(frozen=True)
class Intent:
    """What one publish does: the partitions it replaces, files in, files out."""

    run_id: str
    created_ms: int
    partitions: tuple[str, ...]
    new_files: tuple[FileEntry, ...]
    old_files: tuple[FileEntry, ...]
    # The publish's number in the target's retained lineage; None: old files are deleted.
    # An older reader of the intent ignores it (and deletes): nothing it relies on changes.
    retain_seq: int | None = None
    # A retained publish: the target's ``_schema.json`` as it found it ("" none), what a
    # restore writes back with the files; None: not kept (an intent written before it was).
    schema: str | None = None

    def to_bytes(self) -> bytes:
        body = {
            "v": INTENT_VERSION,
            "run_id": self.run_id,
            "created_ms": self.created_ms,
            "partitions": list(self.partitions),
            "new_files": [[f.path, f.size] for f in self.new_files],
            "old_files": [[f.path, f.size] for f in self.old_files],
            "complete": True,
        }
        if self.retain_seq is not None:
            body["retain_seq"] = self.retain_seq
        if self.schema is not None:
            body["schema"] = self.schema
        return json.dumps(body, sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes | None) -> Intent | None:
        """The intent, or None if absent or not completely written."""
        if not data:
            return None
        try:
            body = json.loads(data)
        except ValueError:
            return None
        if (
            not isinstance(body, dict)
            or body.get("v") != INTENT_VERSION
            or not body.get("complete")
        ):
            return None
        return cls(
            run_id=str(body["run_id"]),
            created_ms=int(body["created_ms"]),
            partitions=tuple(body["partitions"]),
            new_files=tuple(FileEntry(p, int(s)) for p, s in body["new_files"]),
            old_files=tuple(FileEntry(p, int(s)) for p, s in body["old_files"]),
            retain_seq=int(body["retain_seq"]) if body.get("retain_seq") is not None else None,
            schema=body["schema"] if isinstance(body.get("schema"), str) else None,
        )


def staging_root(target_uri: str) -> str:
    return join(target_uri, STAGING_DIR)


def run_prefix(target_uri: str, run_id: str) -> str:
    """``<target>/_staging/<run_id>``: everything a run creates before publishing."""
    return join(staging_root(target_uri), run_id)


def stage_data_uri(target_uri: str, run_id: str) -> str:
    """Where Spark writes the run's rows (the same layout as the target)."""
    return join(run_prefix(target_uri, run_id), DATA_DIR)


def retained_root(target_uri: str) -> str:
    return join(target_uri, RETAINED_DIR)


def record_prefix(target_uri: str, seq: int) -> str:
    """``<target>/_retained/<seq>``: the files publish ``seq`` replaced, and its intent."""
    return join(retained_root(target_uri), f"{seq:012d}")


def retained_seqs(fs: ObjectStore, target_uri: str) -> list[int]:
    """The numbers of the retained publishes' directories, ascending (a pruned one may lack
    its record)."""
    found = []
    for uri in fs.list_dirs(retained_root(target_uri)):
        name = uri.rstrip("/").rsplit("/", 1)[1]
        if name.isdigit():
            found.append(int(name))
    return sorted(found)


def read_record(fs: ObjectStore, target_uri: str, seq: int) -> Intent | None:
    """Publish ``seq``'s intent as retained, or None (pruned, or never retained)."""
    intent = Intent.from_bytes(fs.read_bytes(join(record_prefix(target_uri, seq), RECORD_FILE)))
    return intent if intent is not None and intent.retain_seq == seq else None


def live_files(fs: ObjectStore, target_uri: str, partitions: Iterable[str]) -> list[FileEntry]:
    """Visible data files directly inside each partition directory ("" is the table root)."""
    found = []
    for relative in sorted(set(partitions)):
        for path, size in fs.list_files(join(target_uri, relative)):
            name = path.rsplit("/", 1)[1]
            if not is_hidden(name):
                found.append(FileEntry(join(relative, name).lstrip("/"), size))
    return found


def staged_files(
    fs: ObjectStore, target_uri: str, run_id: str, partitions: Iterable[str]
) -> list[FileEntry]:
    """The data files Spark staged for ``partitions``, relative to the staging data root."""
    return live_files(fs, stage_data_uri(target_uri, run_id), partitions)


def publish(
    fs: ObjectStore,
    target_uri: str,
    run_id: str,
    partitions: Sequence[str],
    *,
    expected: Sequence[FileEntry] | None = None,
    clock_ms: int | None = None,
    retain: timedelta | None = None,
) -> Intent:
    """Make exactly ``partitions`` of the target hold the files staged by ``run_id``.

    Partitions with nothing staged end up empty and are removed. Other
    partitions are never touched. Returns the intent it followed.

    ``expected`` is what the run staged (listed right after writing, before its
    lease check). If staging no longer holds exactly that, another run has
    recovered this run's staging (this run lost its lease while stalled): the
    publish stops with PublishError before the intent, so it can never empty
    live partitions it did not read.

    ``retain`` (a duration): the replaced files are kept under ``_retained/<seq>/`` rather
    than deleted, and retained publishes older than ``retain`` are pruned afterwards (the
    latest one always stays: it carries the lineage's number). None: deleted, as always.
    """
    new = staged_files(fs, target_uri, run_id, partitions)
    if expected is not None and sorted(new, key=_by_path) != sorted(expected, key=_by_path):
        prefix = run_prefix(target_uri, run_id)
        raise PublishError(
            prefix,
            f"run {run_id}: its staged files changed before the publish ({len(expected)} "
            f"written, {len(new)} found under {prefix}); another run recovered them, so this "
            "run lost its lease; nothing live was touched",
        )
    old = live_files(fs, target_uri, partitions)
    clash = {f.path for f in new} & {f.path for f in old}
    if clash:
        raise PublishError(
            sorted(clash)[0], f"staged file {sorted(clash)[0]!r} already exists in the target"
        )
    seqs = retained_seqs(fs, target_uri) if retain is not None else []
    now_ms = clock_ms if clock_ms is not None else int(time.time() * 1000)
    intent = Intent(
        run_id=run_id,
        created_ms=now_ms,
        partitions=tuple(sorted(set(partitions))),
        new_files=tuple(new),
        old_files=tuple(old),
        retain_seq=(max(seqs, default=0) + 1) if retain is not None else None,
        schema=_schema_text(fs, target_uri) if retain is not None else None,
    )
    hooks.point("publish.intent", run_id=run_id, files_in=len(new), files_out=len(old))
    fs.write_bytes(join(run_prefix(target_uri, run_id), INTENT_FILE), intent.to_bytes())
    _complete(fs, target_uri, intent, step="publish")
    if retain is not None:
        prune(fs, target_uri, older_than_ms=now_ms - int(retain.total_seconds() * 1000))
    return intent


def _schema_text(fs: ObjectStore, target_uri: str) -> str:
    """The target's recorded schema file as text ("": none)."""
    return (fs.read_bytes(join(target_uri, SCHEMA_FILE)) or b"").decode()


def prune(fs: ObjectStore, target_uri: str, *, older_than_ms: int) -> list[int]:
    """Delete the retained publishes created before ``older_than_ms``, oldest first, all but the
    latest; returns their numbers. The record goes first: a crash in between leaves a directory
    without a record, which counts as pruned (and is deleted by the next prune)."""
    seqs = retained_seqs(fs, target_uri)
    pruned = []
    for seq in seqs[:-1]:
        record = read_record(fs, target_uri, seq)
        if record is not None and record.created_ms >= older_than_ms:
            break  # the rest are younger: pruned publishes form a prefix of the lineage
        hooks.point("publish.prune", seq=seq)
        fs.delete_file(join(record_prefix(target_uri, seq), RECORD_FILE))
        fs.delete_tree(record_prefix(target_uri, seq))
        pruned.append(seq)
    return pruned


def _by_path(entry: FileEntry) -> str:
    return entry.path


def recover(fs: ObjectStore, target_uri: str) -> list[Intent]:
    """Finish or undo every publish a crashed run left; returns the intents rolled forward.

    Run before the target is read, by the run holding the job's lease.
    """
    root = staging_root(target_uri)
    pending: list[tuple[Intent | None, str]] = []
    for run_dir in fs.list_dirs(root):
        run_id = run_dir.rstrip("/").rsplit("/", 1)[1]
        intent = Intent.from_bytes(fs.read_bytes(join(run_dir, INTENT_FILE)))
        pending.append((intent if intent and intent.run_id == run_id else None, run_id))
    finished = []
    for intent, run_id in sorted(pending, key=lambda item: item[0].created_ms if item[0] else 0):
        if intent is None:
            hooks.point("recover.discard", run_id=run_id)
            _delete_run_prefix(fs, target_uri, run_id)
            continue
        if _complete(fs, target_uri, intent, step="recover"):
            finished.append(intent)
    return finished


def _complete(fs: ObjectStore, target_uri: str, intent: Intent, *, step: str) -> bool:
    """Roll ``intent`` forward if every new file can be made live, else back. True if forward."""
    stage = stage_data_uri(target_uri, intent.run_id)
    moved_in: list[FileEntry] = []
    for entry in intent.new_files:
        live, staged = join(target_uri, entry.path), join(stage, entry.path)
        live_size = fs.size(live)
        staged_size = fs.size(staged)
        if staged_size == entry.size:
            if live_size is not None:  # a copy that was not verified: do it again
                hooks.point(f"{step}.delete", path=live)
                _delete_in_partitions(fs, target_uri, intent, live)
            hooks.point(f"{step}.move", source=staged, destination=live)
            fs.rename_file(staged, live)
        elif live_size == entry.size:
            pass  # moved in (on S3 the source delete may have been interrupted: staging goes later)
        else:
            _roll_back(fs, target_uri, intent, moved_in, missing=staged, step=step)
            return False
        moved_in.append(entry)
    if intent.retain_seq is not None:
        # Before any old file leaves: a retained file is always described by its record.
        hooks.point(f"{step}.retain", seq=intent.retain_seq)
        fs.write_bytes(
            join(record_prefix(target_uri, intent.retain_seq), RECORD_FILE), intent.to_bytes()
        )
    for entry in intent.old_files:
        live = join(target_uri, entry.path)
        if fs.size(live) is not None:
            hooks.point(f"{step}.delete", path=live)
            if intent.retain_seq is None:
                _delete_in_partitions(fs, target_uri, intent, live)
            else:
                _retire(fs, target_uri, intent, entry)
    _remove_empty_partitions(fs, target_uri, intent, step)
    hooks.point(f"{step}.forget", run_id=intent.run_id)
    _delete_run_prefix(fs, target_uri, intent.run_id)
    return True


def _roll_back(
    fs: ObjectStore,
    target_uri: str,
    intent: Intent,
    moved_in: list[FileEntry],
    *,
    missing: str,
    step: str,
) -> None:
    for entry in intent.old_files:
        if fs.size(join(target_uri, entry.path)) != entry.size:
            raise PublishError(
                missing,
                f"run {intent.run_id}: staged file {missing} and live file {entry.path} are both "
                "gone; the publish can be neither completed nor undone",
            )
    for entry in moved_in:
        live = join(target_uri, entry.path)
        hooks.point(f"{step}.undo", path=live)
        _delete_in_partitions(fs, target_uri, intent, live)
    hooks.point(f"{step}.forget", run_id=intent.run_id)
    _delete_run_prefix(fs, target_uri, intent.run_id)


def _remove_empty_partitions(fs: ObjectStore, target_uri: str, intent: Intent, step: str) -> None:
    """Remove each partition directory left empty, then its parents left empty. A directory
    that is not empty ends the walk: its parents hold it (so a publish of 800 partitions
    lists 800 small directories, not the target's root 800 times)."""
    for relative in intent.partitions:
        parts = relative.split("/") if relative else []
        while parts:
            path = join(target_uri, "/".join(parts))
            if fs.size(path) is not None or fs.list_dirs(path) or fs.list_files(path):
                break
            hooks.point(f"{step}.rmdir", path=path)
            fs.delete_dir_if_empty(path)
            parts.pop()


def _retire(fs: ObjectStore, target_uri: str, intent: Intent, entry: FileEntry) -> None:
    """Move one replaced live file under its publish's retained prefix."""
    assert intent.retain_seq is not None
    live = join(target_uri, entry.path)
    _check_in_partitions(target_uri, intent, live)
    kept = join(record_prefix(target_uri, intent.retain_seq), entry.path)
    if fs.size(kept) is not None:  # a copy-then-delete cut between the two: copy again
        fs.delete_file(kept)
    fs.rename_file(live, kept)


def _delete_in_partitions(fs: ObjectStore, target_uri: str, intent: Intent, path: str) -> None:
    """Delete one live file, refusing anything outside the intent's partitions."""
    _check_in_partitions(target_uri, intent, path)
    fs.delete_file(path)


def _check_in_partitions(target_uri: str, intent: Intent, path: str) -> None:
    relative = (
        path[len(target_uri.rstrip("/")) + 1 :]
        if path.startswith(target_uri.rstrip("/") + "/")
        else None
    )
    parent = relative.rsplit("/", 1)[0] if relative and "/" in relative else ""
    if relative is None or parent not in intent.partitions or ".." in relative.split("/"):
        raise PublishError(path, f"refusing to delete {path}: outside the publish's partitions")


def _delete_run_prefix(fs: ObjectStore, target_uri: str, run_id: str) -> None:
    if not run_id or "/" in run_id or run_id in (".", ".."):
        raise PublishError(run_id, f"refusing to delete staging of run id {run_id!r}")
    fs.delete_tree(run_prefix(target_uri, run_id))


def join(root: str, relative: str) -> str:
    return root.rstrip("/") + ("/" + relative if relative else "")
