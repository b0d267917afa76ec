"""A file source's odd files: names needing escapes, symlinks, empty and gzip files, files
dated in the future, files vanishing between the listing and the read. Each is read once,
or the run fails in one line writing nothing.
"""

from __future__ import annotations

import gzip
import json
import os

import pytest
from glue_incremental.errors import first_line
from glue_incremental.io import spark_listing
from glue_incremental.sources import bulk, files
from glue_incremental.sources.listing import SourceFile

from tests.harness import reference
from tests.harness.change_rows import load_full_refresh, load_target_rows
from tests.harness.file_jobs import COLUMNS, T0, Job, row, target_rows
from tests.harness.loads import write_json_file

pytestmark = pytest.mark.spark


ODD_NAMES = [
    "with space.json",
    "pct%20encoded.json",
    "pct%.json",
    "ünïcødé.json",
    "hash#1.json",
    "question?.json",
    "[brackets].json",
    "{a,b}.json",
    "star*.json",
]


def test_a_file_dated_in_the_future_neither_blocks_nor_hides_the_files_landing_before_its_time(
    spark, store, tmp_path
):
    job = Job(spark, tmp_path, store, job_name="future")
    job.land([row(1, "a", 10, "x")])
    job.run()
    write_json_file(tmp_path / "source", [row(2, "a", 20, "future")], mtime=T0 + 1000)
    job.run()
    job.land([row(3, "b", 30, "on time")])
    job.run()
    assert {r[0] for r in load_target_rows(job)} >= {1, 3}

    job.clock.now = T0 + 1100
    job.run()

    assert load_target_rows(job) == load_full_refresh(job)


def test_odd_names_symlinks_empty_and_gz_files_of_a_later_run_are_each_read_once(
    spark, tmp_path, store
):
    job = Job(spark, tmp_path, store)
    job.land([row(0, "a", 1, "first")])
    job.run()
    source = tmp_path / "source"
    expected = {0: row(0, "a", 1, "first")}
    for key, name in enumerate(ODD_NAMES, 1):
        expected[key] = row(key, "ab"[key % 2], 2, name)
        job.land([expected[key]], name=name)
    for key in range(20, 50):  # past Spark's 32 paths: the driver's lookups, not a job
        expected[key] = row(key, "b", 2, "plain")
        job.land([expected[key]])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.json").write_text(json.dumps(row(60, "a", 2, "linked")) + "\n")
    (source / "link.json").symlink_to(outside / "real.json")
    expected[60] = row(60, "a", 2, "linked")
    (source / "dangling.json").symlink_to(outside / "missing.json")
    (source / "empty.json").write_text("")
    with gzip.open(source / "zipped.json.gz", "wt") as zipped:
        zipped.write(json.dumps(row(61, "b", 2, "gz")) + "\n")
    expected[61] = row(61, "b", 2, "gz")
    for path in (outside / "real.json", source / "empty.json", source / "zipped.json.gz"):
        os.utime(path, (job.clock.now, job.clock.now))

    summary = job.run()

    assert target_rows(job) == reference.as_tuples(expected.values(), COLUMNS)
    assert summary["records_read"] == len(expected) - 1


@pytest.mark.parametrize(
    "count", [spark_listing.LOCAL_LOOKUPS_ON_DRIVER, spark_listing.LOCAL_LOOKUPS_ON_DRIVER + 1]
)
def test_exactly_the_driver_lookup_limit_of_local_files_and_one_more_read_each_file_once(
    spark, tmp_path, count
):
    listed = []
    for key in range(count):
        path = tmp_path / f"f-{key:05d}.json"
        path.write_text(json.dumps({"id": key}) + "\n")
        listed.append(SourceFile(path.as_uri(), 1, path.stat().st_size))

    frame = bulk.read_listed_files(
        spark, listed, root_uri=tmp_path.as_uri(), source_format="json", schema="id long"
    )

    ids = [row.id for row in frame.collect()]
    assert len(ids) == count and set(ids) == set(range(count))
    assert spark.conf.get(spark_listing.LISTING_THRESHOLD, None) in (None, "32")


@pytest.mark.xfail(
    strict=True,
    reason="a local (file:) source file named with a colon fails every run with Hadoop's "
    "'Relative path in absolute URI' (its checksum file's name; on S3A it is read)",
)
def test_a_local_source_file_whose_name_holds_a_colon_is_read(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "iso")], name="2024-01-01T00:00:00.json")

    job.run()

    assert target_rows(job) == [(1, "a", 1, "iso")]


def test_a_file_deleted_between_the_listing_and_the_read_fails_the_run_then_the_rerun_loads(
    spark, tmp_path, store, monkeypatch
):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "x")])
    job.run()
    job.land([row(2, "a", 2, "kept")])
    job.land([row(3, "b", 2, "deleted")], name="vanishing.json")
    read = files.read_files

    def delete_then_read(*args, **kwargs):
        (tmp_path / "source" / "vanishing.json").unlink(missing_ok=True)
        return read(*args, **kwargs)

    monkeypatch.setattr(files, "read_files", delete_then_read)
    with pytest.raises(Exception, match=r"vanishing\.json") as failed:
        job.run()
    assert "does not exist" in str(failed.value).splitlines()[0]
    assert store.get_watermark("orders")["job_run_id"] == "jr_1"
    monkeypatch.undo()

    job.run()

    assert target_rows(job) == [(1, "a", 1, "x"), (2, "a", 2, "kept")]


def test_a_symlink_loop_in_the_source_fails_in_one_line_writing_nothing(spark, tmp_path, store):
    job = Job(spark, tmp_path, store)
    job.land([row(1, "a", 1, "x")])
    (tmp_path / "source" / "loop").symlink_to(tmp_path / "source", target_is_directory=True)

    with pytest.raises(Exception) as failed:
        job.run()

    first = str(failed.value).splitlines()[0]
    assert "loop" in first and len(first) < 500, first
    assert not (job.target / "part=a").exists()


def test_a_file_deleted_after_the_read_is_planned_fails_first_line_naming_it(
    spark, tmp_path, store, monkeypatch
):
    declared = "id bigint, part string, updated bigint, value string"
    job = Job(spark, tmp_path, store, source_schema=declared)
    job.land([row(1, "a", 1, "x")], name="vanishing.json")
    read = files.read_files

    def read_then_delete(*args, **kwargs):
        frame = read(*args, **kwargs)  # planned (the path checked), read lazily
        (tmp_path / "source" / "vanishing.json").unlink()
        return frame

    monkeypatch.setattr(files, "read_files", read_then_delete)
    with pytest.raises(Exception) as failed:
        job.run(source_schema=declared)

    first = first_line(failed.value)  # what run_script prints, and the summary's error
    assert "vanishing.json" in first and "does not exist" in first, first
    assert store.get_watermark("orders") is None
