"""The local SparkSession: its connector jars are read in place, never copied per session."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

CONNECTOR_CLASSES = (
    "org.apache.hadoop.fs.s3a.S3AFileSystem",
    "org.apache.iceberg.spark.SparkCatalog",
    "org.postgresql.Driver",
)


def test_a_local_session_leaves_no_copy_of_its_jars_in_its_temp_directory(spark):
    from pyspark import SparkFiles

    # A task makes the executor fetch what spark.jars lists into the temp directory.
    assert spark.range(3).count() == 3
    copied = sorted(path.name for path in Path(SparkFiles.getRootDirectory()).rglob("*.jar"))
    assert copied == []


@pytest.mark.parametrize("class_name", CONNECTOR_CLASSES)
def test_a_local_session_still_loads_every_connector(spark, class_name):
    utils = spark.sparkContext._jvm.org.apache.spark.util.Utils
    assert utils.classForName(class_name, True, False).getName() == class_name
