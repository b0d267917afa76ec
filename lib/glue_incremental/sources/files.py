"""File-level bookmarks for S3, HDFS and local sources: Glue's S3 job bookmarks, made correct.

The bookmark is a high mark plus a bounded *band* of file fingerprints, so files
sharing one modification time, or becoming visible late (S3 multipart uploads),
are read exactly once. A file is new if ``H < m <= U`` (U = run start), read from
the band if its fingerprint was not seen, deferred if ``m > U``; files older than
the band are counted as late (``LateFilesSkipped``), never silently skipped.

First run (no bookmark): every file with ``m <= U`` is read. Listing:
``sources.listing`` (Hadoop) or, on S3, ``sources.discovery``. ``plan_from_listing``
is pure given a listing. Design, state layout and limits: ``docs/file-bookmarks.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Required, TypedDict

from pyspark.sql import SparkSession

from glue_incremental.sources.bookmark_state import (
    FileBookmarkState,
    InvalidBookmarkState,
    as_int,
    as_list,
    as_optional_int,
    validate_directory_counts,
    validate_fingerprints,
    validate_marks,
)
from glue_incremental.sources.listing import (
    OBJECT_STORE_SCHEMES,
    ListingStats,
    SourceFile,
    SourceNotFound,
    fingerprint_of,
    list_source_files,
)
from glue_incremental.sources.reading import read_files

STATE_VERSION = 1
DEFAULT_BAND_SECONDS = 900
DEFAULT_MAX_BAND_FILES = 10_000
DEFAULT_MAX_TRACKED_DIRECTORIES = 1_000
_STATE_KEYS = (
    "version",
    "high_mark_ms",
    "band_start_ms",
    "band_fingerprints",
    "dir_old_counts",
    "dir_counts_complete",
)


class PlanRules(TypedDict, total=False):
    """The ``plan_from_listing`` arguments a planner passes along unchanged."""

    run_start_ms: Required[int]
    band_seconds: int
    upper_bound_ms: int | None


class FilePlanSummary(TypedDict):
    """``FileReadPlan.summary()``: the figures of the run summary line and ``--dry_run``."""

    files_to_read: int
    bytes_to_read: int
    late_files: int
    late_directories: list[list[str | int]]
    deferred_files: int
    files_listed: int
    directories_listed: int
    partitions_pruned: int
    directory_mtimes_usable: bool
    first_run: bool
    upper_bound_ms: int
    oldest_modified_ms: int | None
    newest_modified_ms: int | None
    next_high_mark_ms: int | None
    next_band_start_ms: int | None
    band_files: int
    band_truncated: bool
    tracked_directories: int
    directory_tracking_complete: bool


__all__ = [
    "DEFAULT_BAND_SECONDS",
    "DEFAULT_MAX_BAND_FILES",
    "DEFAULT_MAX_TRACKED_DIRECTORIES",
    "OBJECT_STORE_SCHEMES",
    "FileBookmark",
    "FileBookmarkState",
    "FilePlanSummary",
    "FileReadPlan",
    "InvalidBookmarkState",
    "ListingStats",
    "PlanRules",
    "SourceFile",
    "SourceNotFound",
    "count_late_files",
    "fingerprint_of",
    "list_source_files",
    "next_band",
    "next_directory_counts",
    "plan_file_read",
    "plan_from_listing",
    "read_files",
    "select_files_to_read",
]


@dataclass(frozen=True)
class FileBookmark:
    """What a file source keeps between runs (see the module docstring for the semantics).

    ``high_mark_ms`` None means no file was ever read: the next run reads
    everything up to its start. ``band_fingerprints`` are the files with
    ``band_start_ms < mtime <= high_mark_ms`` already read (sorted).
    ``dir_old_counts`` are ``(directory URI, files with mtime <= counted_to_ms,
    counted_to_ms)``: the high mark of the run that last listed the directory
    (every file up to it was then read or reported), so a directory listed
    again after the band moved past its files is compared with what it held
    then, not with a band it never saw. Most recently active first, at most
    ``max_tracked_directories`` of them. A state written before the mark was
    kept (``[directory, count]``) was counted to its ``band_start_ms``.
    """

    high_mark_ms: int | None = None
    band_start_ms: int | None = None
    band_fingerprints: tuple[str, ...] = ()
    dir_old_counts: tuple[tuple[str, int, int], ...] = ()
    dir_counts_complete: bool = True

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def initial(cls) -> FileBookmark:
        """The bookmark of a source never read: the first run reads everything up to its start."""
        return cls()

    @property
    def first_run(self) -> bool:
        return self.high_mark_ms is None

    def to_state(self) -> FileBookmarkState:
        """A JSON-encodable dict (lists, never tuples: JSON would bring them back as lists)."""
        return {
            "version": STATE_VERSION,
            "high_mark_ms": self.high_mark_ms,
            "band_start_ms": self.band_start_ms,
            "band_fingerprints": list(self.band_fingerprints),
            "dir_old_counts": [
                [directory, count, counted_to]
                for directory, count, counted_to in self.dir_old_counts
            ],
            "dir_counts_complete": self.dir_counts_complete,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, object] | None) -> FileBookmark:
        """Rebuild from ``to_state()`` output after a JSON (or DynamoDB) round trip.

        None (no state yet, or a reset) is the initial bookmark. Lists stand for
        tuples and integral ``Decimal`` values (boto3) for ints. Anything else
        raises ``InvalidBookmarkState`` naming the field.
        """
        if state is None:
            return cls.initial()
        if not isinstance(state, Mapping):
            raise InvalidBookmarkState(
                "state", state, "expected a mapping (FileBookmark.to_state())"
            )
        unknown = sorted(str(key) for key in state if key not in _STATE_KEYS)
        if unknown:
            raise InvalidBookmarkState(unknown[0], state[unknown[0]], "unknown field")
        missing = [key for key in _STATE_KEYS if key not in state]
        if missing:
            raise InvalidBookmarkState(missing[0], None, "missing field")
        version = as_int(state["version"], "version")
        if version != STATE_VERSION:
            raise InvalidBookmarkState(
                "version", state["version"], f"unsupported version (expected {STATE_VERSION})"
            )
        fingerprints: list[str] = []
        for index, value in enumerate(as_list(state["band_fingerprints"], "band_fingerprints")):
            if not isinstance(value, str):
                raise InvalidBookmarkState(
                    f"band_fingerprints[{index}]", value, "expected a string"
                )
            fingerprints.append(value)
        band_start = as_optional_int(state["band_start_ms"], "band_start_ms")
        pairs = []
        for index, pair in enumerate(as_list(state["dir_old_counts"], "dir_old_counts")):
            where = f"dir_old_counts[{index}]"
            entry = as_list(pair, where)
            if len(entry) not in (2, 3):
                raise InvalidBookmarkState(where, pair, "expected [directory, count, counted_to]")
            # [directory, count]: written before the mark was kept, counted to the band start.
            counted_to = as_int(entry[2], f"{where}[2]") if len(entry) == 3 else (band_start or 0)
            directory = entry[0]
            if not isinstance(directory, str) or not directory:
                raise InvalidBookmarkState(f"{where}[0]", directory, "expected a directory URI")
            pairs.append((directory, as_int(entry[1], f"{where}[1]"), counted_to))
        complete = state["dir_counts_complete"]
        if not isinstance(complete, bool):
            raise InvalidBookmarkState("dir_counts_complete", complete, "expected true or false")
        return cls(
            high_mark_ms=as_optional_int(state["high_mark_ms"], "high_mark_ms"),
            band_start_ms=band_start,
            band_fingerprints=tuple(fingerprints),
            dir_old_counts=tuple(pairs),
            dir_counts_complete=complete,
        )


def _validate(bookmark: FileBookmark) -> None:
    validate_marks(bookmark.high_mark_ms, bookmark.band_start_ms)
    validate_fingerprints(bookmark.band_fingerprints)
    validate_directory_counts(bookmark.dir_old_counts)
    if bookmark.high_mark_ms is None and (bookmark.band_fingerprints or bookmark.dir_old_counts):
        raise InvalidBookmarkState(
            "high_mark_ms",
            bookmark.high_mark_ms,
            "is null but band_fingerprints/dir_old_counts are not empty",
        )
    if not isinstance(bookmark.dir_counts_complete, bool):
        raise InvalidBookmarkState(
            "dir_counts_complete", bookmark.dir_counts_complete, "expected true or false"
        )


@dataclass(frozen=True)
class FileReadPlan:
    """What one run reads and the bookmark to commit once the read data is written.

    ``files`` are sorted by (modified_ms, uri). Late files (older than the band,
    newly visible) are counted in ``late_file_count`` and ``late_directories``
    ((directory URI, count), largest first) and are not read. Deferred files
    (modified after the upper bound) are left for the next run.
    """

    files: tuple[SourceFile, ...]
    next_bookmark: FileBookmark
    late_file_count: int = 0
    late_directories: tuple[tuple[str, int], ...] = ()
    deferred_file_count: int = 0
    files_listed: int = 0
    directories_listed: int = 0
    partitions_pruned: int = 0
    first_run: bool = False
    upper_bound_ms: int = 0
    band_truncated: bool = False
    directory_mtimes_usable: bool = True

    @property
    def bytes_to_read(self) -> int:
        return sum(source.size for source in self.files)

    def summary(self, *, max_late_directories: int = 10) -> FilePlanSummary:
        """JSON-friendly figures for the run summary line and ``--dry_run`` output."""
        bookmark = self.next_bookmark
        return {
            "files_to_read": len(self.files),
            "bytes_to_read": self.bytes_to_read,
            "late_files": self.late_file_count,
            "late_directories": [
                [directory, count]
                for directory, count in self.late_directories[:max_late_directories]
            ],
            "deferred_files": self.deferred_file_count,
            "files_listed": self.files_listed,
            "directories_listed": self.directories_listed,
            "partitions_pruned": self.partitions_pruned,
            "directory_mtimes_usable": self.directory_mtimes_usable,
            "first_run": self.first_run,
            "upper_bound_ms": self.upper_bound_ms,
            "oldest_modified_ms": self.files[0].modified_ms if self.files else None,
            "newest_modified_ms": self.files[-1].modified_ms if self.files else None,
            "next_high_mark_ms": bookmark.high_mark_ms,
            "next_band_start_ms": bookmark.band_start_ms,
            "band_files": len(bookmark.band_fingerprints),
            "band_truncated": self.band_truncated,
            "tracked_directories": len(bookmark.dir_old_counts),
            "directory_tracking_complete": bookmark.dir_counts_complete,
        }


# --------------------------------------------------------------------------- pure planning


def select_files_to_read(
    files: Iterable[SourceFile],
    bookmark: FileBookmark,
    upper_bound_ms: int,
    *,
    announced: Mapping[str, int] | None = None,
    band_ms: int = DEFAULT_BAND_SECONDS * 1000,
) -> tuple[list[SourceFile], int]:
    """(files to read sorted by (modified_ms, uri), number of deferred files).

    Read: ``H < m <= U``, and ``S < m <= H`` when not in the band fingerprints;
    everything ``<= U`` on the first run. Deferred: ``m > U``. ``announced``
    (URI -> when its notification was sent, epoch ms): an older file whose
    message was sent within a band of its modification is read too, never
    judged late against a band that moved after the message was sent (a run
    that received it and never committed, its message back after the timeout).
    """
    high, start = bookmark.high_mark_ms, bookmark.band_start_ms
    announced = announced or {}
    band = frozenset(bookmark.band_fingerprints)
    selected: list[SourceFile] = []
    deferred = 0
    for source in files:
        modified = source.modified_ms
        if modified > upper_bound_ms:
            deferred += 1
        elif high is None or modified > high:
            selected.append(source)  # new (or first run)
        elif start is not None and modified <= start:
            sent = announced.get(source.uri)
            if sent is not None and sent - band_ms <= modified:
                selected.append(source)  # announced while it was new: an upsert, idempotent
            # else old: already processed, or late (count_late_files)
        elif source.fingerprint not in band:
            selected.append(source)  # in the band, visible late
    selected.sort(key=lambda source: (source.modified_ms, source.uri))
    return selected, deferred


def count_late_files(
    files: Iterable[SourceFile], bookmark: FileBookmark, read: Iterable[str] = ()
) -> dict[str, int]:
    """Late files per directory: files not ``read`` now, up to the later of ``S`` and the
    directory's ``counted_to`` mark, beyond the count it had up to that mark when last listed.

    Files up to the mark were then read or reported; files in the band are read
    now unless their fingerprint says they were. A directory without an entry
    counts all its old unread files when the tracking is complete (it is new),
    none otherwise (assumed processed). Empty on the first run.
    """
    start = bookmark.band_start_ms
    if start is None:
        return {}
    read_now = set(read)
    marks = {directory: counted_to for directory, _, counted_to in bookmark.dir_old_counts}
    known = {directory: count for directory, count, _ in bookmark.dir_old_counts}
    old_now: dict[str, int] = defaultdict(int)
    for source in files:
        up_to = max(start, marks.get(source.directory, start))
        if source.modified_ms <= up_to and source.uri not in read_now:
            old_now[source.directory] += 1
    late: dict[str, int] = {}
    for directory, count in old_now.items():
        if directory in known:
            growth = count - known[directory]
        elif bookmark.dir_counts_complete:
            growth = count
        else:
            growth = 0
        if growth > 0:
            late[directory] = growth
    return late


def next_band(
    candidates: Iterable[tuple[int, str]],
    *,
    high_mark_ms: int | None,
    floor_ms: int | None,
    band_ms: int,
    max_band_files: int,
) -> tuple[int | None, tuple[str, ...], bool]:
    """(band start, sorted band fingerprints, truncated) from (modified_ms, fingerprint) pairs.

    The band is ``max(floor, H - band_ms) < m <= H``. Over ``max_band_files`` files,
    the newest are kept and the start moves up to the newest dropped time, so
    one modification time is never split.
    """
    if high_mark_ms is None:
        return None, (), False
    start = high_mark_ms - band_ms
    if floor_ms is not None:
        start = max(start, floor_ms)
    inside = sorted(
        {(modified, fp) for modified, fp in candidates if start < modified <= high_mark_ms},
        reverse=True,
    )
    truncated = len(inside) > max_band_files
    if truncated:
        start = inside[max_band_files][0]
        inside = [(modified, fp) for modified, fp in inside if modified > start]
    return start, tuple(sorted({fp for _, fp in inside})), truncated


def next_directory_counts(
    files: Iterable[SourceFile],
    *,
    high_mark_ms: int | None,
    previous: FileBookmark,
    pruned_directories: Iterable[str] = (),
    max_tracked_directories: int = DEFAULT_MAX_TRACKED_DIRECTORIES,
) -> tuple[tuple[tuple[str, int, int], ...], bool]:
    """(dir_old_counts, dir_counts_complete) for the next bookmark.

    Every directory holding listed files gets its count of files with
    ``m <= high_mark_ms`` (all read now, read before, or reported late) and that
    mark, most recently modified files first; entries of
    pruned (unchanged) directories are carried over after them. Over
    ``max_tracked_directories`` entries the rest are dropped and the tracking
    is no longer complete. Complete also needs every directory with files to
    have an entry: the previous tracking was complete, or nothing was pruned.
    """
    if high_mark_ms is None:
        return (), True
    counts: dict[str, int] = defaultdict(int)
    newest: dict[str, int] = {}
    for source in files:
        directory = source.directory
        counts[directory] += source.modified_ms <= high_mark_ms
        newest[directory] = max(newest.get(directory, source.modified_ms), source.modified_ms)
    listed = sorted(counts, key=lambda directory: (-newest[directory], directory))
    entries = [(directory, counts[directory], high_mark_ms) for directory in listed]
    pruned = set(pruned_directories)
    entries += [
        (directory, count, counted_to)
        for directory, count, counted_to in previous.dir_old_counts
        if directory in pruned and directory not in counts
    ]
    complete = previous.dir_counts_complete or not pruned
    if len(entries) > max_tracked_directories:
        entries = entries[:max_tracked_directories]
        complete = False
    return tuple(entries), complete


def plan_from_listing(
    files: Sequence[SourceFile],
    bookmark: FileBookmark | None,
    *,
    run_start_ms: int,
    band_seconds: int = DEFAULT_BAND_SECONDS,
    max_band_files: int = DEFAULT_MAX_BAND_FILES,
    upper_bound_ms: int | None = None,
    max_tracked_directories: int = DEFAULT_MAX_TRACKED_DIRECTORIES,
    stats: ListingStats | None = None,
    announced: Mapping[str, int] | None = None,
) -> FileReadPlan:
    """The plan for one run, given what the listing returned (pure: no Spark, no I/O).

    ``files`` must be every file in the listed directories, old ones included
    (late-file counts need them); ``stats`` says which directories were pruned
    (None: a full listing). ``bookmark`` None is the first run. ``announced``:
    files named by notifications, with when each was sent (``select_files_to_read``).
    See the module docstring for the rules.
    """
    _check_int("run_start_ms", run_start_ms)
    if upper_bound_ms is not None:
        _check_int("upper_bound_ms", upper_bound_ms)
    for name, value in (
        ("band_seconds", band_seconds),
        ("max_band_files", max_band_files),
        ("max_tracked_directories", max_tracked_directories),
    ):
        _check_int(name, value)
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    bookmark = bookmark or FileBookmark.initial()
    upper = run_start_ms if upper_bound_ms is None else min(upper_bound_ms, run_start_ms)
    by_uri: dict[str, SourceFile] = {}
    for source in files:
        by_uri.setdefault(source.uri, source)
    listing = list(by_uri.values())

    to_read, deferred = select_files_to_read(
        listing, bookmark, upper, announced=announced, band_ms=band_seconds * 1000
    )
    late = count_late_files(listing, bookmark, read=(source.uri for source in to_read))

    considered = [source for source in listing if source.modified_ms <= upper]
    high = bookmark.high_mark_ms
    if considered:
        newest = max(source.modified_ms for source in considered)
        high = newest if high is None else max(high, newest)
    band_start, fingerprints, truncated = next_band(
        ((source.modified_ms, source.fingerprint) for source in considered),
        high_mark_ms=high,
        floor_ms=bookmark.band_start_ms,
        band_ms=band_seconds * 1000,
        max_band_files=max_band_files,
    )
    dir_counts, complete = next_directory_counts(
        listing,
        high_mark_ms=high,
        previous=bookmark,
        pruned_directories=stats.pruned_directories if stats else (),
        max_tracked_directories=max_tracked_directories,
    )
    next_bookmark = FileBookmark(
        high_mark_ms=high,
        band_start_ms=band_start,
        band_fingerprints=fingerprints,
        dir_old_counts=dir_counts,
        dir_counts_complete=complete,
    )
    return FileReadPlan(
        files=tuple(to_read),
        next_bookmark=next_bookmark,
        late_file_count=sum(late.values()),
        late_directories=tuple(sorted(late.items(), key=lambda item: (-item[1], item[0]))),
        deferred_file_count=deferred,
        files_listed=stats.files_listed if stats else len(listing),
        directories_listed=(
            stats.directories_listed if stats else len({s.directory for s in listing})
        ),
        partitions_pruned=stats.partitions_pruned if stats else 0,
        first_run=bookmark.first_run,
        upper_bound_ms=upper,
        band_truncated=truncated,
        directory_mtimes_usable=stats.directory_mtimes_usable if stats else True,
    )


def _check_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")


def plan_file_read(
    spark: SparkSession,
    root_uri: str,
    bookmark: FileBookmark | None,
    *,
    run_start_ms: int,
    band_seconds: int = DEFAULT_BAND_SECONDS,
    max_band_files: int = DEFAULT_MAX_BAND_FILES,
    upper_bound_ms: int | None = None,
    prune_directories: bool = True,
    max_tracked_directories: int = DEFAULT_MAX_TRACKED_DIRECTORIES,
) -> FileReadPlan:
    """List ``root_uri`` and plan this run (see the module docstring).

    ``bookmark`` None is the first run: every file modified up to the run start
    (or ``upper_bound_ms``, for replays) is read. Take ``run_start_ms`` before
    calling. Commit ``plan.next_bookmark.to_state()`` only after the data read
    from ``plan.files`` is written.
    """
    bookmark = bookmark or FileBookmark.initial()
    files, stats = list_source_files(
        spark,
        root_uri,
        modified_after_ms=bookmark.band_start_ms,
        prune_directories=prune_directories,
    )
    return plan_from_listing(
        files,
        bookmark,
        run_start_ms=run_start_ms,
        band_seconds=band_seconds,
        max_band_files=max_band_files,
        upper_bound_ms=upper_bound_ms,
        max_tracked_directories=max_tracked_directories,
        stats=stats,
    )
