"""Idempotent, partition-at-a-time writes of Parquet targets.

Nothing here appends blindly: every write *replaces* whole partitions, so a
rerun after a failure rewrites the same partitions with the same (or newer)
rows and converges on the state a full refresh would produce.

How a write proceeds (``replace_partitions``):

1. Rows for the affected partitions are written with Spark to a staging
   directory ``<target>/_staging/<run_id>/``; nothing in the target changes.
2. ``before_publish`` runs (the runtime checks its lease there: a run that lost
   its lease must not replace newer output).
3. Each affected partition is published in turn: the live directory is moved
   aside to ``_staging/<run_id>/_previous/``, the staged one moved in, then the
   set-aside copy deleted. A crash at any point leaves either the old or the new
   directory live, or the old one set aside: ``recover`` (run at the start of
   every write) moves set-aside directories back where nothing replaced them.
4. Affected partitions with no rows left are removed (rows moved elsewhere).

Partition directory names are computed from the partition values as strings,
exactly as Spark names them (``col=value``, with Hive's escaping and
``__HIVE_DEFAULT_PARTITION__`` for null).

On S3, "move" is copy-and-delete (not atomic); the same recovery rule applies.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType
from pyspark.sql.window import Window

STAGING_DIR = "_staging"
PREVIOUS_DIR = "_previous"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
UNPARTITIONED: tuple[str | None, ...] = ()

PartitionValues = tuple[str | None, ...]


@dataclass(frozen=True)
class WriteResult:
    records_written: int
    partitions_written: list[dict[str, str | None]] = field(default_factory=list)
    partitions_removed: list[dict[str, str | None]] = field(default_factory=list)


class SimulatedCrash(RuntimeError):
    """Raised by crash-injection hooks in tests; never by the library itself."""


def merge_latest(
    df: DataFrame,
    primary_key: Sequence[str],
    order_by: str | None,
    *,
    prefer: str | None = None,
) -> DataFrame:
    """Keep one row per primary key: the one with the greatest ``order_by``.

    Null ``order_by`` values rank lowest. Ties (the same key and order value)
    are broken by a hash of the row's data, so any two runs that see the same
    candidate rows keep the same one, whatever order they arrived in. Between
    rows whose ``order_by`` is null, the greater ``prefer`` column wins first
    (the load prefers the row just read from the source over the stored one:
    without a watermark, the source's current row is the only truth).
    ``prefer`` is dropped from the result.
    """
    if not primary_key:
        raise ValueError("merge_latest needs a primary key")
    data_columns = [name for name in df.columns if name != prefer]
    ordering: list[Column] = []
    if order_by:
        ordering.append(F.col(f"`{order_by}`").desc_nulls_last())
        if prefer:
            ordering.append(
                F.when(F.col(f"`{order_by}`").isNull(), F.col(prefer)).otherwise(0).desc()
            )
    ordering.append(F.xxhash64(*[F.col(f"`{name}`") for name in data_columns]).desc())
    window = Window.partitionBy(*[F.col(f"`{key}`") for key in primary_key]).orderBy(*ordering)
    rank = "__glue_incremental_rank"
    ranked = df.withColumn(rank, F.row_number().over(window)).where(F.col(rank) == 1)
    return ranked.select(*[F.col(f"`{name}`") for name in data_columns])


PartitionMoves = Literal["detect", "ignore"]


def upsert(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    order_by: str | None,
    run_id: str,
    replace_all: bool = False,
    partition_moves: PartitionMoves = "detect",
    before_publish: Callable[[], None] | None = None,
    after_partition_published: Callable[[PartitionValues], None] | None = None,
) -> WriteResult:
    """Merge ``rows`` into the target by primary key, keeping the latest version.

    ``replace_all`` replaces the whole target with ``rows`` (first run, full
    reload). Otherwise the affected partitions are those the new rows fall in,
    plus, when a key's partition value can change, those holding an older
    version of one of their keys, so the key ends up in exactly one place.
    Only affected partitions are read and rewritten.

    Finding older versions elsewhere means reading the key columns of the whole
    target: the one cost here that grows with history. It is skipped when it
    cannot matter: every partition column is part of the primary key (a
    different partition value is a different key), or the caller declares
    ``partition_moves="ignore"`` (partition values never change for a key, for
    example a creation date; a violation would leave the old version behind).
    """
    incoming = partition_values_as_strings(rows, partition_by)
    if replace_all or not _data_exists(spark, target_uri):
        merged = merge_latest(incoming, primary_key, order_by)
        return replace_partitions(
            spark,
            merged,
            target_uri,
            partition_by=partition_by,
            affected=None if replace_all else _distinct_partitions(merged, partition_by),
            run_id=run_id,
            before_publish=before_publish,
            after_partition_published=after_partition_published,
        )
    affected: list[PartitionValues] | None = None
    if partition_by:
        touched = set(_distinct_partitions(incoming, partition_by))
        if moves_possible(primary_key, partition_by, partition_moves):
            keys = incoming.select(*[F.col(f"`{key}`") for key in primary_key]).distinct()
            everything = read_target(spark, target_uri, partition_by)
            assert everything is not None
            key_columns = [F.col(f"`{name}`") for name in (*primary_key, *partition_by)]
            moved_from = everything.select(*key_columns).join(keys, list(primary_key), "left_semi")
            touched |= set(_distinct_partitions(moved_from, partition_by))
        affected = sorted(touched, key=_sort_key)
    existing = read_target(spark, target_uri, partition_by, partitions=affected)
    prefer = "__glue_incremental_incoming"
    candidates = incoming.withColumn(prefer, F.lit(1))
    if existing is not None:
        candidates = (
            existing.select(*incoming.columns).withColumn(prefer, F.lit(0)).unionByName(candidates)
        )
    merged = merge_latest(candidates, primary_key, order_by, prefer=prefer)
    return replace_partitions(
        spark,
        merged,
        target_uri,
        partition_by=partition_by,
        affected=affected,
        run_id=run_id,
        before_publish=before_publish,
        after_partition_published=after_partition_published,
    )


def moves_possible(
    primary_key: Sequence[str], partition_by: Sequence[str], partition_moves: PartitionMoves
) -> bool:
    """Whether a key's older version can sit in another partition than its new one."""
    if partition_moves not in ("detect", "ignore"):
        raise ValueError(f"partition_moves must be 'detect' or 'ignore', got {partition_moves!r}")
    return partition_moves == "detect" and not set(partition_by) <= set(primary_key)


def _distinct_partitions(df: DataFrame, partition_by: Sequence[str]) -> list[PartitionValues]:
    if not partition_by:
        return [UNPARTITIONED]
    rows = (
        df.select(*[F.col(f"`{name}`").cast(StringType()) for name in partition_by])
        .distinct()
        .collect()
    )
    return sorted((tuple(row) for row in rows), key=_sort_key)


def _sort_key(values: PartitionValues) -> tuple:
    return tuple((value is None, value or "") for value in values)


def partition_values_as_strings(df: DataFrame, partition_by: Sequence[str]) -> DataFrame:
    """Cast partition columns to strings: the form Spark writes into directory names."""
    return df.select(
        *[
            F.col(f"`{name}`").cast(StringType()).alias(name)
            if name in partition_by
            else F.col(f"`{name}`")
            for name in df.columns
        ]
    )


def read_target(
    spark: SparkSession,
    target_uri: str,
    partition_by: Sequence[str],
    *,
    partitions: Iterable[PartitionValues] | None = None,
) -> DataFrame | None:
    """The target with partition columns as strings, or None if there is nothing to read.

    ``partitions`` limits the read to those partition directories, so only
    they are listed and read (not the whole target); ones that do not exist
    are skipped.
    """
    if not _data_exists(spark, target_uri):
        return None
    paths = [target_uri]
    if partitions is not None:
        fs = _FileSystem(spark, target_uri)
        paths = [
            _join(target_uri, partition_dir(partition_by, values))
            for values in partitions
            if fs.exists(_join(target_uri, partition_dir(partition_by, values)))
        ]
        if not paths:
            return None
    return _read_as_strings(spark, target_uri, paths)


def target_schema(spark: SparkSession, target_uri: str, partition_by: Sequence[str]) -> Any:
    """The target's schema (partition columns as strings) from one partition, or None."""
    if not _data_exists(spark, target_uri):
        return None
    fs = _FileSystem(spark, target_uri)
    for relative in fs.partition_dirs(target_uri, len(partition_by)) if partition_by else [""]:
        path = _join(target_uri, relative)
        if fs.has_data_files(path):
            return _read_as_strings(spark, target_uri, [path]).schema
    return None


def _read_as_strings(spark: SparkSession, base_uri: str, paths: Sequence[str]) -> DataFrame:
    conf = "spark.sql.sources.partitionColumnTypeInference.enabled"
    previous = spark.conf.get(conf)
    spark.conf.set(conf, "false")
    try:
        return spark.read.option("basePath", base_uri).parquet(*paths)
    finally:
        spark.conf.set(conf, previous)


def partition_dir(partition_by: Sequence[str], values: PartitionValues) -> str:
    """``a=1/b=x%2Fy``: the relative directory Spark uses for these values."""
    return "/".join(
        f"{_escape(name)}={HIVE_NULL if value is None else _escape(value)}"
        for name, value in zip(partition_by, values, strict=True)
    )


def replace_partitions(
    spark: SparkSession,
    rows: DataFrame,
    target_uri: str,
    *,
    partition_by: Sequence[str],
    affected: Iterable[PartitionValues] | None,
    run_id: str,
    before_publish: Callable[[], None] | None = None,
    after_partition_published: Callable[[PartitionValues], None] | None = None,
) -> WriteResult:
    """Make exactly the ``affected`` partitions of the target hold ``rows``.

    ``rows`` must only contain rows of affected partitions (partition columns
    are cast to strings here). ``affected`` None means every partition: the
    target is replaced as a whole (full reload), including partitions that no
    longer have rows. Partitions not listed stay byte-identical.
    """
    recover(spark, target_uri)
    rows = partition_values_as_strings(rows, partition_by)
    stage_uri = f"{target_uri.rstrip('/')}/{STAGING_DIR}/{run_id}"
    fs = _FileSystem(spark, target_uri)
    fs.delete(stage_uri)
    writer = rows.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.parquet(stage_uri)
    records = _count_written(spark, stage_uri)
    staged = set(fs.partition_dirs(stage_uri, len(partition_by))) if partition_by else {""}
    if affected is None:
        existing = set(fs.partition_dirs(target_uri, len(partition_by))) if partition_by else {""}
        to_replace = staged | existing
    else:
        to_replace = {partition_dir(partition_by, values) for values in affected} | staged
    if before_publish is not None:
        before_publish()
    written, removed = [], []
    for relative in sorted(to_replace):
        _publish_one(fs, target_uri, stage_uri, relative, has_rows=relative in staged)
        (written if relative in staged else removed).append(_dir_to_values(relative, partition_by))
        if after_partition_published is not None:
            after_partition_published(tuple(_dir_to_values(relative, partition_by).values()))
    fs.delete(stage_uri)
    return WriteResult(records, written, removed)


def recover(spark: SparkSession, target_uri: str) -> list[str]:
    """Undo what a crashed publish left: set-aside partitions go back if nothing replaced them.

    Returns the partition directories restored. Staging directories of crashed
    runs are removed afterwards.
    """
    fs = _FileSystem(spark, target_uri)
    staging_root = f"{target_uri.rstrip('/')}/{STAGING_DIR}"
    restored = []
    for run_dir in fs.children(staging_root):
        previous_root = f"{run_dir}/{PREVIOUS_DIR}"
        set_aside_files = fs.data_files(previous_root)
        if set_aside_files and not fs.data_files(target_uri):
            for path in set_aside_files:  # an unpartitioned target caught mid-swap
                fs.rename(path, _join(target_uri, path.rsplit("/", 1)[1]))
            restored.append("")
        for relative in fs.relative_dirs_with_files(previous_root):
            live = _join(target_uri, relative)
            if not fs.exists(live):
                fs.mkdirs(_parent(live))
                fs.rename(_join(previous_root, relative), live)
                restored.append(relative)
        fs.delete(run_dir)
    fs.delete(staging_root)
    return restored


def _publish_one(
    fs: _FileSystem, target_uri: str, stage_uri: str, relative: str, *, has_rows: bool
) -> None:
    live = _join(target_uri, relative)
    aside = _join(f"{stage_uri}/{PREVIOUS_DIR}", relative)
    if relative == "":
        # Unpartitioned target: the data files themselves are the "partition".
        fs.mkdirs(aside)
        for path in fs.data_files(target_uri):
            fs.rename(path, f"{aside}/{path.rsplit('/', 1)[1]}")
        if has_rows:
            for path in fs.data_files(stage_uri):
                fs.rename(path, f"{target_uri.rstrip('/')}/{path.rsplit('/', 1)[1]}")
        fs.delete(aside)
        return
    if fs.exists(live):
        fs.mkdirs(_parent(aside))
        fs.rename(live, aside)
    if has_rows:
        fs.mkdirs(_parent(live))
        fs.rename(_join(stage_uri, relative), live)
    fs.delete(aside)
    _remove_empty_parents(fs, target_uri, relative)


def _remove_empty_parents(fs: _FileSystem, target_uri: str, relative: str) -> None:
    parts = relative.split("/")[:-1]
    while parts:
        path = _join(target_uri, "/".join(parts))
        if fs.exists(path) and not fs.children(path, include_hidden=True):
            fs.delete(path)
        parts.pop()


def _count_written(spark: SparkSession, stage_uri: str) -> int:
    # Parquet footers carry row counts: this reads metadata, not data.
    fs = _FileSystem(spark, stage_uri)
    if not fs.has_data_files(stage_uri):
        return 0
    return spark.read.parquet(stage_uri).count()


def _data_exists(spark: SparkSession, uri: str) -> bool:
    fs = _FileSystem(spark, uri)
    return fs.exists(uri) and fs.has_data_files(uri)


def _dir_to_values(relative: str, partition_by: Sequence[str]) -> dict[str, str | None]:
    if not relative:
        return {}
    values = {}
    for part in relative.split("/"):
        name, _, raw = part.partition("=")
        values[_unescape(name)] = None if raw == HIVE_NULL else _unescape(raw)
    return {name: values.get(name) for name in partition_by}


# Hive's escaping of path names, as Spark's ExternalCatalogUtils applies it.
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^") | {chr(code) for code in range(0x20)}


def _escape(value: str) -> str:
    return "".join(f"%{ord(char):02X}" if char in _ESCAPED else char for char in value)


def _unescape(value: str) -> str:
    out, index = [], 0
    while index < len(value):
        if (
            value[index] == "%"
            and index + 2 < len(value) + 0
            and _is_hex(value[index + 1 : index + 3])
        ):
            out.append(chr(int(value[index + 1 : index + 3], 16)))
            index += 3
        else:
            out.append(value[index])
            index += 1
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 2 and all(char in "0123456789abcdefABCDEF" for char in text)


def _join(root: str, relative: str) -> str:
    return root.rstrip("/") + ("/" + relative if relative else "")


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0]


class _FileSystem:
    """The few Hadoop FileSystem calls the writer needs (file://, s3://, hdfs://)."""

    def __init__(self, spark: SparkSession, uri: str) -> None:
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._fs = self._Path(uri).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def exists(self, uri: str) -> bool:
        return bool(self._fs.exists(self._Path(uri)))

    def delete(self, uri: str) -> None:
        with contextlib.suppress(Exception):
            self._fs.delete(self._Path(uri), True)

    def mkdirs(self, uri: str) -> None:
        self._fs.mkdirs(self._Path(uri))

    def rename(self, source: str, destination: str) -> None:
        if not self._fs.rename(self._Path(source), self._Path(destination)):
            raise OSError(f"could not move {source} to {destination}")

    def _statuses(self, uri: str) -> list[Any]:
        path = self._Path(uri)
        if not self._fs.exists(path):
            return []
        return list(self._fs.listStatus(path))

    def children(self, uri: str, *, include_hidden: bool = False) -> list[str]:
        return [
            str(status.getPath())
            for status in self._statuses(uri)
            if include_hidden or not _hidden(status.getPath().getName())
        ]

    def data_files(self, uri: str) -> list[str]:
        return [
            str(status.getPath())
            for status in self._statuses(uri)
            if status.isFile() and not _hidden(status.getPath().getName())
        ]

    def has_data_files(self, uri: str) -> bool:
        return any(True for _ in self._walk_files(uri))

    def _walk_files(self, uri: str) -> Iterator[str]:
        for status in self._statuses(uri):
            name = status.getPath().getName()
            if _hidden(name):
                continue
            if status.isDirectory():
                yield from self._walk_files(str(status.getPath()))
            else:
                yield str(status.getPath())

    def partition_dirs(self, root: str, depth: int) -> list[str]:
        """Relative ``k=v/...`` directories ``depth`` levels below ``root``."""
        level = [("", root)]
        for _ in range(depth):
            level = [
                (f"{relative}/{status.getPath().getName()}".lstrip("/"), str(status.getPath()))
                for relative, path in level
                for status in self._statuses(path)
                if status.isDirectory()
                and "=" in status.getPath().getName()
                and not _hidden(status.getPath().getName())
            ]
        return [relative for relative, _ in level]

    def relative_dirs_with_files(self, root: str) -> list[str]:
        """Directories under ``root`` (relative) that directly contain files."""
        found = []

        def walk(relative: str, path: str) -> None:
            statuses = self._statuses(path)
            if any(status.isFile() for status in statuses) and relative:
                found.append(relative)
                return
            for status in statuses:
                if status.isDirectory():
                    name = status.getPath().getName()
                    walk(f"{relative}/{name}".lstrip("/"), str(status.getPath()))

        walk("", root)
        return found


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))
