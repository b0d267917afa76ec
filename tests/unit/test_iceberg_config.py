"""Iceberg options are validated before any run; the relocated Jackson jar is reproducible."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import zipfile
from datetime import timedelta
from pathlib import Path

import pyspark
import pytest
from glue_incremental import join
from glue_incremental.args import ArgumentError
from glue_incremental.load import job as load_job
from glue_incremental.load.job import LoadConfig
from glue_incremental.targets.iceberg.writer import IcebergTarget, merge_statement

ROOT = Path(__file__).resolve().parents[2]
JACKSON = [
    Path(pyspark.__file__).parent / "jars" / f"jackson-{name}-2.15.2.jar"
    for name in ("core", "databind", "annotations", "datatype-jsr310")
]


def load_options(**overrides):
    options = {
        "source": "file:///src",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "target_format": "iceberg",
        "target_table": "lake.orders",
    }
    options.update(overrides)
    return options


@pytest.mark.parametrize(
    ("overrides", "argument"),
    [
        ({"target_table": None}, "target_table"),
        ({"target_table": "orders"}, "target_table"),
        ({"target_table": "lake.orders; DROP"}, "target_table"),
        ({"target_format": "delta"}, "target_format"),
        ({"target_format": "parquet", "target_table": None}, "target_path"),
    ],
)
def test_bad_iceberg_options_are_rejected_by_name(overrides, argument):
    with pytest.raises(ArgumentError) as caught:
        LoadConfig(**load_options(**overrides))
    assert caught.value.name == argument


def test_the_merge_matches_on_the_key_and_skips_rows_equal_to_the_stored_ones():
    statement = merge_statement("`c`.`db`.`t`", "src", ["id", "v"], ["id"])
    assert "ON t.`id` <=> s.`id`" in statement
    assert (
        "WHEN MATCHED AND (NOT (t.`id` <=> s.`id`) OR NOT (t.`v` <=> s.`v`)) THEN UPDATE SET *"
        in statement
    )
    assert statement.endswith("WHEN NOT MATCHED THEN INSERT *")
    assert IcebergTarget("db.t").name == "glue_catalog.db.t"


def test_the_relocated_jackson_jar_is_reproducible_and_matches_the_pinned_checksum(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "relocate_jar", ROOT / "scripts" / "relocate_jar.py"
    )
    relocate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(relocate)
    pinned = re.search(
        r"ICEBERG_JACKSON_SHA256=(\w+)", (ROOT / "scripts" / "setup.sh").read_text()
    )[1]
    prefix, shaded = "com.fasterxml.jackson", "org.apache.iceberg.shaded.com.fasterxml.jackson"
    relocate.relocate_jars(str(tmp_path / "a.jar"), prefix, shaded, [str(j) for j in JACKSON])

    assert hashlib.sha256((tmp_path / "a.jar").read_bytes()).hexdigest() == pinned
    with zipfile.ZipFile(tmp_path / "a.jar") as jar:
        names = jar.namelist()
        factory = jar.read("org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactory.class")
    assert all(n.startswith(("META-INF/", "org/apache/iceberg/shaded/")) for n in names)
    assert not any("module-info" in n or n.startswith("META-INF/versions/") for n in names)
    assert b"Lcom/fasterxml/jackson/" not in factory.replace(b"shaded/com/fasterxml/jackson/", b"")


def test_iceberg_arguments_are_declared_options_and_need_no_target_path():
    config = LoadConfig.from_args(
        {
            **load_job.OPTIONAL_ARGS,
            "source": "file:///src",
            "watermark_column": "updated",
            "primary_key": "id",
            "target_format": "Iceberg",
            "target_table": "lake.orders",
            "iceberg_expire_older_than": "7 days",
            "iceberg_compact": "true",
        }
    )
    assert (config.target_format, config.target_path) == ("iceberg", "")
    assert config.iceberg_expire_older_than == timedelta(days=7) and config.iceberg_compact
    assert {"target_format", "target_table", "iceberg_catalog"} <= set(load_job.OPTIONAL_ARGS)
    assert "target_path" not in load_job.REQUIRED_ARGS and "target_path" not in join.REQUIRED_ARGS


def test_an_iceberg_target_does_not_make_a_source_password_acceptable():
    with pytest.raises(ArgumentError, match="--source_password is refused") as caught:
        LoadConfig.from_args({**load_options(primary_key="id"), "source_password": "hunter2"})
    assert "hunter2" not in str(caught.value)


def test_the_join_takes_an_iceberg_target_and_iceberg_sides():
    config = join.JoinJobConfig.from_args(
        {
            **join.OPTIONAL_ARGS,
            "left_path": "lake.orders",
            "right_path": "s3://b/payments/",
            "join_keys": "id",
            "partition_by": "day",
            "left_format": "iceberg",
            "target_format": "iceberg",
            "target_table": "lake.enriched",
        }
    )
    assert (config.format("left"), config.iceberg_target.name) == (
        "iceberg",
        "glue_catalog.lake.enriched",
    )
    with pytest.raises(ArgumentError) as caught:
        join.JoinJobConfig.from_args(
            {
                **join.OPTIONAL_ARGS,
                "left_path": "a",
                "right_path": "b",
                "join_keys": "id",
                "partition_by": "day",
            }
        )
    assert caught.value.name == "target_path"
