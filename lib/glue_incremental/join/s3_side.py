"""An ``s3://`` join side: listed by the load's S3 discovery rules, not in full every run.

``sources.discovery`` plans the side (ordered ``StartAfter`` listing, a full listing on
the first run and every ``--full_listing_every`` runs, which also reads files ordered
runs could not list). What an ordered run leaves below its ``StartAfter`` is listed
only where the join needs it: the partitions it is about to recompute (do they exist,
does the upstream still write there) and, before the commit, the upstream re-check.
Design notes: ``docs/incremental-join.md`` (S3 sides).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from glue_incremental.join.spec import Partition, as_text, partition_of
from glue_incremental.partition_paths import parse_name
from glue_incremental.sources import discovery, files
from glue_incremental.sources.listing import SourceFile
from glue_incremental.sources.s3_listing import S3Listing, S3Root, relative_directory
from glue_incremental.writer import partition_dir

# Up to this many partitions are listed one prefix each; more, with one StartAfter listing.
MAX_PREFIX_LISTINGS = 8


@dataclass(frozen=True)
class S3SidePlan:
    """The discovered plan, what was listed, and the lister (it counts every request)."""

    found: discovery.DiscoveredPlan
    listing: list[SourceFile]
    known_partitions: set[Partition]
    exists: bool
    lister: S3Listing


def plan_s3_side(
    root: str,
    bookmark: files.FileBookmark,
    state: discovery.DiscoveryState | None,
    rules: discovery.Discovery,
    columns: Sequence[str],
    *,
    run_start_ms: int,
    band_seconds: int,
    upper_bound_ms: int | None,
    force_full_listing: bool = False,
    s3_client: Any = None,
) -> S3SidePlan:
    """Plan one run of the side. A side with no object yet: an empty plan, the state kept.

    ``known_partitions``: partitions an ordered run did not list but the bookmark's
    directory counts know (they exist unless deleted since).
    """
    lister = S3Listing(S3Root.parse(root), s3_client)
    try:
        found = discovery.plan_discovered_read(
            None,
            root,
            bookmark,
            state,
            rules,
            run_start_ms=run_start_ms,
            band_seconds=band_seconds,
            upper_bound_ms=upper_bound_ms,
            force_full_listing=force_full_listing,
            s3_client=lister.client,
        )
    except files.SourceNotFound:
        plan = files.plan_from_listing(
            [],
            bookmark,
            run_start_ms=run_start_ms,
            band_seconds=band_seconds,
            upper_bound_ms=upper_bound_ms,
        )
        # The one (empty) full-listing page that found nothing.
        found = discovery.DiscoveredPlan(
            plan, state or discovery.DiscoveryState(), "full", requests=1
        )
        lister.requests = found.requests
        return S3SidePlan(found, [], set(), False, lister)
    lister.requests = found.requests
    known: set[Partition] = set()
    if found.listed_after is not None:
        known = {
            partition_of(_pairs(relative_directory(lister.root, f"{directory}/file")), columns)
            for directory, *_ in bookmark.dir_old_counts
        }
    return S3SidePlan(found, list(found.listed), known, True, lister)


def _pairs(relative: str) -> tuple[tuple[str, str], ...]:
    return tuple(pair for part in relative.split("/") if part for pair in parse_name(part))


def unlisted(
    listed_after: str | None, partitions: Iterable[Partition], columns: Sequence[str]
) -> dict[str, Partition]:
    """The partitions (by relative directory) whose keys sort at or below ``listed_after``."""
    if listed_after is None:
        return {}
    directories = {partition_dir(columns, as_text(p)): p for p in partitions}
    return {d: p for d, p in directories.items() if d + "/" <= listed_after}


def list_partitions(lister: S3Listing, directories: Iterable[str]) -> list[SourceFile]:
    """Every file of these relative directories: a prefix listing each, or one listing from
    the lowest on when there are many (the cost follows the partitions, not the history)."""
    wanted = sorted(set(directories))
    if not wanted:
        return []
    if len(wanted) <= MAX_PREFIX_LISTINGS:
        return lister.under(wanted)
    return lister.from_key(wanted[0])
