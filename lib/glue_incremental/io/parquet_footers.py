"""The merged schema of a few Parquet files, read from their footers on the driver.

``spark.read.option("mergeSchema", "true")`` reads every footer in a Spark job of its own,
one per read: the merge's read of its touched partitions and of their deliveries paid two
per run. The footers are the truth of what the files hold (the schema a publish records
can lag after a crash), so they are still read, but by the driver: a few files, a few
requests each. The schema each file was written with is the one Spark keeps in its footer;
they are merged as ``mergeSchema`` merges them (``StructType.merge``: columns added,
conflicting types refused). Files another writer made, or too many files, are left to Spark.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from glue_incremental.io.hadoop_fs import HadoopFileSystem, jvm_class, session_jvm
from glue_incremental.partitions.paths import is_hidden

# More files than this: Spark's job reads them in parallel tasks, cheaper than one by one;
# and a read given more paths than spark.sql.sources.parallelPartitionDiscovery.threshold
# (32 by default) lists them in a Spark job of its own anyway.
DRIVER_FOOTERS = 32
_SPARK_SCHEMA = "org.apache.spark.sql.parquet.row.metadata"

__all__ = ["DRIVER_FOOTERS", "data_files", "merged_schema"]


def data_files(fs: HadoopFileSystem, directories: Sequence[str]) -> list[str] | None:
    """The visible files directly in ``directories``, or None past ``DRIVER_FOOTERS``, when
    one holds a subdirectory or a file not named ``.parquet`` (left to Spark's listing)."""
    found: list[str] = []
    for directory in directories:
        if any(not is_hidden(_name(uri)) for uri in fs.list_dirs(directory)):
            return None
        visible = [uri for uri, _ in fs.list_files(directory) if not is_hidden(_name(uri))]
        if not all(uri.endswith(".parquet") for uri in visible):
            return None
        found.extend(visible)
        if len(found) > DRIVER_FOOTERS:
            return None
    return sorted(found)


def merged_schema(spark: SparkSession, files: Sequence[str]) -> StructType | None:
    """The data columns of ``files`` merged, or None if a footer holds no Spark schema this
    Spark can parse (a legacy or newer form: Spark's own read then decides)."""
    jvm = session_jvm(spark)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm_class(jvm, "org.apache.hadoop.fs.Path")
    reader = jvm_class(jvm, "org.apache.parquet.hadoop.ParquetFileReader")
    skip_row_groups = jvm_class(
        jvm, "org.apache.parquet.format.converter.ParquetMetadataConverter"
    ).SKIP_ROW_GROUPS
    texts: list[str] = []
    for uri in files:
        footer = reader.readFooter(conf, path(uri), skip_row_groups)
        text = footer.getFileMetaData().getKeyValueMetaData().get(_SPARK_SCHEMA)
        if text is None:
            return None
        if text not in texts:
            texts.append(str(text))
    if not texts:
        return None
    types = jvm_class(jvm, "org.apache.spark.sql.types.DataType")
    case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    try:
        merged = types.fromJson(texts[0])
        for text in texts[1:]:
            merged = merged.merge(types.fromJson(text), case_sensitive)  # as mergeSchema does
    except Py4JJavaError:
        return None
    return StructType.fromJson(json.loads(merged.json()))


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]
