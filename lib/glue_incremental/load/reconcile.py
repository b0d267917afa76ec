"""Hard deletes: a reconcile removes the target keys the source no longer has.

It runs every ``--reconcile_every`` committed runs, or when a run is started with
``--reconcile true`` (the CLI: ``run ... --reconcile true``). It reads only the
source's primary keys (JDBC: one pushed-down ``SELECT`` of the key columns; a file
source of full snapshots, ``--file_snapshots``: the newest file's, ``sources.snapshots``) and
turns each stored row whose key is gone into a delete (``deletes.markers.DELETED``) merged
with the run's rows, so the removal is part of the run's one publish and commit.

Safety stop: a source that returns no keys, or a reconcile that would remove more
than ``--reconcile_max_fraction`` of the target's keys, writes nothing and fails the
run with one line (the failed-run alarm pages). First run: nothing to reconcile.
Design: ``docs/deletes.md``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType

from glue_incremental.args import ArgumentError
from glue_incremental.deletes import markers as deletes
from glue_incremental.deletes import tombstones
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.io.spark_steps import named
from glue_incremental.run.summary import JsonValue

if TYPE_CHECKING:
    from glue_incremental.load.config import LoadConfig
    from glue_incremental.run.context import IncrementalRun
    from glue_incremental.targets.registry import Target

DEFAULT_MAX_FRACTION = 0.1


class ReconcileStopped(GlueIncrementalError, RuntimeError):
    """The safety stop: the reconcile would empty or mostly empty the target; nothing written."""


@dataclass(frozen=True)
class KeyCounts:
    """What a reconcile found: the target's keys, the source's, and those gone from the source."""

    target: int
    source: int
    gone: int

    @classmethod
    def of(cls, stored: Iterable[tuple], source: Iterable[tuple]) -> KeyCounts:
        """The counts on plain Python keys (the Spark anti-join's twin)."""
        target, found = set(stored), set(source)
        return cls(len(target), len(found), len(target - found))

    def as_details(self) -> dict[str, JsonValue]:
        """The summary line's ``reconcile`` entry."""
        return {"target_keys": self.target, "source_keys": self.source, "gone_keys": self.gone}

    def check(self, max_fraction: float) -> None:
        """Raise ``ReconcileStopped`` unless removing ``gone`` keys is safe (plain Python)."""
        if self.target and not self.source:
            raise ReconcileStopped(
                f"reconcile stopped: the source returned no keys and the target has {self.target}; "
                "nothing was written (an empty or unreadable source never empties the target)"
            )
        if self.target and self.gone / self.target > max_fraction:
            raise ReconcileStopped(
                f"reconcile stopped: {self.gone} of the target's {self.target} keys are gone from "
                f"the source, more than --reconcile_max_fraction {max_fraction}; nothing was written"
            )


def parse_every(name: str, value: str | None) -> int:
    """``0`` (never) or a whole number of runs."""
    text = (value or "0").strip()
    if not text.isdigit() or len(text) > 9:
        raise ArgumentError(name, f"--{name} {value!r} is not a whole number of runs (0: never)")
    return int(text)


def parse_fraction(name: str, value: str | None) -> float:
    """A fraction of the target's keys, above 0 and at most 1."""
    try:
        fraction = float((value or "").strip())
    except ValueError:
        fraction = float("nan")
    if not 0 < fraction <= 1:
        raise ArgumentError(name, f"--{name} {value!r} is not a fraction above 0 and at most 1")
    return fraction


def check_source(config: LoadConfig) -> None:
    """A reconcile needs a source that can say a row is gone: a JDBC table, or a file source
    whose every file is a full snapshot (``--file_snapshots true``)."""
    if config.file_snapshots and config.is_jdbc:
        raise ArgumentError(
            "file_snapshots",
            "--file_snapshots is for a file source whose every file is a full snapshot; "
            "a JDBC source reconciles from its table without it",
        )
    if (config.reconcile_every or config.reconcile) and not (
        config.is_jdbc or config.file_snapshots
    ):
        option = "reconcile_every" if config.reconcile_every else "reconcile"
        raise ArgumentError(
            option,
            f"--{option} needs a JDBC source or --file_snapshots true: a file source cannot "
            "say a row is gone unless every file is a full snapshot (use --delete_marker for "
            "soft deletes)",
        )


def due(config: LoadConfig, runs_since: int | None, *, on_demand: bool) -> bool:
    """Whether this run reconciles: on demand, or the ``reconcile_every``-th run since the last."""
    if on_demand:
        return True
    every = config.reconcile_every
    return every > 0 and (runs_since or 0) + 1 >= every


def runs_since_after(config: LoadConfig, runs_since: int | None, *, reconciled: bool) -> int | None:
    """The count the run commits (None without ``--reconcile_every``: the state stays as it was)."""
    if config.reconcile_every <= 0:
        return None
    return 0 if reconciled else (runs_since or 0) + 1


def nothing_read(
    spark: Any, target_schema: StructType, delivery_types: dict[str, str]
) -> DataFrame:
    """The rows of a reconciling run that read no file: none, in the target's shape (with
    ``delivery`` columns), so the reconcile still merges and publishes."""
    rows = spark.createDataFrame([], target_schema)
    for name, kind in delivery_types.items():
        rows = rows.withColumn(name, F.lit(None).cast(kind))
    return rows


@dataclass(frozen=True)
class Reconciled:
    """``rows``: the run's rows plus the gone keys' deletes; ``counts``: what was found.
    ``in_place``: every gone key's delete names, cast to text as the writer does, the
    partition directory its stored row is in (each stored row of the key has one): a Parquet
    merge rewrites those partitions anyway and need not look the key up elsewhere."""

    rows: DataFrame
    counts: KeyCounts
    in_place: bool


def with_gone_keys(
    run: IncrementalRun,
    config: LoadConfig,
    target: Target,
    rows: DataFrame,
    source_keys: Callable[[], DataFrame],
) -> Reconciled:
    """``rows`` (with ``deletes.markers.DELETED``) plus a delete for every stored row whose key is gone.

    A gone key's delete is its stored row itself, so it ties with it on the watermark and
    wins as the row just read does; a newer version of the key read by this run still wins
    (the key came back, or was deleted after the read: the next reconcile decides). Delivery
    columns ``source_keys`` returns (a snapshot's) are the delete's delivery: it is delivered
    with the snapshot that lacks the key, after any stored row's; its tombstone keeps the
    removed row (``deletes.tombstones.mark_gone``), so a later snapshot that has the key again
    brings it back, whatever the watermark it has there.
    """
    if deletes.DELETED not in rows.columns:
        rows = rows.withColumn(deletes.DELETED, F.lit(False))
    spark = rows.sparkSession
    with named(spark, "reconcile: list the target's files"):
        stored = target.read_as_of_start(run)
    if stored is None:
        return Reconciled(rows, KeyCounts(0, 0, 0), in_place=True)
    key_columns = [F.col(f"`{name}`") for name in config.primary_key]
    read = source_keys()
    stamped = [
        name for name in read.columns if name in rows.columns and name not in config.primary_key
    ]
    found = read.select(*key_columns).distinct().persist()
    stored_keys = stored.select(*key_columns).distinct().persist()
    try:
        # ``found`` and ``stored_keys`` are persisted for the anti-join and the counts only
        # (each read once), and released in ``finally``, before any later reconcile plans
        # the same query.
        # Kept for the rest of the run (the merge and publish act on it several times): once
        # ``found`` is released, an uncached anti-join would read the source's keys again per
        # action (six more full key reads at 1M keys, tests/benchmarks/bench_reconcile.py).
        # A checkpoint, not ``persist``: Spark serves a persisted frame to any later query of
        # the same plan, and the next batch's (or run's) reconcile is the same plan over a
        # target and snapshot that changed: it got this reconcile's gone keys back.
        gone_keys = _by_key(stored_keys, found, config.primary_key, "left_anti")
        with named(spark, "reconcile: compare the source's keys with the target's"):
            gone_keys = gone_keys.localCheckpoint()
            counts = KeyCounts(stored_keys.count(), found.count(), gone_keys.count())
        counts.check(config.reconcile_max_fraction)
        if not counts.gone:
            return Reconciled(rows, counts, in_place=True)
        gone = _by_key(stored, gone_keys, config.primary_key, "left_semi")
        if stamped:
            gone = gone.drop(*stamped).crossJoin(read.select(*stamped).limit(1))
            gone = tombstones.mark_gone(gone, stamped)
        # Read now, before the run evolves the target (``Target.evolve``): a widened column
        # rewrites every Parquet partition (the files the plan names are gone) and Iceberg
        # refuses a plan of the older schema ("Cannot project long to ... IntegerType").
        # At most --reconcile_max_fraction of the target's rows.
        with named(spark, "reconcile: read the stored rows of the gone keys"):
            gone = gone.localCheckpoint()
            in_place = _in_place(gone, rows, config.partition_by)
        gone = gone.select(*[_typed(gone, rows, name) for name in rows.columns])
        return Reconciled(rows.unionByName(gone), counts, in_place)
    finally:
        found.unpersist()
        stored_keys.unpersist()


def _by_key(rows: DataFrame, keys: DataFrame, primary_key: Sequence[str], how: str) -> DataFrame:
    """``rows`` joined (semi or anti) with ``keys``, a null equal to a null: the merge groups a
    null key as one key, so a null key the source still has is not gone."""
    aliases = [f"__glue_incremental_reconcile_key_{index}" for index in range(len(primary_key))]
    wanted = keys.select(
        *[F.col(f"`{k}`").alias(a) for k, a in zip(primary_key, aliases, strict=True)]
    )
    same = [
        F.col(f"`{k}`").eqNullSafe(wanted[a]) for k, a in zip(primary_key, aliases, strict=True)
    ]
    return rows.join(wanted, functools.reduce(operator.and_, same), how)


def _in_place(gone: DataFrame, rows: DataFrame, partition_by: Sequence[str]) -> bool:
    """Whether each stored partition text of ``gone`` comes back unchanged from the cast to
    the rows' type and back to text (``_typed``, then the writer): a partition column whose
    type changed since a row was stored may not (``007`` as a number is ``7``)."""
    changed = []
    for name in partition_by:
        if name not in gone.columns or not isinstance(gone.schema[name].dataType, StringType):
            return False  # not read from directory names: nothing to compare with
        kind = rows.schema[name].dataType
        if not isinstance(kind, StringType):
            column = F.col(f"`{name}`")
            changed.append(~column.cast(kind).cast(StringType()).eqNullSafe(column))
    return not changed or gone.where(functools.reduce(operator.or_, changed)).isEmpty()


def _typed(stored: DataFrame, rows: DataFrame, name: str) -> Any:
    """A stored column in the type of the rows read (partition columns are read as text)."""
    if name == deletes.DELETED:
        return F.lit(True).alias(name)
    if name not in stored.columns:
        return F.lit(None).cast(rows.schema[name].dataType).alias(name)
    return F.col(f"`{name}`").cast(rows.schema[name].dataType).alias(name)
