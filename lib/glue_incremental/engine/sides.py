"""One side of a dataset join: what changed since its bookmark, and its full data for affected partitions.

Each side format has a ``SideSource`` (``SIDE_SOURCES``): ``FileSideSource`` plans a file
side as the load plans a file dataset (``sources.file_dataset``: listed once, an ``s3://``
side by the S3 discovery rules, planned with its file bookmark), bounded by the upstream's
commit when it has one; ``IcebergSideSource`` reads a table by changelog
(``sources.iceberg_changelog``). Partition values stay strings, exactly as named in paths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, Protocol, cast

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType, _parse_datatype_string

from glue_incremental.engine import s3_side
from glue_incremental.engine.side_partitions import (
    Partition,
    as_text,
    partition_of,
    partition_strings,
    string_partitions,
)
from glue_incremental.engine.upstream import Upstream, unsettled, unsettled_files, upstream_view
from glue_incremental.partitions.paths import literal, partition_dir
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import JoinSideState
from glue_incremental.sources import files as file_source
from glue_incremental.sources import partition_types
from glue_incremental.sources.discovery import Discovery, DiscoveryState
from glue_incremental.sources.file_dataset import FileDataset, FileDatasetPlan, band_seconds
from glue_incremental.sources.iceberg_changelog import IcebergChangelogSource
from glue_incremental.sources.reading import SOURCE_FORMATS as FILE_FORMATS
from glue_incremental.targets.iceberg.tables import IcebergTarget


class _Partitioned(Protocol):
    @property
    def partition_by(self) -> Sequence[str]: ...


class SideOptions(Protocol):
    """What planning a side reads of a job's options, per side name: the join's
    ``JoinJobConfig``, or one declared ``Dataset`` (``engine.datasets.SideConfig``)."""

    @property
    def lookback(self) -> timedelta: ...
    @property
    def side_discovery(self) -> Discovery: ...
    @property
    def spec(self) -> _Partitioned: ...
    @property
    def upstream_jobs(self) -> Mapping[str, str]: ...
    def path(self, side: str) -> str: ...
    def format(self, side: str) -> str: ...
    def schema(self, side: str) -> str | None: ...
    def side_target(self, side: str) -> IcebergTarget: ...


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
    new_rows: DataFrame | None  # every changed row: what names the affected partitions
    source: SideSource  # what planned it, and reads its affected partitions
    iceberg_table: IcebergTarget | None = None
    iceberg_snapshot: int | None = None
    files_plan: FileDatasetPlan | None = None  # a file side's plan (``sources.file_dataset``)
    upper_bound_ms: int | None = None
    # The rows that arrived, when not all of new_rows did (an Iceberg changelog's deletes).
    arrived_rows: DataFrame | None = None

    @property
    def increment(self) -> DataFrame | None:
        """The rows that arrived since the side's state: new_rows without deletes."""
        return self.arrived_rows if self.iceberg_table is not None else self.new_rows

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
    def s3(self) -> FileDatasetPlan | None:
        """An ``s3://`` side's plan: listed by the discovery rules, its lister kept to list
        partitions later (the side's request count includes them)."""
        planned = self.files_plan
        return planned if planned is not None and planned.lister is not None else None

    @property
    def discovery_state(self) -> DiscoveryState | None:
        return self.s3.next_state if self.s3 else None

    def leaves(
        self, pending: Sequence[Partition], published_at_ms: int, output_table: str | None
    ) -> JoinSideState:
        """The state this side commits: its bookmark or snapshot, the partitions left
        ``pending``, its upstream's state and the publish time."""
        return JoinSideState(
            published_at_ms=published_at_ms,
            pending_partitions=tuple(pending),
            upstream=self.upstream.state() if self.upstream else None,
            files=self.next_files,
            discovery=self.discovery_state,
            iceberg_snapshot_id=self.iceberg_snapshot,
            iceberg_table=output_table,
        )

    def plan_summary(self) -> dict[str, Any]:
        s3 = self.s3
        if s3 is None or s3.lister is None:
            return dict(self.plan.summary())
        return {**s3.summary(), "listing_requests": s3.lister.requests}

    def cover(self, partitions: Iterable[Partition], columns: Sequence[str]) -> None:
        """Lists those of ``partitions`` an ordered S3 run left unlisted: whether they exist
        (to read them whole) and whether an upstream wrote there after its commit."""
        s3 = self.s3
        if s3 is None or s3.lister is None:
            return
        wanted = list(partitions)
        missing = s3_side.unlisted(s3.found.listed_after, wanted, columns)
        # Above its StartAfter the run listed everything: a partition the bookmark knew with
        # no file listed now was emptied (an upstream removed it) and is not read.
        listed = {partition_of(source, columns) for source in self.listing}
        self.pruned_partitions -= {
            p for p in wanted if p not in listed and p not in missing.values()
        }
        if not missing:
            return
        found = s3_side.list_partitions(s3.lister, missing)
        known = {source.uri for source in self.listing}
        self.listing.extend(source for source in found if source.uri not in known)
        present = {partition_of(source, columns) for source in found}
        self.pruned_partitions -= set(missing.values()) - present
        if self.upstream is not None:
            self.unsettled |= unsettled_files(found, self.upper_bound_ms, columns)

    def listing_of(self, partitions: Sequence[Partition], columns: Sequence[str]) -> list | None:
        """An S3 side's files in ``partitions`` (None elsewhere: the caller lists the side)."""
        s3 = self.s3
        if s3 is None or s3.lister is None:
            return None
        directories = [partition_dir(columns, as_text(p)) for p in partitions]
        return s3_side.list_partitions(s3.lister, directories)


class SideSource(Protocol):
    """A join side's source: the side's increment since its slot's state, and its partitions.

    ``plan`` is the ``Source`` steps for one side (``load_sources``): it reads the slot's
    state (``JoinSideState``), writes nothing, and returns a ``Side`` holding the new rows
    (lazily), the partitions they touch once counted, and the state the side leaves
    (``Side.leaves``). ``read_partitions`` is the join-only operation: the side's whole
    data of exactly the affected partitions, as of what this run consumes.
    Invariants: ``docs/targets-and-sources.md``.
    """

    def plan(self, run: IncrementalRun, slot: str) -> Side: ...

    def read_partitions(
        self, spark: SparkSession, side: Side, affected: Sequence[Partition]
    ) -> DataFrame: ...


@dataclass(frozen=True)
class FileSideSource:
    """A file dataset side (``root``: a Hadoop path, or ``s3://`` listed by discovery rules),
    new files by its file bookmark, bounded by its upstream's commit when it has one.
    First run (or after a reset): every file is new."""

    root: str
    fmt: str
    schema_text: str | None
    columns: tuple[str, ...]
    lookback: timedelta
    discovery: Discovery
    upstream_job: str | None = None

    @classmethod
    def of(cls, config: SideOptions, name: str) -> FileSideSource:
        return cls(
            root=config.path(name),
            fmt=config.format(name),
            schema_text=config.schema(name),
            columns=tuple(config.spec.partition_by),
            lookback=config.lookback,
            discovery=config.side_discovery,
            upstream_job=config.upstream_jobs.get(name),
        )

    @property
    def dataset(self) -> FileDataset:
        """The side's files as a file dataset; a root with no file yet is an empty side."""
        return FileDataset(
            self.root, self.discovery, band_seconds(self.lookback), absent_is_empty=True
        )

    def plan(self, run: IncrementalRun, slot: str) -> Side:
        """List, plan with the bookmark, read the new files (lazily)."""
        spark, root, columns = run.spark, self.root, self.columns
        previous = JoinSideState.from_state(run.previous(slot))
        bookmark = (previous.files if previous else None) or file_source.FileBookmark.initial()
        upstream = None
        if self.upstream_job is not None:
            seen = previous.upstream if previous else None
            upstream = upstream_view(run.store, self.upstream_job, seen, path=root, columns=columns)
        upper_ms = _upper_bound_ms(upstream, run.upper_bound(slot))
        found = self.dataset.plan(
            spark,
            bookmark,
            previous.discovery if previous else None,
            run_start_ms=int(run.started_at * 1000),
            upper_bound_ms=upper_ms,
            force_full_listing=run.starts_from_an_earlier_state(slot),
        )
        listing, plan, exists = list(found.listing), found.file_plan, found.exists
        # Partitions that hold files this run did not list: they exist unless deleted since.
        pruned = {partition_of(pairs, columns) for pairs in found.unlisted_partitions}
        declared = _declared_schema(self.schema_text, columns)
        return Side(
            name=slot,
            root=root,
            fmt=self.fmt,
            declared_schema=declared,
            previous=previous,
            band_start_ms=bookmark.band_start_ms,
            exists=exists,
            listing=listing,
            pruned_partitions=pruned,
            plan=plan,
            upstream=upstream,
            unsettled=unsettled(spark, root, listing, upper_ms, columns) if upstream else set(),
            new_rows=self._read_new(spark, plan.files, declared),
            source=self,
            files_plan=found,
            upper_bound_ms=upper_ms,
        )

    def _read_new(
        self,
        spark: SparkSession,
        files: Sequence[file_source.SourceFile],
        declared: StructType | None,
    ) -> DataFrame | None:
        if not files:
            return None
        rows = file_source.read_files(
            spark,
            files,
            root_uri=self.root,
            source_format=cast(Literal["parquet", "json", "csv"], self.fmt),
            schema=declared,
            options=_read_options(self.fmt),
        )
        return None if rows is None else partition_strings(rows, self.columns)

    def read_partitions(
        self, spark: SparkSession, side: Side, affected: Sequence[Partition]
    ) -> DataFrame:
        """The side's whole data of ``affected`` (lazily; the caller prunes to them).

        Only the affected partitions' directories are listed and read, not the history;
        the caller's partition filter still shows in the scan's PartitionFilters.
        """
        columns = self.columns
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


@dataclass(frozen=True)
class IcebergSideSource:
    """An Iceberg table side, read by changelog (``sources.iceberg_changelog``) since the
    snapshot this side last consumed. Only committed snapshots exist, so no upstream rule
    is needed. First run, or after the upstream was rolled back past that snapshot: the
    whole table at its current snapshot."""

    table: IcebergTarget
    columns: tuple[str, ...]

    @classmethod
    def of(cls, config: SideOptions, name: str) -> IcebergSideSource:
        return cls(config.side_target(name), tuple(config.spec.partition_by))

    def plan(self, run: IncrementalRun, slot: str) -> Side:
        previous = JoinSideState.from_state(run.previous(slot))
        consumed = previous.iceberg_snapshot_id if previous else None
        changes = IcebergChangelogSource(self.table).plan(run.spark, consumed)
        new_rows = arrived = None
        if changes.rows is not None:
            new_rows = partition_strings(changes.rows, self.columns)
        if changes.arrived is not None:
            arrived = partition_strings(changes.arrived, self.columns)
        return Side(
            name=slot,
            root=self.table.name,
            fmt="iceberg",
            declared_schema=None,
            previous=previous,
            band_start_ms=None,
            exists=changes.end_snapshot is not None,
            listing=[],
            pruned_partitions=set(),
            plan=IcebergPlan(changes.start_snapshot, changes.end_snapshot),
            upstream=None,
            unsettled=set(),
            new_rows=new_rows,
            source=self,
            iceberg_table=self.table,
            iceberg_snapshot=changes.end_snapshot,
            arrived_rows=arrived,
        )

    def read_partitions(
        self, spark: SparkSession, side: Side, affected: Sequence[Partition]
    ) -> DataFrame:
        """The table as of the snapshot this run consumes (lazily; the caller prunes it)."""
        # has_schema guarantees a snapshot here
        frame = IcebergChangelogSource(self.table).read_at(spark, side.iceberg_snapshot)
        return partition_strings(cast(DataFrame, frame), self.columns)


# One implementation per side format (``--left_format`` / ``--right_format``).
SIDE_SOURCES: dict[str, Callable[[SideOptions, str], SideSource]] = {
    **dict.fromkeys(FILE_FORMATS, FileSideSource.of),
    "iceberg": IcebergSideSource.of,
}


def side_source(config: SideOptions, name: str) -> SideSource:
    """The source of side ``name``, by its format."""
    return SIDE_SOURCES[config.format(name)](config, name)


def plan_side(run: IncrementalRun, config: SideOptions, name: str) -> Side:
    """Plan ``name``'s read against its slot ``name`` (``SideSource.plan``). Partition values
    are the text in the paths (``hour=03`` is ``"03"``) whatever the session infers: Spark
    finds a read's partitions when the read is created, here."""
    with partition_types.as_text(run.spark):
        return side_source(config, name).plan(run, name)


def _upper_bound_ms(upstream: Upstream | None, replay_to: Mapping[str, Any] | None) -> int | None:
    """The newest file time this run may read: the upstream's commit, a replay's end."""
    # Nothing committed upstream yet: nothing of it is visible.
    upper_ms = upstream.visible_until_ms if upstream is not None else None
    if replay_to:
        to_mark = file_source.FileBookmark.from_state(replay_to.get("files")).high_mark_ms
        if to_mark is not None:
            upper_ms = to_mark if upper_ms is None else min(upper_ms, to_mark)
    return upper_ms


def _declared_schema(schema_text: str | None, columns: Sequence[str]) -> StructType | None:
    if not schema_text:
        return None
    return string_partitions(cast(StructType, _parse_datatype_string(schema_text)), columns)


def _read_options(fmt: str) -> dict[str, str]:
    return {"header": "true"} if fmt == "csv" else {}


def read_full(
    spark: SparkSession, side: Side, affected: Sequence[Partition], columns: Sequence[str]
) -> DataFrame:
    """The side's whole data of ``affected`` (lazily; the caller prunes it to ``affected``):
    ``SideSource.read_partitions`` of the source that planned it (``columns`` are its own);
    partition values as the text in the paths, as ``plan_side`` reads them."""
    with partition_types.as_text(spark):
        return side.source.read_partitions(spark, side, affected)


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
