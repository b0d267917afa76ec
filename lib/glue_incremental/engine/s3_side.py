"""An ``s3://`` join side: listed by the load's S3 discovery rules, not in full every run.

``sources.file_dataset`` plans the side as it plans a load's file dataset (ordered
``StartAfter`` listing, a full listing on the first run and every ``--full_listing_every``
runs, which also reads files ordered runs could not list). What an ordered run leaves
below its ``StartAfter`` is listed only where the join needs it: the partitions it is
about to recompute (do they exist, does the upstream still write there) and, before the
commit, the upstream re-check.
Design notes: ``docs/incremental-join.md`` (S3 sides).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glue_incremental.engine.side_partitions import Partition, as_text
from glue_incremental.partitions.paths import partition_dir
from glue_incremental.sources.listing import SourceFile
from glue_incremental.sources.s3_listing import S3Listing

# Up to this many partitions are listed one prefix each; more, with one StartAfter listing.
MAX_PREFIX_LISTINGS = 8


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
