"""The cursor of a load: the greatest watermark read, and its arithmetic.

The cursor never moves backwards (only an explicit rewind does that); rows
dated after the run's start + ``--max_future_skew`` are loaded but do not move
it. Timestamps are stored as aware UTC datetimes, dates as dates, numbers as
they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import DateType, TimestampNTZType, TimestampType

from glue_incremental.args import ArgumentError
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.io.jvm_calls import quoted, select_sql
from glue_incremental.io.spark_listing import session_conf
from glue_incremental.io.spark_steps import named
from glue_incremental.keys import ranges as key_range

ADAPTIVE_EXECUTION = "spark.sql.adaptive.enabled"
# How far past the run's start a watermark may be and still move the cursor (``--max_future_skew``).
DEFAULT_MAX_FUTURE_SKEW = "5 minutes"


@dataclass(frozen=True)
class BatchStats:
    rows: int
    nulls: int
    future: int
    max_cursor: Any
    keys: key_range.KeyRange | None = None


def batch_stats(
    rows: DataFrame,
    watermark_column: str,
    cursor_limit: datetime,
    primary_key: Sequence[str] = (),
    partition_by: Sequence[str] = (),
) -> BatchStats:
    """Counts and the next cursor: the greatest watermark not after ``cursor_limit``.

    Rows dated after the limit (run start + ``--max_future_skew``) are loaded
    but do not move the cursor, so they are re-read (and counted in
    ``FutureWatermarkRows``) until their time comes instead of pushing the
    cursor past every row still to arrive. Only time watermarks have a limit.
    ``primary_key``: the same job also finds the batch's key range (``key_range``), and
    its distinct ``partition_by`` values. A persisted ``rows`` is counted in one Spark job
    (``one_job_over_cache``), which also collects the merge's (key, partition) pairs of a
    small batch (``key_range.aggregates``: bounded, whatever the batch).
    """
    column = quoted(watermark_column)
    data_type = rows.schema[watermark_column].dataType
    limit = limit_literal(cursor_limit, data_type)
    if limit is None:
        is_future = "false"
        bounded = column
    else:
        is_future = f"{column} > {limit}"
        bounded = f"CASE WHEN NOT ({is_future}) THEN {column} END"
    pairs = bool(partition_by)
    aggregate = select_sql(
        key_range.numbered(rows) if pairs else rows,
        [
            "count(1) AS `n`",
            f"max({bounded}) AS `max`",
            f"sum(CAST({column} IS NULL AS INT)) AS `nulls`",
            f"sum(CAST(coalesce({is_future}, false) AS INT)) AS `future`",
            *key_range.aggregates(rows.schema, primary_key, partition_by, pairs=pairs),
        ],
    )
    with (
        named(rows.sparkSession, "read the batch: counts, watermark, keys"),
        one_job_over_cache(rows),
    ):
        stats = aggregate.first()
    assert stats is not None  # a global aggregate always has one row
    return BatchStats(
        rows=int(stats["n"]),
        nulls=int(stats["nulls"] or 0),
        future=int(stats["future"] or 0),
        max_cursor=to_cursor(stats["max"], data_type),
        keys=key_range.from_aggregate(stats),
    )


def one_job_over_cache(rows: DataFrame) -> AbstractContextManager[None]:
    """A block where a global aggregate of ``rows``, when persisted, runs as one Spark job.

    Adaptive execution runs a persisted frame's first read as a job of its own (a table
    cache stage) before the aggregate's two (its shuffle, then its result): three jobs per
    batch. Over a persisted frame it has nothing else to adapt: the cached plan was fixed
    when it was persisted, and a global aggregate ends in one task. So the block runs it
    without adaptive execution: one job, which also fills the cache. An unpersisted frame
    (its plan may hold joins adaptive execution sizes) is left as it is.
    """
    if not rows.storageLevel.useMemory and not rows.storageLevel.useDisk:
        return nullcontext()
    return session_conf(rows.sparkSession, {ADAPTIVE_EXECUTION: "false"})


def limit_literal(limit: datetime, data_type: Any) -> str | None:
    """The cursor's limit as a SQL literal of the watermark's type; None for other types."""
    if isinstance(data_type, TimestampType | TimestampNTZType | DateType):
        # The session runs in UTC: the text is the UTC wall time of the limit.
        text = limit.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        return f"CAST('{text}' AS {data_type.simpleString()})"
    return None


def to_cursor(value: Any, data_type: Any) -> Any:
    """A collected max as a storable cursor: timestamps become aware UTC datetimes."""
    if value is None:
        return None
    if isinstance(data_type, TimestampNTZType):
        return value.replace(tzinfo=UTC)
    if isinstance(data_type, TimestampType):
        # PySpark builds naive datetimes in the Python process's local zone.
        return value.astimezone(UTC)
    if isinstance(data_type, DateType):
        return value
    return value


class CursorTypeMismatch(GlueIncrementalError, TypeError):
    """The stored cursor cannot be compared with the source's watermark values (set by hand?)."""

    def __init__(self, stored: Any, read: Any) -> None:
        self.stored, self.read = stored, read
        super().__init__(
            f"the stored cursor {stored!r} ({type(stored).__name__}) cannot be compared with "
            f"the watermark values read ({type(read).__name__}, e.g. {read!r}); nothing was "
            "written: set the cursor with a value of the column's type (watermarks set), or rewind"
        )


def max_cursor(previous: Any, batch: Any) -> Any:
    """The watermark never moves backwards (only an explicit rewind does that)."""
    if previous is None:
        return batch
    if batch is None:
        return previous
    try:
        return max(previous, batch)
    except TypeError:
        raise CursorTypeMismatch(previous, batch) from None


def minus(cursor: Any, lookback: timedelta) -> Any:
    if not lookback:
        return cursor
    if isinstance(cursor, datetime | date):
        return cursor - lookback
    raise ArgumentError(
        "lookback",
        f"--lookback applies to time watermarks; the stored cursor {cursor!r} is not a time",
    )


def just_after(cursor: Any) -> Any:
    if cursor is None:
        return None
    if isinstance(cursor, datetime):
        return cursor + timedelta(microseconds=1)
    if isinstance(cursor, date):
        return cursor + timedelta(days=1)
    if isinstance(cursor, int):
        return cursor + 1
    raise ArgumentError(
        "job-bookmark-to", f"cannot replay up to a cursor of type {type(cursor).__name__}"
    )


def as_time(cursor: Any) -> datetime | None:
    if isinstance(cursor, datetime):
        return cursor
    if isinstance(cursor, date):
        return datetime(cursor.year, cursor.month, cursor.day, tzinfo=UTC)
    return None
