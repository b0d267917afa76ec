"""Iceberg targets: one atomic snapshot per run, carrying the run's identity and watermark.

- **All or nothing for readers:** a run's output is one Iceberg commit (``MERGE
  INTO`` by primary key, or one overwrite on a full reload).
- **The watermark travels with the data:** the snapshot summary carries
  ``glue-incremental.run-id``, ``.state-name``, ``.state-version`` and
  ``.watermark``; the DynamoDB commit follows, and ``roll_forward`` repairs a
  crash between the two on the next run.
- **Fenced:** the lease and the table's current snapshot are checked right before
  the commit, and commits are never retried, so a zombie run commits nothing.
- Same merge rule as the Parquet writer (``targets.latest.merge_latest``).

First run: the table is created (no snapshot), then the run's one snapshot fills
it. Design notes: ``docs/iceberg.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from py4j.java_gateway import JavaObject
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from glue_incremental.deletes import markers as delete_markers
from glue_incremental.deletes import tombstones
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.hooks import hooks
from glue_incremental.io.jvm_calls import java_map
from glue_incremental.io.spark_steps import named
from glue_incremental.keys import ranges as key_ranges
from glue_incremental.keys.index import having_keys
from glue_incremental.schema.conform import with_columns_of
from glue_incremental.targets.iceberg import deliveries as iceberg_deliveries
from glue_incremental.targets.iceberg import tombstones as iceberg_tombstones
from glue_incremental.targets.iceberg.statements import merge_statement

# The snapshot summary's keys and its reading live apart, free of Spark, for the operator tools.
from glue_incremental.targets.iceberg.summary import (  # noqa: F401
    COMMITS,
    PREFIX,
    RESTORE_SNAPSHOT,
    RUN_ID,
    STATE_NAME,
    STATE_VERSION,
    WATERMARK,
    Snapshot,
)
from glue_incremental.targets.iceberg.tables import (  # noqa: F401  (the target's names, as before)
    DEFAULT_CATALOG,
    TABLE_PROPERTIES,
    IcebergTarget,
    create_table,
    java_session,
    jvm,
    table_exists,
)
from glue_incremental.targets.latest import merge_latest
from glue_incremental.watermarks import (
    DEFAULT_SLOT,
    Lease,
    UnknownRun,
    WatermarkItem,
    Watermarks,
)
from glue_incremental.watermarks.encoding import encode


class SnapshotMoved(GlueIncrementalError, RuntimeError):
    """The table changed since this run started: another writer committed; nothing was written."""

    def __init__(self, table: str, expected: int | None, actual: int | None) -> None:
        self.table, self.expected, self.actual = table, expected, actual
        super().__init__(
            f"Iceberg table {table} moved from snapshot {expected} to {actual} during this run; "
            "nothing was committed (another writer?)"
        )


# -- pure transforms ------------------------------------------------------------------------------


def resolve_upserts(
    incoming: DataFrame,
    existing: DataFrame | None,
    primary_key: Sequence[str],
    order_by: str,
    delivery: Sequence[str] = (),
    deleted: str | None = None,
    *,
    keep_delivery: bool = False,
    buried: DataFrame | None = None,
) -> DataFrame:
    """One row per key of ``incoming``: the Parquet writer's rule over stored and new versions.

    On an equal watermark the later ``delivery`` wins (columns of ``incoming``, and of
    ``existing`` where it carries them: its rows' kept deliveries; dropped from the result
    unless ``keep_delivery``); a stored row whose delivery is unknown loses to the row just read.
    ``buried``: tombstones of incoming keys as candidates (``deletes.tombstones.as_candidates``).
    """
    prefer = "__glue_incremental_incoming"
    candidates = incoming.withColumn(prefer, F.lit(1))
    if existing is not None:
        data_columns = [name for name in incoming.columns if name not in delivery]
        kept = [name for name in delivery if name in existing.columns]
        # A snapshot from before a column was added reads without it: null there.
        stored = with_columns_of(
            existing, incoming.schema, [*(n for n in data_columns if n != deleted), *kept]
        )
        stored = delete_markers.stored(stored, deleted).withColumn(prefer, F.lit(0))
        for name in delivery:
            if name not in kept:
                stored = stored.withColumn(name, F.lit(None).cast(incoming.schema[name].dataType))
        candidates = stored.unionByName(candidates)
    if buried is not None:
        candidates = candidates.unionByName(buried.withColumn(prefer, F.lit(0)))
    return merge_latest(
        candidates,
        primary_key,
        order_by,
        prefer=prefer,
        delivery=delivery,
        keep_delivery=keep_delivery,
        deleted=deleted,
    )


def snapshot_properties(
    *,
    run_id: str,
    state_name: str,
    state_versions: Mapping[str, int],
    watermarks: Mapping[str, Mapping[str, object]],
    commits: bool,
) -> dict[str, str]:
    """The summary of a run's snapshot: per slot, the state it commits and the version it read."""
    return {
        RUN_ID: run_id,
        STATE_NAME: state_name,
        STATE_VERSION: json.dumps(dict(state_versions), sort_keys=True),
        WATERMARK: encode(watermarks),
        COMMITS: "true" if commits else "false",
    }


# -- I/O ------------------------------------------------------------------------------------------


def _java_table(spark: SparkSession, target: IcebergTarget) -> JavaObject:
    return jvm(spark).org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        java_session(spark), target.name
    )


def current_snapshot(spark: SparkSession, target: IcebergTarget) -> Snapshot | None:
    """The table's current snapshot (freshly loaded), or None (no table, or no snapshot yet)."""
    if not table_exists(spark, target):
        return None
    table = _java_table(spark, target)
    table.refresh()
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return None
    return _snapshot(spark, snapshot)


def snapshots(spark: SparkSession, target: IcebergTarget) -> list[Snapshot]:
    """Every snapshot of the table, oldest first (not only the current lineage)."""
    if not table_exists(spark, target):
        return []
    table = _java_table(spark, target)
    table.refresh()
    found = [_snapshot(spark, snapshot) for snapshot in table.snapshots()]
    return found


def _snapshot(spark: SparkSession, java_snapshot: JavaObject) -> Snapshot:
    parent = java_snapshot.parentId()
    summary = {
        str(key): str(value) for key, value in java_map(spark, java_snapshot.summary()).items()
    }
    return Snapshot.from_summary(
        int(java_snapshot.snapshotId()), int(parent) if parent is not None else None, summary
    )


def snapshot_of_run(spark: SparkSession, target: IcebergTarget, run_id: str) -> Snapshot | None:
    matches = [snapshot for snapshot in snapshots(spark, target) if snapshot.run_id == run_id]
    return matches[-1] if matches else None


def table_schema(spark: SparkSession, target: IcebergTarget) -> StructType | None:
    return spark.table(target.quoted).schema if table_exists(spark, target) else None


def read_at(
    spark: SparkSession, target: IcebergTarget, snapshot_id: int | None
) -> DataFrame | None:
    if snapshot_id is None:
        return None
    return spark.read.option("snapshot-id", str(snapshot_id)).table(target.name)


def is_ancestor(
    spark: SparkSession, target: IcebergTarget, snapshot_id: int, ancestor_id: int
) -> bool:
    """Whether ``ancestor_id`` is in ``snapshot_id``'s lineage (false after a rollback past it)."""
    table = _java_table(spark, target)
    util = jvm(spark).org.apache.iceberg.util.SnapshotUtil
    return bool(util.isAncestorOf(table, int(snapshot_id), int(ancestor_id)))


def changed_rows(
    spark: SparkSession, target: IcebergTarget, start_id: int, end_id: int
) -> DataFrame:
    """Rows inserted, deleted or updated after snapshot ``start_id`` up to ``end_id``.

    Iceberg's changelog view (carried-over rows of copy-on-write rewrites removed), so a
    MERGE that rewrote a file shows only the rows it changed, each as its old and new version.
    """
    return without_metadata(changelog_with_metadata(spark, target, start_id, end_id))


def arrived_rows(changes: DataFrame) -> DataFrame:
    """Of a changelog read with its metadata, the rows that arrived: inserts and the new
    version of each update (a delete, or an update's old version, did not arrive)."""
    return without_metadata(changes.where(F.col("_change_type").isin("INSERT", "UPDATE_AFTER")))


def changelog_with_metadata(
    spark: SparkSession, target: IcebergTarget, start_id: int, end_id: int
) -> DataFrame:
    """``changed_rows`` with Iceberg's ``_change_type`` (and ordinal, snapshot) columns kept."""
    view = f"glue_incremental_changes_{os.getpid()}_{start_id}_{end_id}".replace("-", "_")
    spark.sql(
        f"CALL {target.catalog}.system.create_changelog_view("
        f"table => '{target.table}', "
        f"options => map('start-snapshot-id', '{start_id}', 'end-snapshot-id', '{end_id}'), "
        f"changelog_view => '{view}')"
    )
    return spark.table(view)


def without_metadata(changes: DataFrame) -> DataFrame:
    """A changelog's rows without Iceberg's metadata columns."""
    metadata = [
        name
        for name in changes.columns
        if name.startswith("_change") or name == "_commit_snapshot_id"
    ]
    return changes.drop(*metadata)


class _Callable:
    """A Python action Java can call (``java.util.concurrent.Callable``) through py4j."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action
        self.error: BaseException | None = None

    def call(self) -> None:
        try:
            self.action()
        except BaseException as error:  # handed back to the Python caller, not lost in py4j
            self.error = error
            raise
        return None

    class Java:
        implements = ["java.util.concurrent.Callable"]


def _fence(
    spark: SparkSession, target: IcebergTarget, started_from: int | None, guard: Callable[[], None]
) -> None:
    """Right before a commit: the lease still held, the table still at the run's snapshot."""
    guard()
    current = current_snapshot(spark, target)
    current_id = current.snapshot_id if current else None
    if current_id != started_from:
        raise SnapshotMoved(target.name, started_from, current_id)
    hooks.point("iceberg.commit", table=target.name)


# The same fence for the history target's publish (``targets.iceberg.history``).
fence = _fence


def commit_with_properties(
    spark: SparkSession, properties: Mapping[str, str], action: Callable[[], None]
) -> None:
    """Run ``action`` (one Iceberg write) so its snapshot summary carries ``properties``."""
    gateway = spark.sparkContext._gateway
    ensure_callback_server_started(gateway)
    java = jvm(spark)
    java_properties = java.java.util.HashMap()
    for key, value in properties.items():
        java_properties.put(key, value)
    callable_ = _Callable(action)
    try:
        java.org.apache.iceberg.spark.CommitMetadata.withCommitProperties(
            java_properties, callable_, java.java.lang.Class.forName("java.lang.RuntimeException")
        )
    except Exception:
        if callable_.error is not None:
            raise callable_.error from None
        raise


@dataclass(frozen=True)
class UpsertResult:
    records_written: int
    snapshot_id: int | None
    records_deleted: int = 0


def publish_upsert(
    spark: SparkSession,
    target: IcebergTarget,
    rows: DataFrame,
    *,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    order_by: str,
    replace_all: bool,
    started_from: int | None,
    properties: Mapping[str, str],
    guard: Callable[[], None],
    delivery: Sequence[str] = (),
    deleted: str | None = None,
    incoming_range: key_ranges.KeyRange | None = None,
) -> UpsertResult:
    """Merge ``rows`` into the table in exactly one snapshot, or commit nothing.

    ``started_from`` is the snapshot id the run read at its start; the commit
    happens only while the table is still there and the lease is held. Ties
    follow ``targets.latest.merge_latest``: ``delivery`` columns order rows of this run and, through
    the deliveries kept beside the table (``iceberg_deliveries``), the stored rows too.
    ``deleted`` (``deletes``): a key whose latest version is a delete is deleted.
    ``incoming_range``: the batch's keys' range; the stored rows read and the ``MERGE``'s
    scan keep to it, so Iceberg skips the files outside it (a backfill's later batches).
    """
    create_table(
        spark, target, rows.drop(*delivery, *([deleted] if deleted else [])).schema, partition_by
    )
    incoming = rows
    removed = 0
    existing: DataFrame | None = None
    old_tombstones = iceberg_tombstones.read(spark, target)
    if replace_all:
        merged = merge_latest(
            incoming, primary_key, order_by, delivery=delivery, keep_delivery=True
        )  # its deletes are kept for the tombstones, never written
    else:
        stored_filter = _key_range_filter(incoming, primary_key, incoming_range)
        merge_filter = _key_range_filter(incoming, primary_key, incoming_range, "t.")
        existing = read_at(spark, target, started_from)
        if existing is not None:
            existing = existing if stored_filter is None else existing.where(stored_filter)
            keys = incoming.select(*[F.col(f"`{key}`") for key in primary_key]).distinct()
            existing = having_keys(existing, keys, primary_key)  # a null key too
            existing = iceberg_deliveries.with_kept_delivery(
                spark, target, existing, primary_key, delivery, incoming.schema, stored_filter
            )
        buried = None
        if deleted is not None and old_tombstones is not None:
            # Read now: the side table changes before the MERGE, which must not re-read it.
            buried = tombstones.as_candidates(
                old_tombstones, incoming, primary_key, deleted, incoming.columns, delivery
            ).localCheckpoint()
        merged = resolve_upserts(
            incoming,
            existing,
            primary_key,
            order_by,
            delivery,
            deleted,
            keep_delivery=True,
            buried=buried,
        )
    with_delivery = merged.persist()
    merged = with_delivery.drop(*delivery)
    try:
        with named(spark, "merge the rows by key"):
            written = with_delivery.count()
            if deleted in merged.columns:
                removed = delete_markers.count_removed(merged, existing, primary_key, deleted)
                written = delete_markers.surviving(merged, deleted).count()
        with named(spark, "record the deliveries and tombstones"):
            _record_side_tables(
                spark,
                target,
                with_delivery,
                old_tombstones,
                primary_key=primary_key,
                order_by=order_by,
                delivery=delivery,
                deleted=deleted,
                replace_all=replace_all,
            )
        view = f"glue_incremental_upsert_{os.getpid()}"
        merged.createOrReplaceTempView(view)

        def write() -> None:
            if replace_all:
                delete_markers.surviving(merged, deleted).writeTo(target.name).overwrite(
                    F.lit(True)
                )
            else:
                statement = merge_statement(
                    target.quoted, view, merged.columns, primary_key, deleted, merge_filter
                )
                spark.sql(statement)

        _fence(spark, target, started_from, guard)
        with named(spark, "commit to the Iceberg table"):
            commit_with_properties(spark, properties, write)
        spark.catalog.dropTempView(view)
    finally:
        with_delivery.unpersist()
    after = current_snapshot(spark, target)
    return UpsertResult(written, after.snapshot_id if after else None, removed)


def _key_range_filter(
    incoming: DataFrame,
    primary_key: Sequence[str],
    incoming_range: key_ranges.KeyRange | None,
    prefix: str = "",
) -> str | None:
    """``keys.ranges.within`` for a single key column (a range is of one column)."""
    if len(primary_key) != 1:
        return None
    key = primary_key[0]
    return key_ranges.within(incoming_range, key, incoming.schema[key].dataType, prefix)


def _record_side_tables(
    spark: SparkSession,
    target: IcebergTarget,
    with_delivery: DataFrame,
    old_tombstones: DataFrame | None,
    *,
    primary_key: Sequence[str],
    order_by: str,
    delivery: Sequence[str],
    deleted: str | None,
    replace_all: bool,
) -> None:
    """The deliveries and tombstones kept beside the table, for this run's merged rows."""
    iceberg_deliveries.record(
        spark,
        target,
        delete_markers.surviving(with_delivery, deleted),
        primary_key,
        delivery,
        replace_all=replace_all,
    )
    iceberg_tombstones.record(
        spark,
        target,
        old_tombstones,
        with_delivery,
        tombstones.kept_columns(primary_key, order_by, delivery),
        primary_key,
        deleted,
        replace_all=replace_all,
        delivery=delivery,
    )


def started_version(store: Watermarks, state_name: str, slot: str = DEFAULT_SLOT) -> int:
    """The DynamoDB version of the state a run starts from (0: none yet)."""
    version = store.read_version(state_name, slot)
    if version is None:
        current = store.current_state(state_name, slot)
        version = current["version"] if current else 0
    return int(version)


def partition_condition(affected: Sequence[tuple], partition_by: Sequence[str]) -> Column:
    """A Column true exactly on the rows of the ``affected`` partitions (null-safe)."""
    condition = F.lit(False)
    for values in affected:
        match = F.lit(True)
        for column, value in zip(partition_by, values, strict=True):
            match = match & F.col(f"`{column}`").eqNullSafe(F.lit(value))
        condition = condition | match
    return condition


def publish_partitions(
    spark: SparkSession,
    target: IcebergTarget,
    rows: DataFrame,
    *,
    partition_by: Sequence[str],
    affected: Sequence[tuple] | None,
    started_from: int | None,
    properties: Mapping[str, str],
    guard: Callable[[], None],
) -> UpsertResult:
    """Replace the ``affected`` partitions (None: the whole table) with ``rows`` in one snapshot.

    An affected partition without rows is emptied. Fenced like ``publish_upsert``.
    """
    create_table(spark, target, rows.schema, partition_by)
    condition = F.lit(True) if affected is None else partition_condition(affected, partition_by)
    rows = rows.persist()
    try:
        written = rows.count()
        _fence(spark, target, started_from, guard)
        commit_with_properties(
            spark, properties, lambda: rows.writeTo(target.name).overwrite(condition)
        )
    finally:
        rows.unpersist()
    after = current_snapshot(spark, target)
    return UpsertResult(written, after.snapshot_id if after else None)


def roll_forward(
    spark: SparkSession,
    target: IcebergTarget,
    store: Watermarks,
    state_name: str,
    lease: Lease | None,
) -> Snapshot | None:
    """Commit to DynamoDB the watermark of a snapshot whose run crashed before doing so.

    Applies only when the current snapshot was written by a committing run of
    this state, that run has no DynamoDB commit, and every slot is still at the
    version that run started from (a reset or rewind since then wins). All
    slots move in one transaction. Returns the snapshot rolled forward from, or None.
    """
    snapshot = current_snapshot(spark, target)
    if (
        snapshot is None
        or not snapshot.commits
        or snapshot.state_name != state_name
        or snapshot.run_id is None
        or not snapshot.watermarks
        or snapshot.state_versions is None
    ):
        return None
    items = []
    for slot, values in snapshot.watermarks.items():
        try:
            store.state_after_run(state_name, snapshot.run_id, slot)
            return None
        except UnknownRun:
            pass
        current = store.current_state(state_name, slot)
        version = current["version"] if current else 0
        if version != snapshot.state_versions.get(slot):
            return None
        items.append(
            WatermarkItem(
                job_name=state_name,
                job_run_id=snapshot.run_id,
                watermarks=values,
                slot=slot,
                expected_version=version,
                kind="run",
                note={
                    "rolled_forward_from_snapshot": str(snapshot.snapshot_id),
                    "why": "Iceberg snapshot committed, DynamoDB commit missing",
                },
            )
        )
    store.commit_many(items, lease=lease)
    return snapshot


def rollback_to(spark: SparkSession, target: IcebergTarget, snapshot_id: int) -> None:
    """Make snapshot ``snapshot_id`` the table's current one (a metadata-only commit)."""
    spark.sql(
        f"CALL {target.catalog}.system.set_current_snapshot("
        f"table => '{target.table}', snapshot_id => {int(snapshot_id)})"
    )
