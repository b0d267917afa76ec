"""Local Spark sessions map their classes from an archive keyed by their class path."""

from __future__ import annotations

import os
import subprocess

import pytest
from glue_incremental import spark
from glue_incremental_tools import runner


@pytest.fixture
def jars(tmp_path, monkeypatch):
    directory = tmp_path / "build" / "jars"
    directory.mkdir(parents=True)
    paths = []
    for name in ("b.jar", "a.jar"):
        (directory / name).write_bytes(b"jar")
        paths.append(str(directory / name))
    monkeypatch.setenv("GLUE_INCREMENTAL_JARS_DIR", str(directory))
    monkeypatch.delenv("GLUE_INCREMENTAL_CLASS_DATA_ARCHIVE", raising=False)
    monkeypatch.delenv("GLUE_INCREMENTAL_CLASS_DATA_DUMP", raising=False)
    return paths


def test_the_archive_lives_beside_the_jars_and_is_named_for_the_class_path(jars, tmp_path):
    archive = spark.class_data_archive(jars)
    assert archive is not None
    assert archive.parent == tmp_path / "build" / "jvm"
    assert spark.class_data_archive(list(jars)) == archive
    assert spark.class_data_archive(jars[:1]) != archive


def test_a_changed_jar_never_finds_the_old_archive(jars):
    before = spark.class_data_archive(jars)
    with open(jars[0], "ab") as jar:
        jar.write(b" rebuilt")
    assert spark.class_data_archive(jars) != before


def test_a_session_maps_the_archive_only_once_it_exists(jars):
    assert spark.class_data_options(jars) == []
    archive = spark.class_data_archive(jars)
    archive.parent.mkdir()
    archive.write_bytes(b"archive")
    assert spark.class_data_options(jars) == [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds*=off"]


def test_the_archive_can_be_turned_off(jars, monkeypatch):
    monkeypatch.setenv("GLUE_INCREMENTAL_CLASS_DATA_ARCHIVE", "off")
    assert spark.class_data_archive(jars) is None
    assert spark.class_data_options(jars) == []


def test_every_session_with_the_same_jars_has_one_class_path(jars, monkeypatch):
    monkeypatch.setenv("GLUE_INCREMENTAL_JARS", ",".join(jars))
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    assert spark.local_jars([jars[0]]) == sorted(jars)
    assert spark.local_jars() == spark.local_jars(reversed(jars))


def test_a_jvm_given_an_archive_that_does_not_fit_starts_and_says_nothing(tmp_path):
    garbage = tmp_path / "other.jsa"
    garbage.write_bytes(os.urandom(4096))
    started = subprocess.run(
        ["java", f"-XX:SharedArchiveFile={garbage}", "-Xlog:cds*=off", "-version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0
    assert started.stdout == ""
    assert "cds" not in started.stderr.lower()


def test_a_local_run_compiles_with_c1_unless_the_options_are_chosen(monkeypatch):
    monkeypatch.delenv("GLUE_INCREMENTAL_JVM_OPTIONS", raising=False)
    child = runner._child_env([], None, None)
    assert child["GLUE_INCREMENTAL_JVM_OPTIONS"] == runner.LOCAL_RUN_JVM_OPTIONS
    monkeypatch.setenv("GLUE_INCREMENTAL_JVM_OPTIONS", "")
    assert runner._child_env([], None, None)["GLUE_INCREMENTAL_JVM_OPTIONS"] == ""


def test_a_runners_script_without_iceberg_finds_the_archive_beside_the_s3a_jars(
    jars, tmp_path, tmp_path_factory, monkeypatch
):
    # The runner starts a script in a temporary directory and names only S3A's jar directory.
    monkeypatch.delenv("GLUE_INCREMENTAL_JARS_DIR")
    monkeypatch.setenv("GLUE_INCREMENTAL_S3A_JAR_DIR", str(tmp_path / "build" / "jars"))
    monkeypatch.chdir(tmp_path_factory.mktemp("run"))
    assert spark.class_data_archive(jars).parent == tmp_path / "build" / "jvm"
    monkeypatch.delenv("GLUE_INCREMENTAL_S3A_JAR_DIR")
    assert spark.class_data_archive(jars) is None


def test_a_local_run_generates_no_whole_stage_code_unless_spark_submit_args_are_chosen(
    monkeypatch,
):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    child = runner._child_env([], None, None)
    assert child["PYSPARK_SUBMIT_ARGS"] == (
        "--conf spark.sql.codegen.wholeStage=false pyspark-shell"
    )
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    assert runner._child_env([], None, None)["PYSPARK_SUBMIT_ARGS"] == "pyspark-shell"
