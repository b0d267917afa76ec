"""Publishing staged files into a live target with a write-ahead intent.

Correctness does not depend on rename being atomic (on S3 a rename is a copy
then a delete, object by object). Staged files are listed, with their sizes,
in ``_staging/<run_id>/_intent.json`` together with the live files they
replace, before anything live is touched; then new files move in, and only
when all of them are live are the old ones deleted.

Recovery runs before the target is read: without a valid intent the staging
prefix is deleted; with one, it rolls forward when every new file is present
(live or staged), and back otherwise. The only complete copy of anything is
never deleted, and nothing outside the run's staging prefix and the affected
partitions ever is. Steps, layout and what a reader sees:
``docs/writer-protocol.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.hooks import hooks
from glue_incremental.partition_paths import is_hidden

STAGING_DIR = "_staging"
DATA_DIR = "data"
INTENT_FILE = "_intent.json"
INTENT_VERSION = 1


class ObjectStore(Protocol):
    """The object operations the protocol uses (``writer.HadoopFileSystem`` on Spark)."""

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
        )


def staging_root(target_uri: str) -> str:
    return join(target_uri, STAGING_DIR)


def run_prefix(target_uri: str, run_id: str) -> str:
    """``<target>/_staging/<run_id>``: everything a run creates before publishing."""
    return join(staging_root(target_uri), run_id)


def stage_data_uri(target_uri: str, run_id: str) -> str:
    """Where Spark writes the run's rows (the same layout as the target)."""
    return join(run_prefix(target_uri, run_id), DATA_DIR)


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
) -> Intent:
    """Make exactly ``partitions`` of the target hold the files staged by ``run_id``.

    Partitions with nothing staged end up empty and are removed. Other
    partitions are never touched. Returns the intent it followed.

    ``expected`` is what the run staged (listed right after writing, before its
    lease check). If staging no longer holds exactly that, another run has
    recovered this run's staging (this run lost its lease while stalled): the
    publish stops with PublishError before the intent, so it can never empty
    live partitions it did not read.
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
    intent = Intent(
        run_id=run_id,
        created_ms=clock_ms if clock_ms is not None else int(time.time() * 1000),
        partitions=tuple(sorted(set(partitions))),
        new_files=tuple(new),
        old_files=tuple(old),
    )
    hooks.point("publish.intent", run_id=run_id, files_in=len(new), files_out=len(old))
    fs.write_bytes(join(run_prefix(target_uri, run_id), INTENT_FILE), intent.to_bytes())
    _complete(fs, target_uri, intent, step="publish")
    return intent


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
    for entry in intent.old_files:
        live = join(target_uri, entry.path)
        if fs.size(live) is not None:
            hooks.point(f"{step}.delete", path=live)
            _delete_in_partitions(fs, target_uri, intent, live)
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
    for relative in intent.partitions:
        parts = relative.split("/") if relative else []
        while parts:
            path = join(target_uri, "/".join(parts))
            if fs.size(path) is None and fs.list_dirs(path) == [] and fs.list_files(path) == []:
                hooks.point(f"{step}.rmdir", path=path)
                fs.delete_dir_if_empty(path)
            parts.pop()


def _delete_in_partitions(fs: ObjectStore, target_uri: str, intent: Intent, path: str) -> None:
    """Delete one live file, refusing anything outside the intent's partitions."""
    relative = (
        path[len(target_uri.rstrip("/")) + 1 :]
        if path.startswith(target_uri.rstrip("/") + "/")
        else None
    )
    parent = relative.rsplit("/", 1)[0] if relative and "/" in relative else ""
    if relative is None or parent not in intent.partitions or ".." in relative.split("/"):
        raise PublishError(path, f"refusing to delete {path}: outside the publish's partitions")
    fs.delete_file(path)


def _delete_run_prefix(fs: ObjectStore, target_uri: str, run_id: str) -> None:
    if not run_id or "/" in run_id or run_id in (".", ".."):
        raise PublishError(run_id, f"refusing to delete staging of run id {run_id!r}")
    fs.delete_tree(run_prefix(target_uri, run_id))


def join(root: str, relative: str) -> str:
    return root.rstrip("/") + ("/" + relative if relative else "")
