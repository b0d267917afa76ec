"""A file dataset's new files since its file bookmark: one planner for the load and the join.

``FileDataset.plan`` lists the dataset once and plans it with the file bookmark
(``sources.files``): the files ``band start < modified <= upper bound`` not read yet, the
next bookmark, late and deferred files. A Hadoop path is listed with directory-time
pruning (``sources.listing``); an ``s3://`` root by the discovery rules
(``sources.discovery``: a full listing, an ordered ``StartAfter`` listing, or the
partitions named by S3 notifications). It reads no data and writes nothing: the caller
reads ``files`` and commits ``next_bookmark`` and ``next_state`` once what it read is
written, then ``after_commit``; a run that will not commit calls ``release``.

First run (no bookmark): every file up to the run start (or the upper bound) is new.
The load (``load.sources.FileDatasetSource``: bounded batches, delivery columns) and a
join side (``engine.sides.FileSideSource``: partitions, upstream bounds, whole-partition
reads) are adapters over it. Invariants: ``docs/targets-and-sources.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from pyspark.sql import SparkSession

from glue_incremental.partitions.paths import parse_name
from glue_incremental.sources import discovery
from glue_incremental.sources.discovery import (
    DiscoveredPlan,
    DiscoveredSummary,
    Discovery,
    DiscoveryState,
)
from glue_incremental.sources.files import (
    DEFAULT_BAND_SECONDS,
    FileBookmark,
    FileReadPlan,
    PlanRules,
    plan_from_listing,
)
from glue_incremental.sources.listing import SourceFile, SourceNotFound, list_source_files
from glue_incremental.sources.notifications import QueueClient
from glue_incremental.sources.s3_listing import (
    ObjectLister,
    S3Listing,
    S3Root,
    is_s3_uri,
    relative_directory,
)

__all__ = ["FileDataset", "FileDatasetPlan", "band_seconds"]

# The ``key=value`` pairs of one directory below the root (``(("dt", "2024-01-01"),)``).
Pairs = tuple[tuple[str, str], ...]


def band_seconds(lookback: timedelta) -> int:
    """The bookmark's band: the job's ``--lookback``, else ``files.DEFAULT_BAND_SECONDS``."""
    return int(lookback.total_seconds() or DEFAULT_BAND_SECONDS)


@dataclass(frozen=True)
class FileDataset:
    """A directory of files (a Hadoop path, or ``s3://`` found by ``discovery``).

    ``absent_is_empty``: a root that does not exist (yet) plans no file and keeps the
    states (a join side waiting for its first file); otherwise ``SourceNotFound``.
    """

    root: str
    discovery: Discovery = field(default_factory=Discovery)
    band_seconds: int = DEFAULT_BAND_SECONDS
    absent_is_empty: bool = False

    def plan(
        self,
        spark: SparkSession,
        bookmark: FileBookmark | None,
        state: DiscoveryState | None,
        *,
        run_start_ms: int,
        upper_bound_ms: int | None = None,
        force_full_listing: bool = False,
        s3_client: ObjectLister | None = None,
        sqs_client: QueueClient | None = None,
    ) -> FileDatasetPlan:
        """Plan one run: list (S3: send notifications' receive), never read or delete.

        ``upper_bound_ms``: files modified after it are left for a later run (an
        upstream's commit, a replay's end, a bounded batch's end). ``force_full_listing``:
        the states are earlier ones (a rewind, a replay), so S3 is listed in full.
        """
        bookmark = bookmark or FileBookmark.initial()
        rules: PlanRules = {
            "run_start_ms": run_start_ms,
            "band_seconds": self.band_seconds,
            "upper_bound_ms": upper_bound_ms,
        }
        if is_s3_uri(self.root):
            return self._plan_s3(bookmark, state, rules, force_full_listing, s3_client, sqs_client)
        return self._plan_hadoop(spark, bookmark, state, rules)

    def _plan_hadoop(
        self,
        spark: SparkSession,
        bookmark: FileBookmark,
        state: DiscoveryState | None,
        rules: PlanRules,
    ) -> FileDatasetPlan:
        try:
            listing, stats = list_source_files(
                spark, self.root, modified_after_ms=bookmark.band_start_ms
            )
        except SourceNotFound:
            if not self.absent_is_empty:
                raise
            plan = plan_from_listing([], bookmark, **rules)
            return FileDatasetPlan(self, DiscoveredPlan(plan, state or DiscoveryState(), "hadoop"))
        plan = plan_from_listing(listing, bookmark, **rules, stats=stats)
        return FileDatasetPlan(
            self,
            DiscoveredPlan(plan, state or DiscoveryState(), "hadoop"),
            listing=tuple(listing),
            exists=True,
            unlisted_partitions=tuple(
                _pairs_below(stats.root_uri, uri) for uri in stats.pruned_directories
            ),
        )

    def _plan_s3(
        self,
        bookmark: FileBookmark,
        state: DiscoveryState | None,
        rules: PlanRules,
        force_full_listing: bool,
        s3_client: ObjectLister | None,
        sqs_client: QueueClient | None,
    ) -> FileDatasetPlan:
        lister = S3Listing(S3Root.parse(self.root), s3_client)
        try:
            found = discovery.plan_discovered_read(
                self.root,
                bookmark,
                state,
                self.discovery,
                **rules,
                force_full_listing=force_full_listing,
                s3_client=lister.client,
                sqs_client=sqs_client,
            )
        except SourceNotFound:
            if not self.absent_is_empty:
                raise
            plan = plan_from_listing([], bookmark, **rules)
            # The one (empty) full-listing page that found nothing.
            found = DiscoveredPlan(plan, state or DiscoveryState(), "full", requests=1)
            lister.requests = found.requests
            return FileDatasetPlan(self, found, lister=lister)
        lister.requests = found.requests
        unlisted: tuple[Pairs, ...] = ()
        if found.listed_after is not None:
            # Below its StartAfter an ordered run listed nothing; the bookmark knows these.
            unlisted = tuple(
                _pairs(relative_directory(lister.root, f"{directory}/file"))
                for directory, *_ in bookmark.dir_old_counts
            )
        return FileDatasetPlan(
            self,
            found,
            listing=found.listed,
            exists=True,
            unlisted_partitions=unlisted,
            lister=lister,
        )


@dataclass(frozen=True)
class FileDatasetPlan:
    """One run of a file dataset, planned: what to read and the states to commit after.

    ``found``: the file plan (``found.plan``), how it was found, the notifications it
    received. ``listing``: every file this run listed (S3 notification runs: none kept).
    ``exists``: the root held something (always, unless ``absent_is_empty`` applied).
    ``unlisted_partitions``: directories holding files this run did not list (pruned as
    unchanged, or below an ordered run's ``StartAfter``), as ``key=value`` pairs.
    ``lister``: an S3 root's lister, for later listings of some partitions (it counts them).
    """

    dataset: FileDataset
    found: DiscoveredPlan
    listing: tuple[SourceFile, ...] = ()
    exists: bool = False
    unlisted_partitions: tuple[Pairs, ...] = ()
    lister: S3Listing | None = None

    @property
    def file_plan(self) -> FileReadPlan:
        return self.found.plan

    @property
    def files(self) -> tuple[SourceFile, ...]:
        """The files to read, sorted by (modified_ms, uri)."""
        return self.found.plan.files

    @property
    def next_bookmark(self) -> FileBookmark:
        return self.found.plan.next_bookmark

    @property
    def next_state(self) -> DiscoveryState:
        return self.found.next_state

    @property
    def late_files(self) -> int:
        return self.found.plan.late_file_count

    @property
    def receipts(self) -> tuple[str, ...]:
        return self.found.receipts

    def summary(self) -> DiscoveredSummary:
        """The file plan's figures and how the files were found (``DiscoveredPlan.summary``)."""
        return self.found.summary()

    def release(self) -> None:
        """For a run that will not commit: its notifications visible again now."""
        discovery.release_notifications(self.dataset.discovery, self.receipts)

    def after_commit(self, committed: bool) -> None:
        """Once the states are committed: delete the notifications they made redundant (else
        release them). Only then: a message deleted before the commit would be lost."""
        if self.receipts and committed:
            discovery.delete_notifications(self.dataset.discovery, self.receipts)
        else:
            self.release()


def _pairs(relative: str) -> Pairs:
    return tuple(pair for part in relative.split("/") if part for pair in parse_name(part))


def _pairs_below(root: str, uri: str) -> Pairs:
    """The pairs of a directory URI a Hadoop listing returned, relative to its root."""
    base = root.rstrip("/")
    relative = uri[len(base) :] if uri.startswith(base) else uri
    return tuple(pair for part in relative.strip("/").split("/") for pair in parse_name(part))
