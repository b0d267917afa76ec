"""One side of the join: what changed since its bookmark, and its full data for affected partitions.

A file side is listed once and planned with its file bookmark (``sources.files``), bounded
by the upstream's commit when it has one; an ``s3://`` side is listed by the S3 discovery
rules instead (``join.s3_side``); an Iceberg side is read by snapshot (the changelog
since the snapshot last consumed, or the whole table on a first run or after a rewind).
Partition values stay strings, exactly as named in paths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType, _parse_datatype_string

from glue_incremental import iceberg
from glue_incremental.iceberg import IcebergTarget
from glue_incremental.join import s3_side
from glue_incremental.join.config import JoinJobConfig
from glue_incremental.join.spec import (
    Partition,
    as_text,
    partition_of,
    partition_strings,
    string_partitions,
)
from glue_incremental.join.upstream import Upstream, unsettled, unsettled_files, upstream_view
from glue_incremental.partition_paths import literal, parse_name
from glue_incremental.runtime import IncrementalRun
from glue_incremental.sources import files as file_source
from glue_incremental.sources.discovery import DiscoveryState
from glue_incremental.sources.s3_listing import is_s3_uri
from glue_incremental.state import JoinSideState
from glue_incremental.writer import partition_dir


@dataclass(frozen=True)
class IcebergPlan:
    """What a file plan reports, for a side read by Iceberg snapshot (no files listed)."""

    start_snapshot: int | None
    end_snapshot: int | None
    files: tuple = ()
    late_file_count: int = 0

    @property
    def next_bookmark(self) -> Any:
        return self  # high_mark_ms below: no file times for an Iceberg side

    high_mark_ms = None

    def summary(self) -> dict[str, Any]:
        return {
            "iceberg_start_snapshot": self.start_snapshot,
            "iceberg_end_snapshot": self.end_snapshot,
        }


@dataclass
class Side:
    """One side as planned for this run."""

    name: str
    root: str
    fmt: str
    declared_schema: StructType | None  # partition columns as strings
    previous: JoinSideState | None
    band_start_ms: int | None
    exists: bool
    listing: list[file_source.SourceFile]
    pruned_partitions: set[Partition]
    plan: Any  # a file_source.FileReadPlan, or an IcebergPlan
    upstream: Upstream | None
    unsettled: set[Partition]
    new_rows: DataFrame | None
    iceberg_table: IcebergTarget | None = None
    iceberg_snapshot: int | None = None
    s3: s3_side.S3SidePlan | None = None  # an s3:// file side, planned by discovery
    upper_bound_ms: int | None = None

    @property
    def has_schema(self) -> bool:
        return (
            bool(self.declared_schema)
            or bool(self.listing)
            or bool(self.pruned_partitions)
            or self.iceberg_snapshot is not None
        )

    def existing_partitions(self, columns: Sequence[str]) -> set[Partition]:
        return {partition_of(f, columns) for f in self.listing} | self.pruned_partitions

    @property
    def next_files(self) -> file_source.FileBookmark | None:
        """The file bookmark this side commits (None for a side read by Iceberg snapshot)."""
        return None if self.iceberg_table is not None else self.plan.next_bookmark

    @property
    def discovery_state(self) -> DiscoveryState | None:
        return self.s3.found.next_state if self.s3 else None

    def plan_summary(self) -> dict[str, Any]:
        if self.s3 is None:
            return dict(self.plan.summary())
        return {**self.s3.found.summary(), "listing_requests": self.s3.lister.requests}

    def cover(self, partitions: Iterable[Partition], columns: Sequence[str]) -> None:
        """Lists those of ``partitions`` an ordered S3 run left unlisted: whether they exist
        (to read them whole) and whether an upstream wrote there after its commit."""
        if self.s3 is None:
            return
        missing = s3_side.unlisted(self.s3.found.listed_after, partitions, columns)
        if not missing:
            return
        found = s3_side.list_partitions(self.s3.lister, missing)
        known = {source.uri for source in self.listing}
        self.listing.extend(source for source in found if source.uri not in known)
        present = {partition_of(source, columns) for source in found}
        self.pruned_partitions -= set(missing.values()) - present
        if self.upstream is not None:
            self.unsettled |= unsettled_files(found, self.upper_bound_ms, columns)

    def listing_of(self, partitions: Sequence[Partition], columns: Sequence[str]) -> list | None:
        """An S3 side's files in ``partitions`` (None elsewhere: the caller lists the side)."""
        if self.s3 is None:
            return None
        directories = [partition_dir(columns, as_text(p)) for p in partitions]
        return s3_side.list_partitions(self.s3.lister, directories)


def plan_side(run: IncrementalRun, config: JoinJobConfig, name: str) -> Side:
    """Plan ``name``'s read: list, plan with its bookmark, read the new files (lazily)."""
    if config.format(name) == "iceberg":
        return plan_iceberg_side(run, config, name)
    spark, root, columns = run.spark, config.path(name), config.spec.partition_by
    previous = JoinSideState.from_state(run.previous(name))
    bookmark = (previous.files if previous else None) or file_source.FileBookmark.initial()
    upstream = None
    if name in config.upstream_jobs:
        seen = previous.upstream if previous else None
        upstream = upstream_view(run.store, config.upstream_jobs[name], seen)
    upper_ms = _upper_bound_ms(upstream, run.upper_bound(name))
    band = int(config.lookback.total_seconds() or file_source.DEFAULT_BAND_SECONDS)
    run_start_ms = int(run.started_at * 1000)
    s3 = None
    if is_s3_uri(root):
        s3 = s3_side.plan_s3_side(
            root,
            bookmark,
            previous.discovery if previous else None,
            config.side_discovery,
            columns,
            run_start_ms=run_start_ms,
            band_seconds=band,
            upper_bound_ms=upper_ms,
            force_full_listing=run.starts_from_an_earlier_state(name),
        )
        listing, plan, exists, pruned = s3.listing, s3.found.plan, s3.exists, s3.known_partitions
    else:
        listing, stats = _list(spark, root, bookmark.band_start_ms)
        plan = file_source.plan_from_listing(
            listing,
            bookmark,
            run_start_ms=run_start_ms,
            band_seconds=band,
            upper_bound_ms=upper_ms,
            stats=stats,
        )
        exists, pruned = stats is not None, _pruned_partitions(stats, columns)
    declared = _declared_schema(config.schema(name), columns)
    return Side(
        name=name,
        root=root,
        fmt=config.format(name),
        declared_schema=declared,
        previous=previous,
        band_start_ms=bookmark.band_start_ms,
        exists=exists,
        listing=listing,
        pruned_partitions=pruned,
        plan=plan,
        upstream=upstream,
        unsettled=unsettled(spark, root, listing, upper_ms, columns) if upstream else set(),
        new_rows=_read_new(spark, config, name, plan.files, declared),
        s3=s3,
        upper_bound_ms=upper_ms,
    )


def _upper_bound_ms(upstream: Upstream | None, replay_to: Mapping[str, Any] | None) -> int | None:
    """The newest file time this run may read: the upstream's commit, a replay's end."""
    # Nothing committed upstream yet: nothing of it is visible.
    upper_ms = upstream.visible_until_ms if upstream is not None else None
    if replay_to:
        to_mark = file_source.FileBookmark.from_state(replay_to.get("files")).high_mark_ms
        if to_mark is not None:
            upper_ms = to_mark if upper_ms is None else min(upper_ms, to_mark)
    return upper_ms


def _list(
    spark: SparkSession, root: str, band_start_ms: int | None
) -> tuple[list[file_source.SourceFile], file_source.ListingStats | None]:
    """The side's listing; no stats when the side's root does not exist (yet)."""
    try:
        return file_source.list_source_files(spark, root, modified_after_ms=band_start_ms)
    except file_source.SourceNotFound:
        return [], None


def _pruned_partitions(
    stats: file_source.ListingStats | None, columns: Sequence[str]
) -> set[Partition]:
    if stats is None:
        return set()
    return {
        partition_of(_dir_partition(stats.root_uri, uri), columns)
        for uri in stats.pruned_directories
    }


def _dir_partition(root: str, uri: str) -> tuple[tuple[str, str], ...]:
    relative = uri[len(root.rstrip("/")) :] if uri.startswith(root.rstrip("/")) else uri
    return tuple(pair for part in relative.strip("/").split("/") for pair in parse_name(part))


def _declared_schema(schema_text: str | None, columns: Sequence[str]) -> StructType | None:
    if not schema_text:
        return None
    return string_partitions(cast(StructType, _parse_datatype_string(schema_text)), columns)


def _read_new(
    spark: SparkSession,
    config: JoinJobConfig,
    name: str,
    files: Sequence[file_source.SourceFile],
    declared: StructType | None,
) -> DataFrame | None:
    if not files:
        return None
    rows = file_source.read_files(
        spark,
        files,
        root_uri=config.path(name),
        # An Iceberg side never gets here: it is read by snapshot, not by files.
        source_format=cast(Literal["parquet", "json", "csv"], config.format(name)),
        schema=declared,
        options=_read_options(config.format(name)),
    )
    return partition_strings(rows, config.spec.partition_by)


def plan_iceberg_side(run: IncrementalRun, config: JoinJobConfig, name: str) -> Side:
    """An Iceberg side: the rows that changed since the snapshot this side last consumed.

    Only committed snapshots exist, so no upstream rule is needed. First run: the whole
    table at its current snapshot. Later: the changelog between the two snapshots
    (inserted, deleted and updated rows, whose partitions are the affected ones). If the
    consumed snapshot is no longer an ancestor (the upstream was rewound), the whole
    table is read again.
    """
    spark = run.spark
    previous = JoinSideState.from_state(run.previous(name))
    target = config.side_target(name)
    current = iceberg.current_snapshot(spark, target)
    end = current.snapshot_id if current else None
    start = previous.iceberg_snapshot_id if previous else None
    new_rows = None
    if end is not None and start != end:
        if start is not None and iceberg.is_ancestor(spark, target, end, start):
            new_rows = iceberg.changed_rows(spark, target, start, end)
        else:
            start = None
            new_rows = iceberg.read_at(spark, target, end)
        new_rows = partition_strings(cast(DataFrame, new_rows), config.spec.partition_by)
    return Side(
        name=name,
        root=target.name,
        fmt="iceberg",
        declared_schema=None,
        previous=previous,
        band_start_ms=None,
        exists=end is not None,
        listing=[],
        pruned_partitions=set(),
        plan=IcebergPlan(start, end),
        upstream=None,
        unsettled=set(),
        new_rows=new_rows,
        iceberg_table=target,
        iceberg_snapshot=end,
    )


def _read_options(fmt: str) -> dict[str, str]:
    return {"header": "true"} if fmt == "csv" else {}


def read_full(
    spark: SparkSession, side: Side, affected: Sequence[Partition], columns: Sequence[str]
) -> DataFrame:
    """The side's whole dataset (lazily; the caller prunes it to ``affected``).

    Only the affected partitions' directories are listed and read, not the history;
    the caller's partition filter still shows in the scan's PartitionFilters.
    """
    if side.iceberg_table is not None:
        # has_schema guarantees a snapshot here
        frame = iceberg.read_at(spark, side.iceberg_table, side.iceberg_snapshot)
        return partition_strings(cast(DataFrame, frame), columns)
    if not side.exists or not (side.listing or side.pruned_partitions):
        # has_schema guarantees a declared schema here
        return spark.createDataFrame([], side.declared_schema)
    present = side.existing_partitions(columns)
    root = side.root.rstrip("/")
    paths = [f"{root}/{partition_dir(columns, as_text(p))}" for p in affected if p in present]
    schema = side.declared_schema
    if schema is None and (side.fmt != "parquet" or not paths):
        schema = _sample_schema(spark, side, paths, columns)
    if not paths:
        return spark.createDataFrame([], schema)
    reader = _reader(spark, side)
    if schema is not None:
        reader = reader.schema(schema)
    return partition_strings(reader.load([literal(path) for path in paths]), columns)


def _reader(spark: SparkSession, side: Side) -> Any:
    reader = (
        spark.read.format(side.fmt).options(**_read_options(side.fmt)).option("basePath", side.root)
    )
    # An upstream load that added a column wrote it only in newer files: without merging,
    # Spark takes one footer's columns and the join would drop the new one.
    return reader.option("mergeSchema", "true") if side.fmt == "parquet" else reader


def _sample_schema(
    spark: SparkSession, side: Side, paths: Sequence[str], columns: Sequence[str]
) -> StructType:
    """Inferred from the partitions about to be read (or one file), not the whole history."""
    sample_paths = list(paths) or [side.listing[0].uri if side.listing else side.root]
    sample = _reader(spark, side).load([literal(path) for path in sample_paths])
    return string_partitions(sample.schema, columns)
