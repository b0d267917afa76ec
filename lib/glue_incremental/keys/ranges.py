"""Whether a batch's keys can be in the target at all, answered by the key index's footers.

A merge that can see keys move partition looks its incoming keys up in the key index
(``keys.index.partitions_of``): with many keys, a join of the index with them (a few Spark
jobs). Every index file's Parquet footer holds, per row group, the least and greatest key it
stores. When the batch's key range (its least and greatest key, computed in the batch's first
aggregate, ``engine.cursors.batch_stats``) lies outside every stored range, no incoming key is
stored: the lookup would find nothing, so it is skipped and the guarantee is unchanged. Each
later batch of a bounded first load is this case (its keys are all new).

Only a single key of an integral or string type is compared. A null incoming key, an index
file without statistics, or any other key type answers "may be stored": the lookup runs.
Footers are read once per index file per process (a file, named by Spark with a unique
name, never changes once written). The same range as SQL (``within``) lets a table format
skip its files outside it (Iceberg's column bounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from py4j.java_gateway import JavaObject
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import (
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from glue_incremental.io.hadoop_fs import HadoopFileSystem, jvm_class, session_jvm
from glue_incremental.io.jvm_calls import quoted, select_sql
from glue_incremental.keys import index as key_index

# Types whose Parquet statistics order like Spark's (signed integers; strings as UTF-8 bytes).
INTEGER_TYPES = (ByteType, ShortType, IntegerType, LongType)
COMPARABLE_TYPES = (*INTEGER_TYPES, StringType)
_LOW, _HIGH = "__glue_incremental_key_low", "__glue_incremental_key_high"
_NULLS, _PARTITIONS = "__glue_incremental_key_nulls", "__glue_incremental_partitions"
_ROWS, _PAIRS = "__glue_incremental_key_rows", "__glue_incremental_key_pairs"
# A row's ``monotonically_increasing_id``: its task in the upper bits, its index in the
# task in the lower 33, in a column of its own (Spark refuses a nondeterministic expression
# inside an aggregate). Pairs are collected from the first SURVEY_TASKS tasks alone.
_ROW_ID, _LAST_TASK, _TASK_SHIFT = "__glue_incremental_row_id", "__glue_incremental_task", 33
SURVEY_TASKS = 64
# (low, high) per row group with a non-null key; None: a file whose statistics say nothing.
# A key of COMPARABLE_TYPES (key_index.LISTABLE_TYPES): int or str.
KeyValue = key_index.KeyValue
_footer_ranges: dict[str, list[tuple[KeyValue, KeyValue]] | None] = {}
_MAX_CACHED_FILES = 4096


@dataclass(frozen=True)
class KeyRange:
    """The least and greatest incoming key (None when every key is null), the null count and,
    when asked for, the rows' distinct partition values as strings (the partitions they fall in).
    ``rows``: how many rows the range is of (None: not counted), a bound on their distinct keys.
    ``pairs``: every distinct (key, partition values) when asked for and at most
    ``MAX_LISTED_KEYS`` rows (``keys.incoming.survey`` takes them instead of a job of its own).
    """

    low: KeyValue | None
    high: KeyValue | None
    nulls: int
    partitions: tuple[tuple[str | None, ...], ...] | None = None
    rows: int | None = None
    pairs: tuple[Row, ...] | None = None


def aggregates(
    schema: StructType,
    primary_key: Sequence[str],
    partition_by: Sequence[str] = (),
    *,
    pairs: bool = False,
) -> list[str]:
    """Expressions (SQL text) to add to the batch's aggregate, or none when the key cannot be
    compared. ``partition_by``: the distinct partition values too (a later batch's merge
    needs them). ``pairs``: the (key, partition) pairs as ``keys.incoming.survey`` forms
    them, from at most ``MAX_LISTED_KEYS`` + 1 rows of each of the first ``SURVEY_TASKS``
    tasks: every pair when the batch has no more rows and tasks, else a bounded collection,
    dropped. The aggregate is then of ``numbered(rows)``."""
    if len(primary_key) != 1 or not isinstance(schema[primary_key[0]].dataType, COMPARABLE_TYPES):
        return []
    name = primary_key[0]
    key = quoted(name)
    if name in partition_by:  # the merge reads partition columns, and the index keeps them, as text
        key = f"CAST({key} AS STRING)"
    expressions = [
        f"min({key}) AS {quoted(_LOW)}",
        f"max({key}) AS {quoted(_HIGH)}",
        f"sum(CAST({key} IS NULL AS INT)) AS {quoted(_NULLS)}",
        f"count(1) AS {quoted(_ROWS)}",
    ]
    if partition_by:
        values = ", ".join(f"CAST({quoted(name)} AS STRING)" for name in partition_by)
        expressions.append(f"collect_set(struct({values})) AS {quoted(_PARTITIONS)}")
    if partition_by and pairs:
        others = [p for p in partition_by if p != name]
        fields = [
            f"{key} AS `key`",
            *[f"CAST({quoted(p)} AS STRING) AS `p{i}`" for i, p in enumerate(others)],
        ]
        row_id = quoted(_ROW_ID)
        task = f"shiftright({row_id}, {_TASK_SHIFT})"
        in_task = f"({row_id} & {(1 << _TASK_SHIFT) - 1})"
        few = f"{task} < {SURVEY_TASKS} AND {in_task} <= {key_index.MAX_LISTED_KEYS}"
        # A batch too big to survey returns no pairs: none cross to the driver to be dropped.
        small = f"count(1) <= {key_index.MAX_LISTED_KEYS} AND max({task}) < {SURVEY_TASKS}"
        pair = f"CASE WHEN {few} THEN struct({', '.join(fields)}) END"
        expressions.append(f"CASE WHEN {small} THEN collect_set({pair}) END AS {quoted(_PAIRS)}")
        expressions.append(f"max({task}) AS {quoted(_LAST_TASK)}")
    return expressions


def within(
    incoming: KeyRange | None, column: str, data_type: DataType, prefix: str = ""
) -> str | None:
    """SQL text true for every stored row whose ``column`` may equal an incoming key: within
    the batch's range, or ``IS NULL`` when some incoming key is null. A filter a table
    format prunes its files by (Iceberg's column bounds); None without a range or for a key
    other than an integer (strings: Iceberg's bounds need not order as Spark's ``min``)."""
    if incoming is None or not isinstance(data_type, INTEGER_TYPES):
        return None
    name, terms = f"{prefix}{quoted(column)}", []
    if incoming.low is not None and incoming.high is not None:
        if not all(type(bound) is int for bound in (incoming.low, incoming.high)):
            return None  # a partition column's range is of its text
        terms.append(f"{name} BETWEEN {incoming.low} AND {incoming.high}")
    if incoming.nulls:
        terms.append(f"{name} IS NULL")
    return f"({' OR '.join(terms)})" if terms else None


def numbered(rows: DataFrame) -> DataFrame:
    """``rows`` with each row's task and index in it, which ``aggregates(pairs=True)`` reads."""
    return select_sql(rows, ["*", f"monotonically_increasing_id() AS {quoted(_ROW_ID)}"])


def from_aggregate(row: Row) -> KeyRange | None:
    """The range the ``aggregates`` columns computed (None when there were none)."""
    found = row.asDict()
    if _LOW not in found:
        return None
    partitions, pairs, rows = found.get(_PARTITIONS), found.get(_PAIRS), int(row[_ROWS])
    if (found.get(_LAST_TASK) or 0) >= SURVEY_TASKS or rows > key_index.MAX_LISTED_KEYS:
        pairs = None  # some rows were not collected
    return KeyRange(
        row[_LOW],
        row[_HIGH],
        int(row[_NULLS] or 0),
        None if partitions is None else tuple(tuple(values) for values in partitions),
        rows,
        None if pairs is None else tuple(pairs),
    )


def index_plan_if_new(
    spark: SparkSession,
    fs: HadoopFileSystem,
    target_uri: str,
    schema: StructType,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    incoming: KeyRange | None,
) -> key_index.IndexPlan | None:
    """The index part of the publish when no incoming key can be stored, else None (look up)."""
    if incoming is None or incoming.nulls or incoming.low is None or incoming.high is None:
        return None  # (low and high are None together: every key null)
    low_in, high_in = incoming.low, incoming.high
    layout = key_index.Layout.of(schema, primary_key, partition_by)
    segments = key_index.live_segments(fs, target_uri)
    if not key_index.usable(segments, layout):
        return None  # no index, or one of other columns: the lookup rebuilds it
    for segment in segments:
        for path, _ in fs.list_files(target_uri.rstrip("/") + "/" + segment.relative):
            if path.rstrip("/").rsplit("/", 1)[-1].startswith(("_", ".")):
                continue
            ranges = _stored_ranges(spark, path, primary_key[0])
            if ranges is None:
                return None
            if any(_le(low, high_in) and _le(low_in, high) for low, high in ranges):
                return None
    return key_index.plan(segments, layout)


def _stored_ranges(
    spark: SparkSession, path: str, key: str
) -> list[tuple[KeyValue, KeyValue]] | None:
    if path not in _footer_ranges:
        if len(_footer_ranges) >= _MAX_CACHED_FILES:
            _footer_ranges.clear()
        _footer_ranges[path] = _read_ranges(spark, path, key)
    return _footer_ranges[path]


def _read_ranges(
    spark: SparkSession, path: str, key: str
) -> list[tuple[KeyValue, KeyValue]] | None:
    jvm = session_jvm(spark)
    conf = spark._jsc.hadoopConfiguration()
    hadoop_path = jvm_class(jvm, "org.apache.hadoop.fs.Path")(path)
    input_file = jvm_class(jvm, "org.apache.parquet.hadoop.util.HadoopInputFile")
    reader = jvm_class(jvm, "org.apache.parquet.hadoop.ParquetFileReader").open(
        input_file.fromPath(hadoop_path, conf)
    )
    try:
        footer = reader.getFooter()
    finally:
        reader.close()
    # The key's column chunk by its place in the schema: each py4j call is a round trip, and
    # walking every column of every block cost a few per column.
    schema = footer.getFileMetaData().getSchema()
    if not schema.containsField(key):
        return None
    index, blocks = schema.getFieldIndex(key), footer.getBlocks()
    ranges = []
    for number in range(blocks.size()):
        block = blocks.get(number)
        if not block.getRowCount():
            continue
        column = block.getColumns().get(index)
        if list(column.getPath().toArray()) != [key]:
            return None  # a nested schema: the field's place is not its leaf's
        statistics = column.getStatistics()
        if statistics is None or statistics.isEmpty():
            return None
        if not statistics.hasNonNullValue():
            # No least and greatest key: only null keys (an incoming null key always looks
            # up), or values too long for statistics (unknown: look up).
            if statistics.isNumNullsSet() and statistics.getNumNulls() == block.getRowCount():
                continue
            return None
        ranges.append((_value(statistics.genericGetMin()), _value(statistics.genericGetMax())))
    return ranges


def _le(low: KeyValue, high: KeyValue) -> bool:
    """``low <= high`` for two keys of one column (an int and a str do not compare: TypeError)."""
    if isinstance(low, int) and isinstance(high, int):
        return low <= high
    if isinstance(low, str) and isinstance(high, str):
        return low <= high
    raise TypeError(f"cannot compare keys {low!r} and {high!r}")


def _value(value: JavaObject | int | str) -> KeyValue:
    """A statistic as Python compares it with the aggregate's value (Binary: UTF-8 text)."""
    if isinstance(value, int | str):
        return value
    return str(value.toStringUsingUTF8())
