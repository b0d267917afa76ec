"""Reading exactly the planned files of a file source in one ``spark.read``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from glue_incremental.partition_paths import literal
from glue_incremental.schema_evolution import SchemaChangeError
from glue_incremental.sources import partition_types as partition_type_rules
from glue_incremental.sources.listing import SourceFile

SOURCE_FORMATS = ("parquet", "json", "csv")

# How each format is read: a CSV file's first line names its columns (as the join reads CSV);
# Parquet files of one batch may carry different columns (a source that added one, as
# Glue's own writer does): every footer counts, or the column of the newer files is lost.
FORMAT_OPTIONS: Mapping[str, Mapping[str, str]] = {
    "csv": {"header": "true"},
    "parquet": {"mergeSchema": "true"},
}

__all__ = ["FORMAT_OPTIONS", "SOURCE_FORMATS", "read_files"]


def read_files(
    spark: Any,
    files: Sequence[SourceFile],
    *,
    root_uri: str,
    source_format: Literal["parquet", "json", "csv"],
    schema: Any = None,
    options: Mapping[str, str] | None = None,
    partition_types: Mapping[str, str] | None = None,
) -> Any:
    """One ``spark.read`` of exactly ``files`` with ``basePath=root_uri``; None when nothing is new.

    ``key=value`` directories under the root become partition columns (types
    inferred unless ``schema`` names them). CSV files start with a header row.
    Without ``schema``, JSON/CSV (and Parquet footers) are inferred by Spark.

    Empty inputs are no input, whatever the format: 0-byte files are not read
    (Spark writes them for empty frames; they hold no schema to infer), and
    without ``schema`` a read holding no row (a header-only CSV, a Parquet file
    of zero rows, blank JSON) is None, as an empty ``files`` is: the caller's
    run has nothing new, instead of a schema inferred from nothing (no columns,
    or CSV's strings) failing its checks. That costs one action reading the
    first row; with ``schema`` the columns are known and no action is added.

    ``partition_types`` (the types kept since the first run, ``partition_types``
    module): partition values are read as text and cast to them, never
    re-inferred from this batch's directories alone.
    """
    if source_format not in SOURCE_FORMATS:
        raise ValueError(f"source_format must be one of {SOURCE_FORMATS}, got {source_format!r}")
    uris = list(dict.fromkeys(source.uri for source in files if source.size > 0))
    if not uris:
        return None
    reader = spark.read.format(source_format)
    format_options = {**FORMAT_OPTIONS.get(source_format, {}), **(options or {})}
    if format_options:
        reader = reader.options(**{str(key): str(value) for key, value in format_options.items()})
    reader = reader.option("basePath", root_uri)
    if schema is not None:
        reader = reader.schema(schema)
    paths = _java_string_array(spark, [literal(uri) for uri in uris])
    try:
        if schema is None and partition_types is not None:
            with partition_type_rules.as_text(spark):
                frame = reader._df(reader._jreader.load(paths))  # load(String...): one call
            frame = partition_type_rules.cast_to_kept(spark, frame, files, partition_types)
        else:
            frame = reader._df(reader._jreader.load(paths))
    except Exception as error:
        conflict = _unmergeable_footers(spark, error)
        if conflict is None:
            raise
        raise conflict from None
    if schema is None and frame.isEmpty():
        return None
    return frame


def _java_string_array(spark: Any, values: Sequence[str]) -> Any:
    """A Java ``String[]`` of ``values`` in two py4j calls.

    ``DataFrameReader.load(list)`` converts the list one py4j call per element:
    8 s of a 20,000-file full reload. NUL separates them: no path contains it.
    """
    if any("\0" in value for value in values):
        raise ValueError("a path contains a NUL character")
    jvm = spark._jvm
    return jvm.java.util.regex.Pattern.compile("\\x00").split("\0".join(values), -1)


_MERGE_FAILURE = re.compile(r'CANNOT_MERGE_SCHEMAS.*?"(STRUCT<.*?>)".*?"(STRUCT<.*?>)"', re.S)


def _unmergeable_footers(spark: Any, error: Exception) -> SchemaChangeError | None:
    """Spark's refusal to merge two Parquet footers of one batch, as one line naming the column.

    Spark 3.5 merges added and missing columns but no two types of one column (int and
    bigint included): the files of one batch disagree, and nothing is read or written.
    """
    found = _MERGE_FAILURE.search(str(error))
    if found is None:
        return None
    types = spark._jvm.org.apache.spark.sql.types.DataType
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
