"""The merge reads the footers of the partitions it touches on the driver
(``io.parquet_footers``): the schema is the merge of what the files were written with, as
Spark's ``mergeSchema`` would find, and files it cannot vouch for are left to Spark."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental.io import parquet_footers
from glue_incremental.io.hadoop_fs import HadoopFileSystem
from glue_incremental.io.local_files import hadoop_uri

pytestmark = pytest.mark.spark


def uri(path) -> str:
    return hadoop_uri(str(path))


def test_footers_of_files_written_with_more_columns_merge_to_every_column(spark, tmp_path):
    root = tmp_path / "t"
    spark.createDataFrame([(1, "a")], "id bigint, v string").coalesce(1).write.parquet(
        str(root / "p=a")
    )
    spark.createDataFrame([(2, "b", 3.5)], "id bigint, v string, w double").coalesce(
        1
    ).write.parquet(str(root / "p=b"))
    fs = HadoopFileSystem(spark, uri(root))
    files = parquet_footers.data_files(fs, [uri(root / "p=a"), uri(root / "p=b")])

    assert files is not None and len(files) == 2
    merged = parquet_footers.merged_schema(spark, files)
    assert merged is not None
    assert [(f.name, f.dataType.simpleString()) for f in merged.fields] == [
        ("id", "bigint"),
        ("v", "string"),
        ("w", "double"),
    ]
    expected = spark.read.option("mergeSchema", "true").parquet(str(root)).drop("p")
    assert sorted(merged.fieldNames()) == sorted(expected.columns)


def test_a_file_without_sparks_schema_or_a_nested_directory_is_left_to_spark(spark, tmp_path):
    other = tmp_path / "other" / "p=a"
    other.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1]}), other / "one.parquet")
    nested = tmp_path / "nested" / "p=a"
    spark.createDataFrame([(1,)], "id bigint").write.parquet(str(nested / "q=b"))
    fs = HadoopFileSystem(spark, uri(tmp_path))

    files = parquet_footers.data_files(fs, [uri(other)])
    assert files is not None
    assert parquet_footers.merged_schema(spark, files) is None
    assert parquet_footers.data_files(fs, [uri(nested)]) is None
