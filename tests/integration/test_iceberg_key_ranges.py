"""An Iceberg batch keeps its reads of the table to its keys' range: a batch of keys all
beyond the stored ones (each later batch of a bounded backfill) reads none of the table's
data files, neither for the stored versions nor in its ``MERGE``; the table is as merged."""

from __future__ import annotations

import hashlib

import pytest
from glue_incremental.load.job import LoadConfig

from tests.harness.iceberg import latest_by_key, requires_iceberg, table_rows, unique_table
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = [pytest.mark.spark, requires_iceberg]

COLUMNS = ["id", "part", "updated", "value"]


def _row(key: int, updated: int) -> dict:
    # Values that do not compress: the table's data files far larger than its metadata.
    value = "".join(hashlib.sha256(f"{key}.{salt}".encode()).hexdigest() for salt in range(4))
    return {"id": key, "part": "ab"[key % 2], "updated": updated, "value": value}


def _bytes_read(spark) -> int:
    statistics = spark._jvm.org.apache.hadoop.fs.FileSystem.getGlobalStorageStatistics().get("file")
    return int(statistics.getLong("bytesRead")) if statistics is not None else 0


def test_a_batch_of_keys_beyond_the_stored_ones_reads_none_of_the_tables_data_files(
    spark, tmp_path, store, iceberg_warehouse
):
    table = unique_table("ranges")
    config = LoadConfig(
        source=(tmp_path / "source").as_uri(),
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        partition_by=("part",),
        target_format="iceberg",
        target_table=table,
    )
    stored = [_row(key, 1) for key in range(1, 6_001)]
    write_json_file(tmp_path / "source", stored, mtime=1_700_000_000)
    run_load_at(
        spark,
        config,
        job_name="ranges",
        run_id="jr_1",
        clock=FixedClock(1_700_000_060),
        store=store,
    )
    data_bytes = spark.sql(
        f"SELECT sum(file_size_in_bytes) FROM glue_catalog.{table}.files"
    ).first()[0]
    beyond = [_row(key, 2) for key in range(9_001, 9_011)]
    write_json_file(tmp_path / "source", beyond, mtime=1_700_000_100)

    before = _bytes_read(spark)
    run_load_at(
        spark,
        config,
        job_name="ranges",
        run_id="jr_2",
        clock=FixedClock(1_700_000_160),
        store=store,
    )
    read = _bytes_read(spark) - before

    assert read < data_bytes / 2, (read, data_bytes)
    assert table_rows(spark, f"glue_catalog.{table}", COLUMNS) == latest_by_key(
        stored + beyond, "id", "updated", COLUMNS
    )
