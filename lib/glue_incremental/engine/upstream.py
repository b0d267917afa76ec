"""The upstream rule: a side written by a job of this platform is read only as far as it committed.

The upstream job's committed state carries ``published_at_ms``; files newer than that, and
partitions an unfinished publish of the upstream names, are unsettled: this run leaves them
pending. Just before committing, the partitions read are checked again; if the upstream
published into one meanwhile, ``UpstreamChanged`` stops the run before the commit.

What to recompute comes from the upstream's commits: each commit's ``output_changes``
(``glue_incremental.targets.parquet.output_changes``) names the partitions it wrote or removed in the side's
path; ``committed_changes`` unions them over every commit since the one the side last read
(a rewind that rolled back or restored its output names the undone runs' partitions). Design:
``docs/upstream-commits.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from glue_incremental.engine.side_partitions import Partition, partition_of
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.partitions import paths as partition_paths
from glue_incremental.run.state import UpstreamState
from glue_incremental.sources import files as file_source
from glue_incremental.targets.parquet import output_changes, publish, restore, writer
from glue_incremental.watermarks import Watermarks

MAX_UPSTREAM_RUNS_LISTED = 100


class UpstreamChanged(GlueIncrementalError, RuntimeError):
    """An upstream job published into partitions this run was reading; nothing was committed."""

    def __init__(self, side: str, job: str, partitions: Sequence[tuple]) -> None:
        self.side, self.job, self.partitions = side, job, list(partitions)
        shown = ", ".join(map(str, self.partitions[:5]))
        super().__init__(
            f"{side} side: upstream job {job!r} published into partition(s) {shown} while this "
            "run read them; nothing was committed: rerun"
        )


class UpstreamContractError(GlueIncrementalError, ValueError):
    """The upstream job's committed state does not say when its output was published."""


@dataclass(frozen=True)
class CommittedChanges:
    """The partitions (in the side's columns) the upstream's commits since the one a side
    last read wrote or removed in its path.

    ``everything``: recompute every partition (a commit said ``all``, its columns do not
    cover the side's, or history between the two commits expired). ``unrecorded``: commits
    that recorded nothing for this path (written before commits recorded their changes, or
    an Iceberg roll-forward): for those, only the files that appeared name partitions."""

    partitions: frozenset[Partition] = frozenset()
    everything: bool = False
    unrecorded: int = 0

    def details(self) -> dict[str, Any]:
        return {
            "partitions": len(self.partitions),
            "recompute_all": self.everything,
            "unrecorded_commits": self.unrecorded,
        }


@dataclass
class Upstream:
    """What this run knows of a side's upstream job: its last commit and the runs since."""

    job: str
    slot: str | None
    version: int | None
    run_id: str | None
    published_at_ms: int | None
    runs_consumed: list[str]
    changes: CommittedChanges = CommittedChanges()

    @property
    def visible_until_ms(self) -> int:
        """Files modified after this are not committed yet (-1: nothing committed upstream)."""
        return self.published_at_ms if self.published_at_ms is not None else -1

    def state(self) -> UpstreamState:
        return UpstreamState(
            job=self.job,
            version=self.version,
            run_id=self.run_id,
            published_at_ms=self.published_at_ms,
        )


def upstream_view(
    store: Watermarks,
    job: str,
    seen: UpstreamState | None,
    *,
    path: str | None = None,
    columns: Sequence[str] = (),
) -> Upstream:
    """The upstream job's latest committed state and the runs committed since ``seen``;
    with ``path``, the partitions (of ``columns``) those commits changed there."""
    slots = store.slots(job)
    slot = "default" if "default" in slots else (sorted(slots)[0] if slots else None)
    if slot is None:
        return Upstream(job, None, None, None, None, [])
    state = store.current_state(job, slot)
    chosen: Mapping[str, Any] | None = None
    if state and state.get("watermarks") is not None:
        chosen = state
    if chosen is None:  # reset: the output of its last committed run is still there
        chosen = _last_published(store.iter_history(job, slot))
    if chosen is None:
        return Upstream(job, slot, None, None, None, [])
    published = chosen["watermarks"].get("published_at_ms")
    if not isinstance(published, int) or isinstance(published, bool):
        raise UpstreamContractError(
            f"upstream job {job!r} (slot {slot!r}) committed no integer 'published_at_ms' "
            "in its state: it is not a job of this platform, or too old to be an upstream"
        )
    since = seen["version"] if seen is not None and seen["job"] == job else None
    current = state["version"] if state else chosen["version"]
    consumed = _runs_between(store.iter_history(job, slot), since, current)
    changes = CommittedChanges()
    if path is not None and since is not None and current is not None:
        changes = committed_changes(store, job, slot, path, columns, since, current)
    return Upstream(job, slot, current, chosen["job_run_id"], published, consumed, changes)


def committed_changes(
    store: Watermarks,
    job: str,
    slot: str,
    path: str,
    columns: Sequence[str],
    since: int,
    current: int,
) -> CommittedChanges:
    """The partitions of ``path`` the commits ``since < version <= current`` changed.

    A run's commit names them (``output_changes``); a reset or a ``set`` changes no
    output (after a reset the reload's commit names every partition it wrote or removed);
    a rewind changes none unless it rolled the output back (an Iceberg target) or restored a
    load's retained Parquet files: then every partition the runs it undid had changed. Commits
    older than ``since`` are read only for such a rollback. Every commit in the range is
    read, each once, so a reader that paused, or was itself rewound, gets the union."""
    if since > current:  # the history restarted (a table recreated): nothing is comparable
        return CommittedChanges(everything=True)
    where = output_changes.location(path)
    items: dict[int, Mapping[str, Any]] = {}
    oldest_needed = since + 1
    rolled_back_to: dict[int, int] = {}  # a rollback's version -> the version it restored
    for stored in store.iter_history(job, slot):
        version = int(stored["version"])
        if version > current:
            continue
        if version < oldest_needed:
            break
        items[version] = stored
        if _rolls_back(stored) and version > since:
            try:
                back_to = store.state_after_run(job, str(stored.get("rewound_to_run")), slot)
            except LookupError:
                return CommittedChanges(everything=True)
            rolled_back_to[version] = int(back_to["version"])
            oldest_needed = min(oldest_needed, rolled_back_to[version] + 1)
    if set(range(oldest_needed, current + 1)) - set(items):  # expired from history
        return CommittedChanges(everything=True)
    found: set[Partition] = set()
    unrecorded = 0
    for version in range(since + 1, current + 1):
        item = items[version]
        undone: list[Mapping[str, Any]] = [item]
        if version in rolled_back_to:
            undone = [items[v] for v in range(rolled_back_to[version] + 1, version)]
        elif item["kind"] != "run":
            continue  # a reset, a set, a rewind that kept the output: no partition changed
        for each in undone:
            if each["kind"] != "run":
                continue
            recorded = _entry(each, where)
            if recorded is None:
                unrecorded += 1
                continue
            partitions = _in_columns(recorded, columns)
            if partitions is None:
                return CommittedChanges(everything=True)
            found |= partitions
    return CommittedChanges(frozenset(found), unrecorded=unrecorded)


def _rolls_back(item: Mapping[str, Any]) -> bool:
    """A rewind that rolled the output back too (``watermarks rewind`` of an Iceberg target), or
    restored a Parquet target's retained files (``targets.parquet.restore.RESTORED``): every partition the
    undone runs changed is rewritten either way."""
    return item["kind"] == "rewind" and item.get("output") in ("rolled back", restore.RESTORED)


def _entry(item: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    recorded = (item.get("watermarks") or {}).get(output_changes.CHANGES_KEY)
    if not isinstance(recorded, Mapping):
        return None
    entry = recorded.get(where)
    return entry if isinstance(entry, Mapping) else None


def _in_columns(entry: Mapping[str, Any], columns: Sequence[str]) -> set[Partition] | None:
    """The entry's partitions as the side's tuples; None: recompute everything (``all``, or
    the side is partitioned by a column the upstream's target is not)."""
    recorded = list(entry.get("columns") or ())
    if entry.get("all") or not set(columns) <= set(recorded):
        return None
    at = [recorded.index(column) for column in columns]
    return {tuple(values[i] for i in at) for values in entry.get("partitions") or ()}


def _last_published(history: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next(
        (
            item
            for item in history
            if isinstance(item.get("watermarks"), Mapping)
            and "published_at_ms" in item["watermarks"]
        ),
        None,
    )


def _runs_between(
    history: Iterable[Mapping[str, Any]], since: int | None, current: int
) -> list[str]:
    """Run ids committed after version ``since`` up to ``current``, oldest first (bounded)."""
    consumed = []
    for item in history:
        if since is not None and item["version"] <= since:
            break
        if item["version"] <= current:
            consumed.append(item["job_run_id"])
        if len(consumed) >= MAX_UPSTREAM_RUNS_LISTED:
            break
    return consumed[::-1]


def unsettled(
    spark: SparkSession,
    root: str,
    listing: Sequence[Any],
    upper_ms: int | None,
    columns: Sequence[str],
) -> set[Partition]:
    """Partitions holding a file newer than the upstream's commit, or caught mid-publish."""
    found = unsettled_files(listing, upper_ms, columns)
    fs = writer.open_filesystem(spark, root)
    for run_dir in fs.list_dirs(publish.staging_root(root)):
        found |= _staged_partitions(spark, fs, run_dir, columns)
    return found


def unsettled_files(
    listing: Sequence[Any], upper_ms: int | None, columns: Sequence[str]
) -> set[Partition]:
    """Partitions holding a listed file newer than the upstream's commit."""
    return {
        partition_of(source, columns)
        for source in listing
        if upper_ms is not None and source.modified_ms > upper_ms
    }


def _staged_partitions(
    spark: SparkSession, fs: writer.HadoopFileSystem, run_dir: str, columns: Sequence[str]
) -> set[Partition]:
    """The partitions an unfinished publish names in its intent or holds in its staging."""
    intent = publish.Intent.from_bytes(fs.read_bytes(f"{run_dir}/{publish.INTENT_FILE}"))
    found = {
        partition_of(partition_paths.dir_to_values(relative, columns), columns)
        for relative in (intent.partitions if intent else ())
    }
    try:
        staged, _ = file_source.list_source_files(spark, f"{run_dir}/{publish.DATA_DIR}")
    except (file_source.SourceNotFound, ValueError):
        return found
    return found | {partition_of(source, columns) for source in staged}


def recheck_upstream(
    spark: SparkSession,
    side: str,
    root: str,
    band_start_ms: int | None,
    upstream: Upstream,
    affected: Sequence[Partition],
    columns: Sequence[str],
    listing: Sequence[Any] | None = None,
) -> None:
    """Raise ``UpstreamChanged`` if the upstream published into ``affected`` since planning.

    ``listing``: the side's files in ``affected`` when the caller has listed them (S3 sides);
    None lists the whole side."""
    if listing is None:
        try:
            listing, _ = file_source.list_source_files(spark, root, modified_after_ms=band_start_ms)
        except file_source.SourceNotFound:
            listing = []
    now = unsettled(spark, root, listing, upstream.visible_until_ms, columns)
    changed = sorted((p for p in affected if p in now), key=str)
    if changed:
        raise UpstreamChanged(side, upstream.job, changed)
