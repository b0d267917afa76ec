"""Reading exactly the planned files of a file source in one ``spark.read``."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pyspark import RDD
from pyspark.sql import DataFrame, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType, _parse_datatype_string

from glue_incremental.io import local_files
from glue_incremental.io.hadoop_fs import HadoopFileSystem, session_jvm
from glue_incremental.io.jvm_calls import java_strings, quoted, select_sql
from glue_incremental.partitions.paths import literal
from glue_incremental.schema import inferred_types
from glue_incremental.schema.evolution import SchemaChangeError
from glue_incremental.sources import partition_types as partition_type_rules
from glue_incremental.sources.listing import SourceFile

SOURCE_FORMATS = ("parquet", "json", "csv")
HEADER_READERS = 16  # CSV header lines read at once from an object store

# How each format is read: a CSV file's first line names its columns (as the join reads CSV);
# Parquet files of one batch may carry different columns (a source that added one, as
# Glue's own writer does): every footer counts, or the column of the newer files is lost.
FORMAT_OPTIONS: Mapping[str, Mapping[str, str]] = {
    "csv": {"header": "true"},
    "parquet": {"mergeSchema": "true"},
}

__all__ = ["FORMAT_OPTIONS", "SOURCE_FORMATS", "csv_header_groups", "first_misfit", "read_files"]


def read_files(
    spark: SparkSession,
    files: Sequence[SourceFile],
    *,
    root_uri: str,
    source_format: Literal["parquet", "json", "csv"],
    schema: StructType | str | None = None,
    options: Mapping[str, str] | None = None,
    partition_types: Mapping[str, str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> DataFrame | None:
    """A ``spark.read`` of exactly ``files`` with ``basePath=root_uri`` (one per CSV header);
    None when nothing is new.

    ``key=value`` directories under the root become partition columns (types
    inferred unless ``schema`` names them). CSV files start with a header row.
    Without ``schema``, JSON/CSV (and Parquet footers) are inferred by Spark.

    Empty inputs are no input, whatever the format: 0-byte files are not read
    (Spark writes them for empty frames; they hold no schema to infer), and
    without ``schema`` a read holding no row (a header-only CSV, a Parquet file
    of zero rows, blank JSON) is None, as an empty ``files`` is: the caller's
    run has nothing new, instead of a schema inferred from nothing (no columns,
    or CSV's strings) failing its checks. That costs one action reading the
    first row, except for JSON whose inference found a field (only a record
    holds one); with ``schema`` the columns are known and no action is added.

    ``partition_types`` (the types kept since the first run, ``partition_types``
    module): partition values are read as text and cast to them, never
    re-inferred from this batch's directories alone.

    CSV is read by column name: files are grouped by header (``csv_header_groups``), one
    read per group, joined by name, so a file with fewer columns reads the others as null
    (under a declared ``schema`` too: its columns in its order, then undeclared ones as text).
    ``columns`` (name: column, e.g. ``_metadata.file_name``) are added per read, before the
    join, since Spark's file metadata does not pass through a union.
    """
    if source_format not in SOURCE_FORMATS:
        raise ValueError(f"source_format must be one of {SOURCE_FORMATS}, got {source_format!r}")
    listed = {source.uri: source for source in files if source.size > 0}
    uris = list(listed)
    if not uris:
        return None
    format_options = {**FORMAT_OPTIONS.get(source_format, {}), **(options or {})}
    added = dict(columns or {})
    groups = csv_header_groups(spark, uris) if source_format == "csv" else {(): uris}
    if isinstance(schema, str) and source_format == "csv":  # a DDL string: its fields by name
        parsed = _parse_datatype_string(schema)
        assert isinstance(parsed, StructType)  # a DDL list of columns parses as a struct
        schema = parsed
    # A header is CSV's, whose DDL string is parsed above.
    declared = schema if isinstance(schema, StructType) else None
    frames = []
    shown_rows = False  # a JSON field was inferred: some record holds it
    for header, group in groups.items():
        read_schema = _csv_schema(header, declared) if header and declared is not None else schema
        group_files = [listed[uri] for uri in group]
        frame = _read_group(
            spark,
            group_files,
            root_uri,
            source_format,
            read_schema,
            format_options,
            partition_types,
        )
        if header and declared is None:
            # Spark names a column as its header spells it: "id, updated" would read a
            # column " updated" the job never finds.
            frame = frame.withColumnsRenamed({name: name.strip() for name in header})
        if source_format == "json" and schema is None:
            directories = set(partition_type_rules.names_of(group_files))
            shown_rows = shown_rows or any(name not in directories for name in frame.columns)
        if added:
            frame = select_sql(
                frame, ["*", *[f"{_path(c)} AS {quoted(n)}" for n, c in added.items()]]
            )
        if header and declared is not None:
            frame = _declared_columns(frame, declared)
        frames.append(frame)
    if schema is None and len(frames) > 1:
        frames = _typed_alike(frames)
    frame = frames[0]
    for other in frames[1:]:
        # By name: files whose headers differ still meet column by column (null where absent).
        frame = frame.unionByName(other, allowMissingColumns=True)
    if schema is None and not shown_rows and frame.isEmpty():
        return None
    return frame


def _typed_alike(frames: list[DataFrame]) -> list[DataFrame]:
    """Header groups inferred apart: a column one group infers as text because it is null in
    every row there (a header-only file, an optional column left empty) takes the type
    another group inferred, instead of the union widening every group's column to text.
    One small aggregate per group that has such a column (``schema.inferred_types.as_stored``)."""
    typed: dict[str, StructField] = {}
    for frame in frames:
        for field in frame.schema.fields:
            if not isinstance(field.dataType, StringType):
                typed.setdefault(field.name, field)
    others = StructType(list(typed.values()))
    return [inferred_types.as_stored(frame, others) for frame in frames]


def csv_header_groups(spark: SparkSession, uris: Sequence[str]) -> dict[tuple[str, ...], list[str]]:
    """``uris`` grouped by their header as spelled, in first-seen order. Spark applies one
    header (the first file's) to every file of a read, by position: a file with fewer or
    reordered columns would be read into the wrong columns. A header row is one line, read
    from the file's start (a few bytes per file)."""
    if not uris:
        return {}
    fs = HadoopFileSystem(spark, uris[0])
    if local_files.is_local(uris[0]):
        lines = [fs.first_line(uri) for uri in uris]
    else:
        # One GET each on an object store: a few at a time (py4j serves each thread apart).
        with ThreadPoolExecutor(HEADER_READERS) as pool:
            lines = list(pool.map(fs.first_line, uris))
    groups: dict[tuple[str, ...], list[str]] = {}
    for uri, line in zip(uris, lines, strict=True):
        names = next(csv.reader([line]), [])
        # As spelled: Spark drops a later file's header row only when it equals the first
        # file's, so "id, qty" among "id,qty" files would be read as a row (all text).
        groups.setdefault(tuple(names), []).append(uri)
    return groups


def _csv_schema(header: Sequence[str], declared: StructType) -> StructType:
    """The declared schema in a file's header order (Spark's CSV reader maps by position): a
    declared column the file lacks is left out (added as null after), an undeclared one text."""
    types = {field.name: field.dataType for field in declared.fields}
    names = [name.strip() for name in header]
    fields = [StructField(name, types.get(name, StringType()), True) for name in names]
    # Spark's corrupt-record column is no column of the file: kept out of the positions.
    corrupt = [
        field for field in declared.fields if field.name == CORRUPT and field.name not in names
    ]
    return StructType([*fields, *corrupt])


def _declared_columns(frame: DataFrame, declared: StructType) -> DataFrame:
    """``frame`` with every declared column (null where the file lacked it) in declared order,
    then the file's undeclared and partition columns. A declared partition column (a
    directory, not in the header) gets its declared type here, not the inferred one."""
    present = dict(frame.dtypes)
    names = declared.fieldNames()
    out = [
        F.col(f"`{field.name}`")
        if present.get(field.name) == field.dataType.simpleString()
        else F.col(f"`{field.name}`").cast(field.dataType).alias(field.name)
        if field.name in present
        else F.lit(None).cast(field.dataType).alias(field.name)
        for field in declared.fields
    ]
    return frame.select(*out, *[F.col(f"`{name}`") for name in frame.columns if name not in names])


def _path(column: str) -> str:
    """A dotted column path (``_metadata.file_name``) as SQL text, each step quoted."""
    return ".".join(quoted(step) for step in column.split("."))


def _read_group(
    spark: SparkSession,
    files: Sequence[SourceFile],
    root_uri: str,
    source_format: str,
    schema: StructType | str | None,
    format_options: Mapping[str, str],
    partition_types: Mapping[str, str] | None,
) -> DataFrame:
    reader = spark.read.format(source_format)
    if format_options:
        reader = reader.options(**{str(key): str(value) for key, value in format_options.items()})
    reader = reader.option("basePath", root_uri)
    if schema is not None:
        reader = reader.schema(schema)
    paths = java_strings(spark, [literal(source.uri) for source in files])
    try:
        if schema is None and partition_types is not None:
            with partition_type_rules.as_text(spark):
                frame = reader._df(reader._jreader.load(paths))  # load(String...): one call
            return partition_type_rules.cast_to_kept(spark, frame, files, partition_types)
        return reader._df(reader._jreader.load(paths))
    except Exception as error:
        conflict = _unmergeable_footers(spark, error)
        if conflict is None:
            raise
        raise conflict from None


_MERGE_FAILURE = re.compile(r'CANNOT_MERGE_SCHEMAS.*?"(STRUCT<.*?>)".*?"(STRUCT<.*?>)"', re.S)


def _unmergeable_footers(spark: SparkSession, error: Exception) -> SchemaChangeError | None:
    """Spark's refusal to merge two Parquet footers of one batch, as one line naming the column.

    Spark 3.5 merges added and missing columns but no two types of one column (int and
    bigint included): the files of one batch disagree, and nothing is read or written.
    """
    found = _MERGE_FAILURE.search(str(error))
    if found is None:
        return None
    types = session_jvm(spark).org.apache.spark.sql.types.DataType
    first, second = (
        {field.name(): field.dataType().sql().lower() for field in types.fromDDL(ddl).fields()}
        for ddl in found.groups()
    )
    column = next((name for name in first if name in second and first[name] != second[name]), "?")
    return SchemaChangeError(
        column,
        second.get(column),
        first.get(column),
        f"source files of one batch disagree on column {column!r}: {first.get(column)} in some, "
        f"{second.get(column)} in others; Spark cannot merge them (land the widened files in a "
        "later run, or declare --source_schema)",
    )


CORRUPT = "_corrupt_record"  # Spark's default columnNameOfCorruptRecord


def first_misfit(
    spark: SparkSession,
    files: Sequence[SourceFile],
    *,
    root_uri: str,
    source_format: Literal["parquet", "json", "csv"],
    schema: StructType,
) -> tuple[str | None, str] | None:
    """(column, one phrase naming the file, line, column and value) of the first row of
    ``files`` (by file name) whose value does not fit the declared ``schema``; None if none
    is found (Parquet, or a file changed since). Spark's ``FAILFAST`` names the record but
    not its file: this reads the files once more in ``PERMISSIVE`` mode with a
    ``_corrupt_record`` column, then finds the bad line's number and column. A failed run's
    cost only."""
    if source_format == "parquet" or not files:
        return None
    try:
        return _first_misfit(spark, files, root_uri, source_format, schema)
    except Exception:  # the diagnosis must never replace the refusal it explains
        return None


def _first_misfit(
    spark: SparkSession,
    files: Sequence[SourceFile],
    root_uri: str,
    source_format: Literal["parquet", "json", "csv"],
    schema: StructType,
) -> tuple[str | None, str] | None:
    with_corrupt = StructType([*schema.fields, StructField(CORRUPT, StringType(), True)])
    rows = read_files(
        spark,
        files,
        root_uri=root_uri,
        source_format=source_format,
        schema=with_corrupt,
        options={"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT},
        columns={"__file": "_metadata.file_path"},
    )
    if rows is None:
        return None
    # Every declared column is selected: Spark parses only the columns a query reads (a
    # misfit in another would go unseen) and refuses a query of the corrupt column alone.
    bad = (
        rows.where(F.col(CORRUPT).isNotNull())
        .select("__file", CORRUPT, *[F.col(f"`{name}`") for name in schema.fieldNames()])
        .orderBy("__file")
        .limit(1)
        .collect()
    )
    if not bad:
        return None
    uri, raw = bad[0]["__file"], bad[0][CORRUPT]
    line = _line_number(spark, uri, raw)
    where = f"{uri} line {line}" if line is not None else str(uri)
    column, value = _misfit_column(spark, uri, raw, source_format, schema)
    if column is None:
        return None, f"{where}: {value}"
    wanted = schema[column].dataType.simpleString() if column in schema.fieldNames() else "?"
    return column, f"{where}, column {column!r}: value {value!r} is not {wanted}"


def _line_number(spark: SparkSession, uri: str, raw: str) -> int | None:
    """The 1-based number of the first line of ``uri`` that is ``raw`` (one read of it)."""
    text = spark.read.text(literal(uri)).rdd.map(lambda row: row[0])
    found = text.zipWithIndex().filter(lambda pair: pair[0] == raw).map(lambda p: p[1]).take(1)
    return found[0] + 1 if found else None


def _misfit_column(
    spark: SparkSession, uri: str, raw: str, source_format: str, schema: StructType
) -> tuple[str | None, str]:
    """(column, its text) of ``raw`` that reads as a value but not as its declared type; for
    a CSV line whose values do not match its header, (None, what is wrong)."""
    lines = spark.sparkContext.parallelize([raw], 1)
    if source_format == "csv":
        header = [name.strip() for name in next(iter(csv_header_groups(spark, [uri])))]
        values = next(csv.reader([raw]), [])
        if len(values) != len(header):
            return None, (
                f"{len(values)} values where the header names {len(header)} columns: {raw!r}"
            )
        text_schema = StructType([StructField(name, StringType(), True) for name in header])
        typed_schema = _csv_schema(header, schema)
        text = _csv_lines(spark.read.schema(text_schema), lines).first()
        typed = _csv_lines(
            spark.read.schema(typed_schema).option("mode", "PERMISSIVE"), lines
        ).first()
        assert text is not None and typed is not None  # one line read: one row
        for name in header:
            if text[name] is not None and typed[name] is None:
                return name, text[name]
        return None, f"a value does not fit: {raw!r}"
    try:
        record = json.loads(raw)
    except ValueError:
        return None, f"not a JSON record: {raw!r}"
    if not isinstance(record, dict):
        return None, f"not a JSON object: {raw!r}"
    for field in schema.fields:
        if record.get(field.name) is None:
            continue
        one = StructType([field, StructField(CORRUPT, StringType(), True)])
        read = spark.read.schema(one).option("mode", "PERMISSIVE").json(lines).first()
        if read is not None and read[CORRUPT] is not None:
            value = record[field.name]
            return field.name, value if isinstance(value, str) else json.dumps(value)
    return None, f"a value does not fit: {raw!r}"


def _csv_lines(reader: DataFrameReader, lines: RDD[str]) -> DataFrame:
    """CSV parsed from lines in memory (``DataFrameReader.csv`` takes an ``RDD[str]`` as it
    documents, though pyspark's annotation names only paths)."""
    return reader.csv(lines)  # type: ignore[arg-type]
