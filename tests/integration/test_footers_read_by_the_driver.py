"""The merge reads the footers of the partitions it touches on the driver
(``io.parquet_footers``): the schema is the merge of what the files were written with, as
Spark's ``mergeSchema`` would find, and files it cannot vouch for are left to Spark."""

from __future__ import annotations

import json

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


def spark_file(path, column: str, schema_text: str) -> None:
    """A Parquet file of one ``column`` whose footer carries ``schema_text`` as Spark's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({column: [1]}).replace_schema_metadata(
        {"org.apache.spark.sql.parquet.row.metadata": schema_text}
    )
    pq.write_table(table, path)


def test_a_footer_schema_this_spark_cannot_parse_is_left_to_spark(spark, tmp_path):
    spark_file(tmp_path / "p=a" / "one.parquet", "id", "id:long (a legacy Spark 1 form)")
    files = parquet_footers.data_files(
        HadoopFileSystem(spark, uri(tmp_path)), [uri(tmp_path / "p=a")]
    )

    assert files is not None
    assert parquet_footers.merged_schema(spark, files) is None


def test_columns_differing_only_in_case_merge_as_spark_merges_them(spark, tmp_path):
    def schema(name: str) -> str:
        field = {"name": name, "type": "long", "nullable": True, "metadata": {}}
        return json.dumps({"type": "struct", "fields": [field]})

    spark_file(tmp_path / "p=a" / "one.parquet", "Amount", schema("Amount"))
    spark_file(tmp_path / "p=a" / "two.parquet", "amount", schema("amount"))
    files = parquet_footers.data_files(
        HadoopFileSystem(spark, uri(tmp_path)), [uri(tmp_path / "p=a")]
    )

    merged = parquet_footers.merged_schema(spark, files or [])
    assert merged is not None and [f.name.lower() for f in merged.fields] == ["amount"]
