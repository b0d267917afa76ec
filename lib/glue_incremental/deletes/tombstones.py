"""Tombstones: a removed key's last version, so an older version read later still loses.

A key whose latest version is a delete leaves the target, but its version (the key, the
watermark and the delivery columns) stays as a tombstone. The next merge with deletes on
adds the tombstones of the keys it reads as stored deletes (``as_candidates``): an older
version loses to one exactly as it would to a stored row, in a later batch of the run or
in a later run; a newer version brings the key back and removes its tombstone
(``after_merge``). Parquet keeps them under ``<target>/_tombstones/`` in the publish's
write-ahead intent (``writer``); Iceberg in ``<table>__tombstone`` (``iceberg``). First run
(or a full reload): the tombstones are the deletes among the rows read, nothing older.
A reconcile's delete of a file-snapshot source (``mark_gone``) is an absence, not a
version: its tombstone keeps the removed row (``REMOVED_ROW``); the key is back, with the
greatest version seen, once a later delivery than the snapshot that lacked it has it
(``absent_versions``, ``still_gone``). Rules: ``docs/deletes.md``.
Nothing bounds their number yet: one per key ever deleted and not back. ``docs/deletes.md``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from pyspark.sql.window import Window

from glue_incremental.io.hadoop_fs import HadoopFileSystem
from glue_incremental.io.spark_steps import named
from glue_incremental.keys.index import having_keys
from glue_incremental.schema.conform import with_columns_of

TOMBSTONE_DIR = "_tombstones"
# A reconcile's tombstone: the removed row's values as JSON (null in any other tombstone).
REMOVED_ROW = "__glue_incremental_removed_row"
# Appended to a reconcile's delete's file name: NUL sorts below every character and no file
# name holds one, so the delete ranks exactly as its snapshot's delivery does.
GONE_MARK = "\x00gone"
_RESTORED = "__glue_incremental_restored"
# The merge's per-key column of a key a reconcile removed: ``absent_versions``.
GONE_AT = "__glue_incremental_gone_at"
# Microseconds kept (Spark's JSON default keeps milliseconds).
_JSON_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
}


def kept_columns(
    primary_key: Sequence[str], order_by: str | None, delivery: Sequence[str]
) -> list[str]:
    """What a tombstone keeps: the key and the version (watermark, delivery columns)."""
    names = [*primary_key, *([order_by] if order_by else []), *delivery]
    return list(dict.fromkeys(names))


def as_candidates(
    tombstones: DataFrame,
    incoming: DataFrame,
    primary_key: Sequence[str],
    deleted: str,
    columns: Sequence[str],
    delivery: Sequence[str] = (),
) -> DataFrame:
    """The tombstones of ``incoming``'s keys as merge candidates with ``columns`` (those of
    ``incoming``): deletes whose other values are null, or, for a reconcile's tombstone (with
    ``REMOVED_ROW``), the removed row's values, which the merge ranks as ``absent_versions``
    says."""
    keys = incoming.select(*[_col(key) for key in primary_key]).distinct()
    hits = having_keys(tombstones, keys, primary_key)
    present = [name for name in columns if name in hits.columns and name != deleted]
    keeps_rows = REMOVED_ROW in hits.columns and bool(delivery) and set(delivery) <= set(columns)
    schema, wanted = incoming.schema, present
    if keeps_rows:
        hidden = {deleted, *delivery, *primary_key}
        row_type = StructType([incoming.schema[name] for name in columns if name not in hidden])
        hits = hits.withColumn(_RESTORED, _restored_row(_col(REMOVED_ROW), row_type))
        schema = StructType([*incoming.schema.fields, StructField(_RESTORED, row_type)])
        wanted = [*present, _RESTORED]
    typed = with_columns_of(hits, schema, wanted)
    missing = [name for name in columns if name not in present and name != deleted]
    for name in missing:
        typed = typed.withColumn(name, F.lit(None).cast(incoming.schema[name].dataType))
    out: list[Column] = []
    for name in columns:
        if name == deleted:
            out.append(F.lit(True).alias(name))
        elif keeps_rows and name not in primary_key and name not in delivery:
            restored_value = F.col(_RESTORED)[name]
            out.append(F.coalesce(restored_value, _col(name)).alias(name))
        else:
            out.append(_col(name))
    return typed.select(*out)


def _restored_row(text: Column, row_type: StructType) -> Column:
    """A removed row's JSON as ``row_type``. A timestamp column may have been a date when the
    row was removed (a widening since): its text is parsed by a cast, not by the format."""
    parsed = F.from_json(text, row_type, _JSON_OPTIONS)
    times = [
        f.name for f in row_type.fields if isinstance(f.dataType, TimestampType | TimestampNTZType)
    ]
    if not times:
        return parsed
    texts = F.from_json(text, StructType([StructField(name, StringType()) for name in times]))
    fields = [
        F.coalesce(parsed[f.name], texts[f.name].cast(f.dataType)).alias(f.name)
        if f.name in times
        else parsed[f.name].alias(f.name)
        for f in row_type.fields
    ]
    return F.when(text.isNotNull(), F.struct(*fields))


def absent_versions(
    candidates: DataFrame, primary_key: Sequence[str], delivery: Sequence[str], deleted: str
) -> DataFrame:
    """The merge's candidates with each reconcile's delete of a snapshot source (the gone row
    just made, or a tombstone's: ``mark_gone``) turned into what it is, the removed row as a
    version of an unknown (earliest) delivery, and ``GONE_AT``: for each such key, the
    delivery of the snapshot that lacked it, unless a candidate comes from a later delivery
    (a newer snapshot has the key: it is back). ``still_gone`` applies it to the winners."""
    names = _file_names(candidates, delivery)
    if not names:
        return candidates
    absent = F.coalesce(F.col(deleted) & _col(names[-1]).endswith(GONE_MARK), F.lit(False))
    stamp = F.struct(*[_col(name) for name in delivery])
    same_key = Window.partitionBy(*[_col(key) for key in primary_key])
    gone_at = F.max(F.when(absent, stamp)).over(same_key)
    latest = F.max(F.when(~absent, stamp)).over(same_key)
    back = _later([latest[name] for name in delivery], [gone_at[name] for name in delivery])
    out: list[Column] = []
    for name in candidates.columns:
        if name == deleted:
            out.append(F.when(absent, F.lit(False)).otherwise(_col(name)).alias(name))
        elif name in delivery:
            unknown = F.lit(None).cast(candidates.schema[name].dataType)
            out.append(F.when(absent, unknown).otherwise(_col(name)).alias(name))
        else:
            out.append(_col(name))
    return candidates.select(*out, F.when(~back, gone_at).alias(GONE_AT))


def still_gone(merged: DataFrame, delivery: Sequence[str], deleted: str) -> DataFrame:
    """``absent_versions``' winners: a key no later delivery brought back stays removed, its
    tombstone the greatest version seen (a soft delete that won stays one); without
    ``GONE_AT``."""
    if GONE_AT not in merged.columns:
        return merged
    gone = F.col(GONE_AT).isNotNull() & ~F.col(deleted)
    out: list[Column] = []
    for name in merged.columns:
        if name == deleted:
            out.append((F.col(deleted) | gone).alias(name))
        elif name in delivery:
            out.append(F.when(gone, F.col(GONE_AT)[name]).otherwise(_col(name)).alias(name))
        elif name != GONE_AT:
            out.append(_col(name))
    return merged.select(*out)


def _later(left: Sequence[Column], right: Sequence[Column]) -> Column:
    """Whether ``left`` comes after ``right`` compared in turn (a null is never later)."""
    result = F.lit(False)
    for one, other in reversed(list(zip(left, right, strict=True))):
        result = F.coalesce(one > other, F.lit(False)) | (one.eqNullSafe(other) & result)
    return result


def _file_names(frame: DataFrame, delivery: Sequence[str]) -> list[str]:
    """The text ``delivery`` columns of ``frame`` (the file name: ``GONE_MARK``'s place)."""
    return [
        name
        for name in delivery
        if name in frame.columns and isinstance(frame.schema[name].dataType, StringType)
    ]


def mark_gone(rows: DataFrame, delivery: Sequence[str]) -> DataFrame:
    """A reconcile's deletes (stamped with the snapshot lacking their keys): ``GONE_MARK`` on
    the file name, so their tombstones keep the removed row (``entries``)."""
    names = _file_names(rows, delivery)
    if not names:
        return rows
    return rows.withColumn(names[-1], F.concat(_col(names[-1]), F.lit(GONE_MARK)))


def entries(
    merged: DataFrame, kept: Sequence[str], deleted: str, delivery: Sequence[str] = ()
) -> DataFrame:
    """``merged``'s ``kept`` columns, ``REMOVED_ROW`` (a reconcile's delete: its values as JSON,
    else null) and ``deleted``: what a tombstone stores of each winner."""
    names = _file_names(merged, delivery)
    values = [name for name in merged.columns if name not in {deleted, *delivery}]
    row = F.to_json(F.struct(*[_col(name) for name in values]), _JSON_OPTIONS)
    gone = _col(names[-1]).endswith(GONE_MARK) if names else F.lit(False)
    removed = F.when(F.coalesce(gone, F.lit(False)), row).otherwise(F.lit(None).cast("string"))
    return merged.select(*[_col(name) for name in kept], removed.alias(REMOVED_ROW), _col(deleted))


def after_merge(
    old: DataFrame | None,
    merged: DataFrame,
    primary_key: Sequence[str],
    kept: Sequence[str],
    deleted: str,
    delivery: Sequence[str] = (),
) -> DataFrame:
    """The tombstones after a merge whose winners are ``merged`` (one row per key it decided):
    every winner that is a delete, and the old tombstones of the keys it did not decide."""
    new = entries(merged, kept, deleted, delivery).where(F.col(deleted)).drop(deleted)
    if old is None:
        return new
    decided = merged.select(*[_col(key) for key in primary_key])
    aliases = [f"__glue_incremental_decided_{index}" for index in range(len(primary_key))]
    renamed = decided.select(
        *[_col(key).alias(alias) for key, alias in zip(primary_key, aliases, strict=True)]
    )
    same = functools.reduce(
        operator.and_,
        [
            _col(key).eqNullSafe(F.col(alias))
            for key, alias in zip(primary_key, aliases, strict=True)
        ],
    )
    rest = old.join(renamed, same, "left_anti")
    return new.unionByName(with_columns_of(rest, new.schema, [*kept, REMOVED_ROW]))


def changed(
    old: DataFrame | None, merged: DataFrame, primary_key: Sequence[str], deleted: str
) -> bool:
    """Whether a merge changes the tombstones: a winner is a delete, or a key it decided had one
    (two small reads; a run that changes none leaves the tombstones as they are)."""
    if merged.where(F.col(deleted)).limit(1).count():
        return True
    if old is None:
        return False
    decided = merged.select(*[_col(key) for key in primary_key])
    return bool(having_keys(old, decided, primary_key).limit(1).count())


def read(spark: SparkSession, uri: str, schema: StructType | None = None) -> DataFrame | None:
    """The tombstones stored at ``uri`` (Parquet), or None when there are none."""
    fs = HadoopFileSystem(spark, uri)
    if not fs.exists(uri) or not fs.has_data_files(uri):
        return None
    reader = spark.read if schema is None else spark.read.schema(schema)
    return reader.parquet(uri)


_Row = TypeVar("_Row", bound=Mapping[str, object])


def latest_kept(
    versions: Sequence[_Row],
    stored: _Row | None,
    order: Sequence[str],
) -> _Row | None:
    """Plain-Python twin of one key's merge: of the ``versions`` read and the ``stored`` one
    (its stored row, or its tombstone), the greatest by ``order`` (values compared in turn,
    null lowest), ``stored`` losing a full tie to a version read. None when there is none."""

    def rank(item: tuple[int, _Row]) -> tuple:
        prefer, row = item
        values = [(row.get(name) is not None, row.get(name)) for name in order]
        return (*values, prefer)

    candidates = [(1, version) for version in versions]
    if stored is not None:
        candidates.append((0, stored))
    return max(candidates, key=rank)[1] if candidates else None


def _col(name: str) -> Column:
    return F.col(f"`{name}`")


# -- the writer's use: merged with the incoming keys, then published with the data ----------


def with_incoming_keys(
    spark: SparkSession,
    target_uri: str,
    candidates: DataFrame,
    incoming: DataFrame,
    primary_key: Sequence[str],
    deleted: str | None,
    prefer: str,
    delivery: Sequence[str] = (),
) -> tuple[DataFrame, DataFrame | None]:
    """``candidates`` plus the tombstones of the incoming keys (a removed key's last version:
    an older one read now loses to it as to a stored row), and the tombstones read."""
    if deleted is None:
        return candidates, None
    old = read(spark, _join(target_uri, TOMBSTONE_DIR))
    if old is None:
        return candidates, None
    buried = as_candidates(old, incoming, primary_key, deleted, incoming.columns, delivery)
    return candidates.unionByName(buried.withColumn(prefer, F.lit(0))), old


def to_publish(
    old: DataFrame | None,
    merged: DataFrame,
    primary_key: Sequence[str],
    order_by: str | None,
    delivery: Sequence[str],
    deleted: str | None,
) -> DataFrame | Literal[False] | None:
    """What ``replace_partitions`` does with the tombstones: a frame to publish, or False
    (none: a full reload without deletes removes every tombstone)."""
    if deleted is None:
        return False
    kept = kept_columns(primary_key, order_by, delivery)
    return after_merge(old, merged, primary_key, kept, deleted, delivery)


def stage(stage_uri: str, kept: DataFrame | Literal[False]) -> set[str]:
    """Stage the tombstones the publish leaves (none: the directory is emptied)."""
    if isinstance(kept, DataFrame):
        with named(kept.sparkSession, "stage the tombstones"):
            kept.coalesce(1).write.mode("overwrite").parquet(_join(stage_uri, TOMBSTONE_DIR))
    return {TOMBSTONE_DIR}


def _join(root: str, relative: str) -> str:
    return root.rstrip("/") + "/" + relative
