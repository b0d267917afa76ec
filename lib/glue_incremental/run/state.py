"""The stored state of each job, typed: a load's slot and each join side's slot.

DynamoDB holds the ``to_state()`` dict (encoded by ``encoding``); ``from_state`` reads
it back and returns None on a first run or after a reset. ``to_state`` writes exactly
the keys the jobs have always committed, so states written before these types existed
read back unchanged. Layout of each: ``docs/watermarks-and-leases.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import NotRequired, Required, TypedDict, TypeGuard, TypeVar

from glue_incremental.errors import GlueIncrementalError, UnreadableState
from glue_incremental.history.errors import TrackedColumnsChanged
from glue_incremental.history.options import HistoryOptions
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.sources.discovery import DiscoveryState, DiscoveryStateDict
from glue_incremental.sources.files import FileBookmark, FileBookmarkState
from glue_incremental.watermarks.encoding import CursorValue

T = TypeVar("T")


class UpstreamState(TypedDict):
    """The upstream job's commit a join side last read."""

    job: str
    version: int | None
    run_id: str | None
    published_at_ms: int | None


class TargetLayout(TypedDict, total=False):
    """What a target's content depends on (``target_layout``); states written before the
    target was recorded lack its names."""

    target_format: str | None
    target_path: str | None
    target_table: str | None
    partition_by: Required[list[str]]
    primary_key: Required[list[str]]
    watermark_column: Required[str | None]
    # A history target's tracked columns, sorted (None: every column); absent: no history.
    history_columns: list[str] | None


class LoadStateExtra(TypedDict, total=False):
    """What a load's state holds besides its cursor: the files' bookmark and S3 discovery
    state, its Iceberg table and, for a run that wrote no snapshot, the snapshot it left
    current (``iceberg_snapshot``: what a rewind to that run restores), the types of the
    source's partition columns fixed on the first run (``partition_types``), and the
    target's ``layout`` (``target_layout``)."""

    files: FileBookmarkState
    discovery: DiscoveryStateDict
    iceberg_table: str
    iceberg_snapshot: int
    partition_types: dict[str, str]
    layout: TargetLayout
    runs_since_reconcile: int
    # A Parquet target's last retained publish when the state was committed (``restore``).
    parquet_publish: int


class LoadStateDict(LoadStateExtra):
    """A load's stored state: the cursor (the greatest watermark value loaded, from JDBC or
    files) and when it was published."""

    cursor: Required[CursorValue]
    published_at_ms: Required[int]


class JoinSideStateDict(TypedDict):
    """One join side's stored state: a file bookmark (and S3 discovery state) or an Iceberg
    snapshot id."""

    files: NotRequired[FileBookmarkState]
    discovery: NotRequired[DiscoveryStateDict]
    iceberg_snapshot_id: NotRequired[int | None]
    iceberg_table: NotRequired[str]
    pending_partitions: list[list[str | None]]
    upstream: UpstreamState | None
    published_at_ms: int


@dataclass(frozen=True)
class LoadState:
    """What a load commits: ``cursor`` is the greatest watermark value loaded (JDBC or files;
    None before any row had one)."""

    cursor: CursorValue
    published_at_ms: int
    files: FileBookmark | None = None
    iceberg_table: str | None = None
    discovery: DiscoveryState | None = None
    iceberg_snapshot: int | None = None
    partition_types: dict[str, str] | None = None
    layout: TargetLayout | None = None
    # With --reconcile_every: committed runs since the last reconcile (``reconcile``).
    runs_since_reconcile: int | None = None

    def to_state(self) -> LoadStateDict:
        state = LoadStateDict(cursor=self.cursor, published_at_ms=self.published_at_ms)
        if self.files is not None:
            state["files"] = self.files.to_state()
        if self.discovery is not None:
            state["discovery"] = self.discovery.to_state()
        if self.iceberg_table is not None:
            state["iceberg_table"] = self.iceberg_table
        if self.iceberg_snapshot is not None:
            state["iceberg_snapshot"] = self.iceberg_snapshot
        if self.partition_types:
            state["partition_types"] = dict(self.partition_types)
        if self.layout:
            state["layout"] = self.layout.copy()
        if self.runs_since_reconcile is not None:
            state["runs_since_reconcile"] = self.runs_since_reconcile
        return state

    @classmethod
    def from_state(cls, state: Mapping[str, object] | None) -> LoadState | None:
        """None stays None; a value of another type than the state's raises UnreadableState."""
        if state is None:
            return None
        cursor = state.get("cursor")
        if not _is_cursor(cursor):
            raise UnreadableState(repr(cursor)[:80], f"stored cursor {cursor!r} is not a cursor")
        layout = state.get("layout")
        return cls(
            cursor=cursor,
            published_at_ms=_millis(state),
            files=_file_bookmark(state),
            iceberg_table=_stored(state, "iceberg_table", str),
            discovery=_discovery(state),
            iceberg_snapshot=_stored(state, "iceberg_snapshot", int),
            partition_types=_stored(state, "partition_types", dict),
            layout=layout if _is_layout(layout) else None,
            runs_since_reconcile=_stored(state, "runs_since_reconcile", int),
        )

    def without_times(self) -> dict[str, object]:
        """The stored form apart from the cursor, publish time and the output snapshot a run
        without a publish records (what else would change)."""
        return _without(self.to_state(), *_TIMES)


@dataclass(frozen=True)
class JoinSideState:
    """What one join side commits.

    A file side keeps its ``FileBookmark``; an Iceberg side the snapshot it consumed.
    ``pending_partitions`` were changed but not yet settled upstream: the next run
    recomputes them. ``upstream`` is the upstream commit read (None without one).
    ``discovery``: an ``s3://`` side's listing schedule (absent in states written before
    join sides had one: the next run lists the whole side).
    """

    published_at_ms: int
    pending_partitions: tuple[PartitionValues, ...] = ()
    upstream: UpstreamState | None = None
    files: FileBookmark | None = None
    iceberg_snapshot_id: int | None = None
    iceberg_table: str | None = None
    discovery: DiscoveryState | None = None

    def to_state(self) -> JoinSideStateDict:
        state = JoinSideStateDict(
            pending_partitions=[list(p) for p in self.pending_partitions],
            upstream=self.upstream,
            published_at_ms=self.published_at_ms,
        )
        if self.files is not None:
            state["files"] = self.files.to_state()
        else:
            state["iceberg_snapshot_id"] = self.iceberg_snapshot_id
        if self.discovery is not None:
            state["discovery"] = self.discovery.to_state()
        if self.iceberg_table is not None:
            state["iceberg_table"] = self.iceberg_table
        return state

    @classmethod
    def from_state(cls, state: Mapping[str, object] | None) -> JoinSideState | None:
        """None stays None; a value of another type than the state's raises UnreadableState."""
        if state is None:
            return None
        upstream = state.get("upstream")
        pending = _stored(state, "pending_partitions", list) or []
        return cls(
            published_at_ms=_millis(state),
            pending_partitions=tuple(_partition_values(values) for values in pending),
            upstream=_upstream(upstream) if isinstance(upstream, Mapping) else None,
            files=_file_bookmark(state),
            iceberg_snapshot_id=_stored(state, "iceberg_snapshot_id", int),
            iceberg_table=_stored(state, "iceberg_table", str),
            discovery=_discovery(state),
        )

    def same_apart_from_publish_time(self, other: JoinSideState | None) -> bool:
        """Whether committing ``self`` over ``other`` would change only ``published_at_ms``."""
        return other is not None and replace(self, published_at_ms=0) == replace(
            other, published_at_ms=0
        )


def _without(values: Mapping[str, object] | None, *keys: str) -> dict[str, object]:
    return {key: value for key, value in (values or {}).items() if key not in keys}


# What moves without the source having changed: not a reason to commit.
# ``parquet_publish`` (``targets.parquet.restore.STATE_KEY``) moves with each publish, like the snapshot;
# ``output_changes`` describes the last commit's output, not where the source stands.
_TIMES = ("cursor", "published_at_ms", "iceberg_snapshot", "parquet_publish", "output_changes")


def stored_without_times(values: Mapping[str, object] | None) -> dict[str, object]:
    """A stored load state apart from what ``LoadState.without_times`` leaves out."""
    return _without(values, *_TIMES)


def _stored(state: Mapping[str, object], key: str, kind: type[T]) -> T | None:
    """``state[key]`` (None when absent), or UnreadableState naming it when not a ``kind``."""
    value = state.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise UnreadableState(
        repr(value)[:80], f"stored state's {key!r} is {value!r}, not a {kind.__name__}"
    )


def _millis(state: Mapping[str, object]) -> int:
    published = state.get("published_at_ms") or 0
    if not isinstance(published, int | float | str):
        raise UnreadableState(repr(published)[:80], f"stored published_at_ms is {published!r}")
    return int(published)


def _is_cursor(value: object) -> TypeGuard[CursorValue]:
    return value is None or isinstance(value, str | int | float | Decimal | datetime | date)


def _is_layout(value: object) -> TypeGuard[TargetLayout]:
    """A stored layout, kept as stored (a layout from before the target was recorded too)."""
    return isinstance(value, dict) and all(isinstance(name, str) for name in value)


def _partition_values(values: object) -> PartitionValues:
    if not isinstance(values, list | tuple) or not all(
        value is None or isinstance(value, str) for value in values
    ):
        raise UnreadableState(repr(values)[:80], f"stored pending partition {values!r}")
    return tuple(values)


def _file_bookmark(state: Mapping[str, object]) -> FileBookmark | None:
    files = _stored(state, "files", dict)
    return FileBookmark.from_state(files) if files is not None else None


def _discovery(state: Mapping[str, object]) -> DiscoveryState | None:
    discovery = _stored(state, "discovery", dict)
    return DiscoveryState.from_state(discovery) if discovery is not None else None


def _upstream(stored: Mapping[str, object]) -> UpstreamState:
    return UpstreamState(
        job=str(stored.get("job")),
        version=_stored(stored, "version", int),
        run_id=_stored(stored, "run_id", str),
        published_at_ms=_stored(stored, "published_at_ms", int),
    )


class LayoutChanged(GlueIncrementalError, ValueError):
    """A run would merge into a target written under another layout (one line, names both)."""


def target_layout(
    partition_by: Sequence[str],
    primary_key: Sequence[str],
    watermark_column: str | None,
    target: Mapping[str, str | None] | None = None,
    history: HistoryOptions | None = None,
) -> TargetLayout:
    """What the target's content depends on: kept in each load state, checked by the next run.

    ``target`` names the output (``target_format`` and ``target_path`` or ``target_table``):
    a state describes what was written there, and nowhere else. ``history``: a history
    target's versions also depend on the columns they track."""
    layout = TargetLayout(
        partition_by=list(partition_by),
        primary_key=list(primary_key),
        watermark_column=watermark_column,
    )
    names = target or {}
    if "target_format" in names:
        layout["target_format"] = names["target_format"]
    if "target_path" in names:
        layout["target_path"] = names["target_path"]
    if "target_table" in names:
        layout["target_table"] = names["target_table"]
    if history is not None:
        tracked = history.history_columns
        layout["history_columns"] = None if tracked is None else sorted(set(tracked))
    return layout


def check_same_layout(previous: Mapping[str, object] | None, layout: TargetLayout) -> None:
    """Refuse an incremental run whose layout differs from the one its state was written with.

    Merging under another ``--partition_by`` keeps the old directories beside the
    new (every key twice); another primary key or watermark column makes the
    stored versions incomparable; another target (path, table or format) holds none of
    the rows the state says are loaded. ``previous`` is the committed state whatever the bookmark
    option: a ``job-bookmark-disable`` run commits nothing, so it may not change the
    layout either. A reset, then a run (a full reload that commits), is the way; a
    state written before layouts were recorded (no ``layout``) is not checked, and an
    entry a state does not record yet (the target, before it was recorded) is accepted
    and recorded by the next commit.
    """
    recorded = (previous or {}).get("layout")
    if not isinstance(recorded, Mapping) or not recorded:
        return
    for name, value in layout.items():
        if name in recorded and recorded[name] != value:
            if name == "history_columns":  # a history target's own refusal (HistoryError)
                raise TrackedColumnsChanged(recorded[name], layout["history_columns"])
            raise LayoutChanged(
                f"--{name} changed from {recorded[name]!r} to {value!r} since the last "
                "committed run; nothing was written: reset the watermark (watermarks reset) so "
                f"the next run reloads everything under the new layout, or keep {recorded[name]!r}"
            )
