"""The checkout and the local jars are found from the working directory, never from ``__file__``."""

from __future__ import annotations

import pytest
from glue_incremental import spark
from glue_incremental_tools import project


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "glue_scripts").mkdir()
    (tmp_path / "lib" / "glue_incremental").mkdir(parents=True)
    (tmp_path / "build" / "jars").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    return tmp_path


@pytest.fixture(autouse=True)
def no_overrides(monkeypatch):
    monkeypatch.delenv(project.ROOT_ENV, raising=False)
    monkeypatch.delenv(spark.JARS_DIR_ENV, raising=False)


def test_the_checkout_is_the_working_directory_or_its_nearest_parent(checkout, monkeypatch):
    monkeypatch.chdir(checkout / "docs")

    assert project.project_root() == checkout.resolve()
    assert spark.jars_dir() == checkout.resolve() / "build" / "jars"


def test_the_environment_variable_names_the_checkout_from_anywhere(
    checkout, tmp_path_factory, monkeypatch
):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    monkeypatch.setenv(project.ROOT_ENV, str(checkout))

    assert project.project_root() == checkout.resolve()


def test_outside_a_checkout_the_error_says_where_it_looked_and_what_to_do(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    with pytest.raises(project.ProjectNotFound) as raised:
        project.project_root()

    assert str(raised.value).startswith(f"no project checkout at {tmp_path.resolve()}")
    assert "--root" in str(raised.value) and project.ROOT_ENV in str(raised.value)


def test_a_jars_directory_that_does_not_exist_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv(spark.JARS_DIR_ENV, str(tmp_path / "missing"))

    with pytest.raises(FileNotFoundError, match=spark.JARS_DIR_ENV):
        spark.jars_dir()


def test_without_local_jars_iceberg_is_not_configured(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    assert spark.iceberg_jars() == []
