"""What both history targets share: a version row's working schema and the version counts.

The Parquet and the Iceberg history targets (``targets/parquet/history.py``,
``targets/iceberg/history.py``) build versions with the same per-key core
(``history.groups``); this holds the Spark side of what they do alike.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, cast

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

from glue_incremental.history import groups
from glue_incremental.history.errors import NullWatermark
from glue_incremental.history.options import VERSION_COUNTS, HistoryOptions
from glue_incremental.io.jvm_calls import observed

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun

__all__ = [
    "add_version_counts",
    "counted_versions",
    "observed_counts",
    "refuse_null_watermarks",
    "refuse_rows",
    "split_batch",
    "start_version_counts",
    "tagged_schema",
    "version_counts",
]


def tagged_schema(rows: DataFrame, layout: groups.Layout) -> StructType:
    """The schema of ``groups.Layout.columns``: the rows' types, the added columns'."""
    options = layout.options
    types = {f.name: f.dataType for f in rows.schema.fields}
    watermark = types[options.watermark_column]
    types.update(
        {
            options.valid_from: watermark,
            options.valid_to: watermark,
            options.is_current: BooleanType(),
            groups.DELETED: BooleanType(),
            groups.ROLE: StringType(),
            groups.OPENED: LongType(),
            groups.CLOSED: LongType(),
        }
    )
    return StructType([StructField(name, types[name]) for name in layout.columns])


def split_batch(delivery: Sequence[str]) -> tuple[tuple[str, ...], str | None]:
    """A write's delivery columns without ``groups.BATCH``, and ``BATCH`` if among them: a
    dry run's batch number rides with the delivery columns (merge-only, never written) but
    orders no tie, so it is not part of a delivery."""
    batch = groups.BATCH if groups.BATCH in delivery else None
    return tuple(name for name in delivery if name != groups.BATCH), batch


def start_version_counts(run: IncrementalRun) -> None:
    """Every history run reports its versions, 0 when it changes none (the summary's
    ``versions_opened``/``versions_closed``; ``VersionsOpened``/``VersionsClosed``)."""
    for name in VERSION_COUNTS:
        run.details.setdefault(name, 0)


def add_version_counts(run: IncrementalRun, opened: int, closed: int) -> None:
    """Add a publish's (or a dry run's) versions to the run's; a run's batches add up."""
    for name, count in zip(VERSION_COUNTS, (opened, closed), strict=True):
        run.details[name] = int(cast(int, run.details.get(name) or 0)) + count


def version_counts(changes: DataFrame) -> tuple[int, int]:
    """The versions opened and closed, summed over the per-key count rows of ``changes``
    (``history.groups.COUNTS``)."""
    summed = changes.where(F.col(groups.ROLE) == groups.COUNTS).agg(
        F.coalesce(F.sum(groups.OPENED), F.lit(0)), F.coalesce(F.sum(groups.CLOSED), F.lit(0))
    )
    opened, closed = summed.first() or (0, 0)
    return int(opened), int(closed)


def counted_versions(changes: DataFrame) -> tuple[DataFrame, Observation]:
    """``changes`` counting the versions opened and closed as a write reads it: every frame
    derived from the result carries the count, and the first action that completes fills
    the observation (``observed_counts``), so the publish needs no job of its own for it.
    Only the count rows hold counts (other rows' are null): a sum over every row is theirs."""
    observation = Observation()
    observed = changes.observe(
        observation,
        F.coalesce(F.sum(groups.OPENED), F.lit(0)).alias("opened"),
        F.coalesce(F.sum(groups.CLOSED), F.lit(0)).alias("closed"),
    )
    return observed, observation


def observed_counts(observation: Observation) -> tuple[int, int]:
    """The versions opened and closed once an action over ``counted_versions`` completed."""
    return int(observed(observation, "opened")), int(observed(observation, "closed"))


def refuse_rows(
    rows: DataFrame, options: HistoryOptions, hidden: Collection[str | None], counted: int | None
) -> None:
    """The history refusals, before anything is written (a widening's rewrite included): a
    tracked column ``rows`` lack, a source column named like an added one (``hidden`` ones
    are not the source's), a null watermark (``counted``: as ``refuse_null_watermarks``)."""
    options.check_columns([name for name in rows.columns if name not in hidden])
    refuse_null_watermarks(rows, options, counted)


def refuse_null_watermarks(rows: DataFrame, options: HistoryOptions, counted: int | None) -> None:
    """NullWatermark naming the first such row's key if a row of ``rows`` has no watermark
    (a version needs its bound). ``counted``: how many have none, when the batch's statistics
    counted them: none, and no job looks."""
    if counted == 0:
        return
    found = rows.where(F.col(f"`{options.watermark_column}`").isNull()).limit(1).collect()
    if found:
        row = found[0].asDict()
        raise NullWatermark({name: row.get(name) for name in options.primary_key})
