"""A declared dataset planned as a side (``engine.sides``): its increment since the slot's
commit, the partitions it touches and a read of exactly those partitions, whole.

``SideConfig`` answers the side planner's few questions (``engine.sides.SideOptions``)
for one dataset. Several datasets planned together (``plan_sources``: the join's two
sides) share their affected partitions. ``Planned`` (``engine.planned``) is what the
engine asks of any planned source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from pyspark.sql import DataFrame

from glue_incremental.engine.declarations import Dataset
from glue_incremental.engine.errors import DeclarationError, NoSchemaYet
from glue_incremental.engine.side_partitions import declared_types
from glue_incremental.engine.sides import Side, plan_side, read_full
from glue_incremental.engine.upstream import recheck_upstream
from glue_incremental.partitions.predicates import (
    filter_partitions,
    normalise_partitions,
    partition_counts,
    validate_partition_values,
)
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import JoinSideState
from glue_incremental.sources.discovery import Discovery
from glue_incremental.targets.iceberg.tables import IcebergTarget


@dataclass(frozen=True)
class _Spec:
    partition_by: tuple[str, ...]


@dataclass(frozen=True)
class SideConfig:
    """``JoinJobConfig``'s questions about one side, answered for ``dataset``."""

    name: str
    dataset: Dataset

    @property
    def lookback(self) -> timedelta:
        return self.dataset.lookback

    @property
    def side_discovery(self) -> Discovery:
        return self.dataset.discovery

    @property
    def spec(self) -> _Spec:
        return _Spec(self.dataset.partition_by)

    @property
    def upstream_jobs(self) -> dict[str, str]:
        return {self.name: self.dataset.upstream_job} if self.dataset.upstream_job else {}

    def path(self, side: str) -> str:
        return self.dataset.path

    def format(self, side: str) -> str:
        return self.dataset.format

    def schema(self, side: str) -> str | None:
        return self.dataset.schema

    def side_target(self, side: str) -> IcebergTarget:
        return IcebergTarget(self.dataset.path, self.dataset.catalog)


@dataclass
class PlannedSource:
    """One dataset as planned for this run: the side, its counted increment, the partitions
    to recompute and those an upstream has not settled yet (left pending)."""

    name: str
    dataset: Dataset
    side: Side
    counts: Mapping[Partition, int]
    affected: list[Partition]
    pending: list[Partition]
    # An upstream's commits could not name what changed (``CommittedChanges.everything``):
    # every partition is recomputed and the job's targets are replaced whole.
    recompute_all: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        return self.dataset.partition_by

    @property
    def records_read(self) -> int:
        return sum(self.counts.values())

    @property
    def has_news(self) -> bool:
        return bool(self.affected)

    @property
    def new_rows(self) -> DataFrame | None:
        return self.side.increment

    @property
    def late_files(self) -> int:
        return self.side.plan.late_file_count

    @property
    def high_mark_ms(self) -> int | None:
        return self.side.plan.next_bookmark.high_mark_ms

    @property
    def watermark_time(self) -> datetime | None:
        return _as_time(self.high_mark_ms)

    def figures(self, state: dict[str, Any]) -> dict[str, Any]:
        return {}

    def after_commit(self, run: IncrementalRun) -> None:
        return None

    def details(self) -> dict[str, Any]:
        return {
            "affected_partitions": len(self.affected),
            "pending_partitions": [list(p) for p in self.pending],
            "records_read": self.records_read,
            "files_read": len(self.side.plan.files),
            "file_plan": self.side.plan_summary(),
            **(
                {"upstream_changes": self.side.upstream.changes.details()}
                if self.side.upstream is not None
                else {}
            ),
        }

    def read(self, run: IncrementalRun, partitions: Sequence[Partition]) -> DataFrame:
        """Exactly ``partitions`` of the dataset, whole, as of the files this run consumes."""
        wanted = normalise_partitions(partitions, self.columns)
        if not self.side.has_schema:
            raise NoSchemaYet(self.name)
        frame = read_full(run.spark, self.side, wanted, self.columns)
        return cast(DataFrame, filter_partitions(frame, wanted, self.columns))

    def release(self) -> None:
        return None

    def recheck_upstream(self, run: IncrementalRun) -> None:
        """``UpstreamChanged`` if the upstream published into a partition read meanwhile."""
        side = self.side
        if side.upstream is None or not self.affected:
            return
        recheck_upstream(
            run.spark,
            self.name,
            side.root,
            side.band_start_ms,
            side.upstream,
            self.affected,
            self.columns,
            listing=side.listing_of(self.affected, self.columns),
        )

    def state(self, published_at_ms: int, output_table: str | None) -> dict[str, Any]:
        return dict(self.side.leaves(self.pending, published_at_ms, output_table).to_state())

    def unchanged(self, state: dict[str, Any]) -> bool:
        planned = JoinSideState.from_state(state)
        return planned is not None and planned.same_apart_from_publish_time(self.side.previous)


def plan_source(run: IncrementalRun, name: str, dataset: Dataset) -> PlannedSource:
    """List and plan ``dataset`` against its slot ``name`` (``plan_sources`` of one)."""
    return plan_sources(run, {name: dataset})[name]


def plan_sources(run: IncrementalRun, datasets: Mapping[str, Dataset]) -> dict[str, PlannedSource]:
    """List and plan each dataset against its slot; count their new rows per partition
    (one Spark action for all).

    First run (or a reset, or bookmarks disabled): every file is new. The affected
    partitions, shared by all of them, are those any increment touches plus those any
    left pending last run, minus those an upstream of ANY of them has not settled; each
    keeps its own unsettled ones pending (recomputed once its upstream has committed).
    The datasets share ``partition_by``; declared ``partition_types`` are checked here."""
    columns = _common_columns(datasets)
    sides = {
        name: plan_side(run, SideConfig(name, dataset), name) for name, dataset in datasets.items()
    }
    new = {name: side.new_rows for name, side in sides.items() if side.new_rows is not None}
    counts = partition_counts(*new.values(), columns=columns, names=list(new)) if new else {}
    touched = normalise_partitions((p for c in counts.values() for p in c), columns)
    types = {column: kind for d in datasets.values() for column, kind in d.partition_types.items()}
    if types:
        validate_partition_values(touched, columns, declared_types(types, columns))
    pending_before = [
        values
        for side in sides.values()
        if side.previous
        for values in side.previous.pending_partitions
    ]
    # What the upstreams' commits since the last read changed, emptied partitions included:
    # a partition the upstream removed has no new file to name it.
    changes = [side.upstream.changes for side in sides.values() if side.upstream is not None]
    committed = [p for change in changes for p in change.partitions]
    candidates = normalise_partitions([*touched, *pending_before, *committed], columns)
    for side in sides.values():
        side.cover(candidates, columns)  # S3 sides: what an ordered listing left out
    recompute_all = any(change.everything for change in changes)
    if recompute_all:
        every = [p for side in sides.values() for p in side.existing_partitions(columns)]
        candidates = normalise_partitions([*candidates, *every], columns)
    affected = [p for p in candidates if not any(p in s.unsettled for s in sides.values())]
    return {
        name: PlannedSource(
            name,
            dataset,
            sides[name],
            counts.get(name, {}),
            affected,
            [p for p in candidates if p in sides[name].unsettled],
            recompute_all,
        )
        for name, dataset in datasets.items()
    }


def _common_columns(datasets: Mapping[str, Dataset]) -> tuple[str, ...]:
    partitionings = {dataset.partition_by for dataset in datasets.values()}
    if len(partitionings) != 1:
        names = ", ".join(f"{n} by {','.join(d.partition_by)}" for n, d in datasets.items())
        raise DeclarationError(
            ",".join(datasets), f"datasets planned together share partition_by: {names}"
        )
    return partitionings.pop()


def _as_time(high_mark_ms: int | None) -> datetime | None:
    """A high mark in epoch milliseconds as a time (None: nothing read yet)."""
    return None if high_mark_ms is None else datetime.fromtimestamp(high_mark_ms / 1000, UTC)
