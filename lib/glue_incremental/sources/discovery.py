"""Which files an S3 source run lists: ordered listing or notifications, a full listing every N runs.

- **ordered** (``--discovery listing``, default on S3): for ``key=value`` layouts
  sorting in time order, one ``ListObjectsV2`` with ``StartAfter`` = the lowest
  partition that held a file of the band at the last full listing;
- **notifications** (``--discovery notifications``): the partitions named by the
  S3 events in the SQS queue; the messages are deleted after the commit.

Every ``full_listing_every``-th run (and the first) lists everything and reads
what ordered runs provably could not have listed (``files_found_by_full_listing``);
events that never came are found the same way. S3 roots only: ``file_dataset.FileDataset``
lists other schemes through Hadoop (directory-time pruning). State: ``DiscoveryState``,
next to the file bookmark. Design notes: ``docs/file-bookmarks.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TypedDict

from glue_incremental.args import DEFAULT_FULL_LISTING_EVERY, DISCOVERY_MODES
from glue_incremental.sources import files, notifications
from glue_incremental.sources.files import (
    FileBookmark,
    FilePlanSummary,
    FileReadPlan,
    InvalidBookmarkState,
    PlanRules,
)
from glue_incremental.sources.listing import ListingStats, SourceFile
from glue_incremental.sources.notifications import QueueClient
from glue_incremental.sources.s3_listing import (
    ObjectLister,
    S3Listing,
    S3Root,
    relative_directory,
    relative_key,
)

_STATE_KEYS = ("runs_since_full_listing", "ordered_start", "full_listing_high_mark_ms")
_BAND_START_KEY = "full_listing_band_start_ms"  # absent from states written before it existed

__all__ = [
    "DEFAULT_FULL_LISTING_EVERY",
    "DISCOVERY_MODES",
    "DiscoveredPlan",
    "Discovery",
    "DiscoveryState",
    "delete_notifications",
    "plan_discovered_read",
]


class DiscoveryStateDict(TypedDict):
    """A ``DiscoveryState`` as stored (``to_state``)."""

    runs_since_full_listing: int
    ordered_start: str | None
    full_listing_high_mark_ms: int | None
    full_listing_band_start_ms: int | None


class DiscoveredSummary(FilePlanSummary):
    """``DiscoveredPlan.summary()``: the file plan's figures and how its files were found."""

    discovery: str
    listing_requests: int
    files_found_by_full_listing: int
    notifications: int
    unreadable_notifications: int


class _Rules(PlanRules, total=False):
    announced: dict[str, int]


@dataclass(frozen=True)
class Discovery:
    """How a file source finds its files (validated here: a bad option fails before any listing)."""

    mode: str = "listing"
    full_listing_every: int = DEFAULT_FULL_LISTING_EVERY
    queue_url: str | None = None
    visibility_seconds: int = notifications.DEFAULT_VISIBILITY_SECONDS

    def __post_init__(self) -> None:
        if self.mode not in DISCOVERY_MODES:
            raise ValueError(f"discovery {self.mode!r} is not one of {', '.join(DISCOVERY_MODES)}")
        every = self.full_listing_every
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"full_listing_every must be a whole number >= 1, got {every!r}")
        if self.mode == "notifications" and not self.queue_url:
            raise ValueError("discovery 'notifications' needs a notification queue URL")
        if self.mode == "listing" and self.queue_url:
            raise ValueError(
                f"a notification queue ({self.queue_url!r}) needs discovery 'notifications'"
            )


@dataclass(frozen=True)
class DiscoveryState:
    """Kept between runs. ``ordered_start`` None: the next run lists everything.

    ``full_listing_band_start_ms``: the band start of the last full listing; every
    file then below ``ordered_start`` was older, so a newer one there arrived later.
    """

    runs_since_full_listing: int = 0
    ordered_start: str | None = None
    full_listing_high_mark_ms: int | None = None
    full_listing_band_start_ms: int | None = None

    def to_state(self) -> DiscoveryStateDict:
        return {
            "runs_since_full_listing": self.runs_since_full_listing,
            "ordered_start": self.ordered_start,
            "full_listing_high_mark_ms": self.full_listing_high_mark_ms,
            "full_listing_band_start_ms": self.full_listing_band_start_ms,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, object] | None) -> DiscoveryState:
        """None (no state yet): the next run lists everything. Anything malformed raises."""
        if state is None:
            return cls()
        if not isinstance(state, Mapping) or set(state) - {_BAND_START_KEY} != set(_STATE_KEYS):
            raise InvalidBookmarkState("discovery", state, f"expected the keys {_STATE_KEYS}")
        band_start = state.get(_BAND_START_KEY)
        runs = _as_int(state["runs_since_full_listing"], "discovery.runs_since_full_listing")
        high = state["full_listing_high_mark_ms"]
        start = state["ordered_start"]
        if start is not None and not isinstance(start, str):
            raise InvalidBookmarkState("discovery.ordered_start", start, "expected a string")
        return cls(
            runs_since_full_listing=runs,
            ordered_start=start,
            full_listing_high_mark_ms=(
                None if high is None else _as_int(high, "discovery.full_listing_high_mark_ms")
            ),
            full_listing_band_start_ms=(
                None if band_start is None else _as_int(band_start, f"discovery.{_BAND_START_KEY}")
            ),
        )


def _as_int(value: object, field: str) -> int:
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidBookmarkState(field, value, "expected a whole number >= 0")
    return value


@dataclass(frozen=True)
class DiscoveredPlan:
    """The file plan, how the files were found, and what to do after the commit.

    ``kind``: ``full`` / ``ordered`` / ``notifications`` on S3, ``hadoop`` elsewhere.
    ``receipts``: SQS messages to delete once the state is committed. ``listed``: the files
    this run listed on S3; ``listed_after``: the ``StartAfter`` of an ordered run (keys at or
    below it were not listed; None: nothing below was left out).
    """

    plan: FileReadPlan
    next_state: DiscoveryState
    kind: str
    requests: int = 0
    files_found_by_full_listing: int = 0
    receipts: tuple[str, ...] = ()
    unreadable_notifications: int = 0
    listed: tuple[SourceFile, ...] = ()
    listed_after: str | None = None

    def summary(self) -> DiscoveredSummary:
        return {
            **self.plan.summary(),
            "discovery": self.kind,
            "listing_requests": self.requests,
            "files_found_by_full_listing": self.files_found_by_full_listing,
            "notifications": len(self.receipts),
            "unreadable_notifications": self.unreadable_notifications,
        }


def plan_discovered_read(
    root_uri: str,
    bookmark: FileBookmark | None,
    state: DiscoveryState | None,
    discovery: Discovery,
    *,
    run_start_ms: int,
    band_seconds: int = files.DEFAULT_BAND_SECONDS,
    upper_bound_ms: int | None = None,
    s3_client: ObjectLister | None = None,
    sqs_client: QueueClient | None = None,
    force_full_listing: bool = False,
) -> DiscoveredPlan:
    """Plan one run of ``root_uri`` (see the module docstring). Lists, never reads or deletes.

    ``force_full_listing``: the state is an earlier one (a rewind, a replay): the events
    of the files after it were consumed and the ordered start may be past them.
    """
    bookmark = bookmark or FileBookmark.initial()
    state = state or DiscoveryState()
    root = S3Root.parse(root_uri)
    lister = S3Listing(root, s3_client)
    candidates = notifications.Candidates((), ())
    if discovery.mode == "notifications":
        assert discovery.queue_url is not None  # Discovery validates it
        candidates = notifications.receive_all(
            discovery.queue_url, visibility_seconds=discovery.visibility_seconds, client=sqs_client
        )
    full = (
        force_full_listing
        or bookmark.first_run
        or state.runs_since_full_listing + 1 >= discovery.full_listing_every
        or (discovery.mode == "listing" and state.ordered_start is None)
    )
    plan_rules: _Rules = {
        "run_start_ms": run_start_ms,
        "band_seconds": band_seconds,
        "upper_bound_ms": upper_bound_ms,
    }
    announced = {
        lister.root.uri_of(key): sent
        for (bucket, key), sent in candidates.sent_ms
        if bucket == lister.root.bucket
    }
    if announced:
        plan_rules["announced"] = announced
    if full:
        result = _full(lister, bookmark, state, discovery, plan_rules)
    elif discovery.mode == "notifications":
        result = _from_notifications(lister, bookmark, state, candidates, plan_rules)
    else:
        result = _ordered(lister, bookmark, state, plan_rules)
    return replace(
        result,
        requests=lister.requests + candidates.requests,
        receipts=candidates.receipts,
        unreadable_notifications=candidates.unreadable,
    )


def _full(
    lister: S3Listing,
    bookmark: FileBookmark,
    state: DiscoveryState,
    discovery: Discovery,
    rules: _Rules,
) -> DiscoveredPlan:
    listing = lister.everything()
    plan = files.plan_from_listing(listing, bookmark, **rules)
    missed = _missed_by_ordered_runs(listing, plan, lister.root, state)
    if missed:
        plan = _with_missed(plan, missed)
    next_high, band_start = plan.next_bookmark.high_mark_ms, plan.next_bookmark.band_start_ms
    ordered_start = None
    if discovery.mode == "listing":
        ordered_start = _ordered_start(listing, band_start, lister.root)
    next_state = DiscoveryState(0, ordered_start, next_high, band_start)
    return DiscoveredPlan(
        plan, next_state, "full", files_found_by_full_listing=len(missed), listed=tuple(listing)
    )


def _ordered(
    lister: S3Listing, bookmark: FileBookmark, state: DiscoveryState, rules: _Rules
) -> DiscoveredPlan:
    assert state.ordered_start is not None
    start = state.ordered_start
    listing = lister.from_key(start)
    # Every key of a directory sorts after "<directory>/": listed whole iff that is > start.
    below = [
        directory
        for directory, *_ in bookmark.dir_old_counts
        if relative_directory(lister.root, f"{directory}/file") + "/" <= start
    ]
    plan = files.plan_from_listing(listing, bookmark, **rules, stats=_stats(lister, listing, below))
    next_state = replace(state, runs_since_full_listing=state.runs_since_full_listing + 1)
    return DiscoveredPlan(plan, next_state, "ordered", listed=tuple(listing), listed_after=start)


def _from_notifications(
    lister: S3Listing,
    bookmark: FileBookmark,
    state: DiscoveryState,
    candidates: notifications.Candidates,
    rules: _Rules,
) -> DiscoveredPlan:
    root = lister.root
    directories = {
        relative_directory(root, root.uri_of(key))
        for bucket, key in candidates.objects
        if bucket == root.bucket and root.relative(key)
    }
    listing = lister.under(directories)
    listed = {source.directory for source in listing}
    unlisted = [directory for directory, *_ in bookmark.dir_old_counts if directory not in listed]
    plan = files.plan_from_listing(
        listing, bookmark, **rules, stats=_stats(lister, listing, unlisted)
    )
    next_state = replace(state, runs_since_full_listing=state.runs_since_full_listing + 1)
    return DiscoveredPlan(_keep_unlisted_band(plan, bookmark), next_state, "notifications")


def _keep_unlisted_band(plan: FileReadPlan, previous: FileBookmark) -> FileReadPlan:
    """The plan with the previous band's fingerprints kept: a notification run lists only some
    directories, and a band file it did not list was read; a later run listing its directory (or
    the full listing) must not read it again. Dropped once the band starts after the previous high
    mark (no earlier band file can be in it any more). The band keeps its bound
    (``files.DEFAULT_MAX_BAND_FILES``, the state's size): past it, carried ones are dropped."""
    following = plan.next_bookmark
    start, high = following.band_start_ms, previous.high_mark_ms
    if start is None or high is None or start >= high or not previous.band_fingerprints:
        return plan
    new = set(following.band_fingerprints)
    room = max(0, files.DEFAULT_MAX_BAND_FILES - len(new))
    carried = sorted(set(previous.band_fingerprints) - new)[:room]
    kept = tuple(sorted(new | set(carried)))
    return replace(plan, next_bookmark=replace(following, band_fingerprints=kept))


def _stats(
    lister: S3Listing, listing: Sequence[SourceFile], unlisted: Sequence[str]
) -> ListingStats:
    """Directories not listed keep their late-file counts (they are 'pruned' for the bookmark)."""
    return ListingStats(
        root_uri=lister.root.uri_of(lister.root.prefix),
        files_listed=len(listing),
        directories_listed=len({source.directory for source in listing}),
        partitions_pruned=len(unlisted),
        directory_mtimes_usable=False,
        recursive=True,
        pruned_directories=tuple(unlisted),
    )


def _ordered_start(
    listing: Sequence[SourceFile], band_start_ms: int | None, root: S3Root
) -> str | None:
    """The lowest partition holding a file of the band (else the highest partition); None when
    files sit outside ``key=value`` directories (no order to follow: always list everything)."""
    if not listing or any(not source.partition for source in listing):
        return None
    recent = [
        source for source in listing if band_start_ms is None or source.modified_ms > band_start_ms
    ]
    directories = [relative_directory(root, source.uri) for source in recent]
    if directories:
        return min(directories)
    return max(relative_directory(root, source.uri) for source in listing)


def _missed_by_ordered_runs(
    listing: Sequence[SourceFile], plan: FileReadPlan, root: S3Root, state: DiscoveryState
) -> list[SourceFile]:
    """Files below the ordered start, newer than the last full listing's band start: every file
    there was older then (``_ordered_start``), so these came after it (S3 times are whole seconds:
    one may share the listing's high mark) and no ordered run listed them. Those the bookmark rules
    already read are left out. A state without the band start falls back to the high mark."""
    start, since = state.ordered_start, state.full_listing_band_start_ms
    if since is None:
        since = state.full_listing_high_mark_ms
    if start is None or since is None:
        return []
    planned = {source.uri for source in plan.files}
    return [
        source
        for source in listing
        if since < source.modified_ms <= plan.upper_bound_ms
        and source.uri not in planned
        and relative_key(root, source.uri) <= start  # exactly what StartAfter left out
    ]


def _with_missed(plan: FileReadPlan, missed: Sequence[SourceFile]) -> FileReadPlan:
    """The plan with the missed files read, and no longer counted as late files."""
    late = dict(plan.late_directories)
    for source in missed:
        if late.get(source.directory, 0) > 0:
            late[source.directory] -= 1
    late_items = sorted(
        ((directory, count) for directory, count in late.items() if count > 0),
        key=lambda item: (-item[1], item[0]),
    )
    to_read = sorted([*plan.files, *missed], key=lambda source: (source.modified_ms, source.uri))
    return replace(
        plan,
        files=tuple(to_read),
        late_file_count=sum(count for _, count in late_items),
        late_directories=tuple(late_items),
    )


def delete_notifications(
    discovery: Discovery, receipts: Sequence[str], *, client: QueueClient | None = None
) -> int:
    """After the commit only: delete the run's messages (a failure is logged; they come back as no-ops)."""
    if not receipts or discovery.queue_url is None:
        return 0
    return notifications.delete_after_commit(discovery.queue_url, receipts, client=client)


def release_notifications(
    discovery: Discovery, receipts: Sequence[str], *, client: QueueClient | None = None
) -> int:
    """For a run that will not commit: its messages visible again now (``notifications.release``)."""
    if not receipts or discovery.queue_url is None:
        return 0
    return notifications.release(discovery.queue_url, receipts, client=client)
