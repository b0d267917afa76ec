"""The writer reads ``file:`` listings and sizes in Python (``local_files``): every answer must
be Hadoop's, since the publish protocol decides from them what to move, keep and delete."""

from __future__ import annotations

import errno
import os
import shutil

import pytest
from glue_incremental.io import local_files
from glue_incremental.targets.parquet import writer

pytestmark = pytest.mark.spark

ODD_NAMES = [
    "date=2024-01-01/a b.parquet",
    "date=2024%3A01/x.parquet",
    "k=ü/é.parquet",
    "part:colon.parquet",
    "_staging/run/_intent.json",
    ".dot.parquet",
    "empty/",
]


def a_target_with_odd_names(spark, root):
    """Spark's own output (with ``.crc`` checksums and ``_SUCCESS``) plus odd names."""
    rows = spark.createDataFrame([(1, "2024-01-01"), (2, "2024-01-02")], "id INT, date STRING")
    rows.write.partitionBy("date").parquet(root.as_uri())
    for index, name in enumerate(ODD_NAMES):
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * (index + 1))
    os.symlink(root / "part:colon.parquet", root / "link.parquet")


def answers(fs, root):
    """Every question the protocol asks, of every path under ``root`` and of absent ones."""
    paths = [root.as_uri(), f"file:{root}", f"file:{root}/", f"file:{root}/absent"]
    for directory, dirs, names in os.walk(root):
        paths += [f"file://{directory}/{name}" for name in [*dirs, *names]]
    return {
        path: (
            fs.exists(path),
            fs.size(path),
            sorted(fs.list_files(path)),
            sorted(fs.list_dirs(path)),
            fs.partition_dirs(path, 1),
            fs.has_data_files(path),
        )
        for path in paths
    }


def test_the_python_answers_about_a_local_target_are_hadoops(spark, tmp_path):
    root = tmp_path / "target"
    a_target_with_odd_names(spark, root)
    python = writer.HadoopFileSystem(spark, root.as_uri())
    hadoop = writer.HadoopFileSystem(spark, root.as_uri(), local_in_python=False)

    in_python, in_hadoop = answers(python, root), answers(hadoop, root)

    assert any(name.endswith(".crc") for _, _, names in os.walk(root) for name in names)
    assert len(in_python) > 20
    assert in_python == in_hadoop


def test_the_first_data_file_found_in_python_is_a_visible_data_file(spark, tmp_path):
    root = tmp_path / "target"
    a_target_with_odd_names(spark, root)
    fs = writer.HadoopFileSystem(spark, root.as_uri())

    first = fs.first_data_file(root.as_uri())

    assert first is not None and first.startswith("file:/")
    assert not os.path.basename(first).startswith((".", "_"))
    assert os.path.isfile(first[len("file:") :])


def tree(root):
    """Every file under ``root`` (checksums included) with its bytes."""
    return {
        os.path.relpath(os.path.join(directory, name), root): open(
            os.path.join(directory, name), "rb"
        ).read()
        for directory, _, names in os.walk(root)
        for name in names
    }


def move_and_delete(fs, root):
    """A publish's file operations: moves into new and existing directories, over a stale
    checksum, and deletes of files with, without and absent checksums."""
    day = root / "date=2024-01-01"
    data = sorted(name for name in os.listdir(day) if name.startswith("part-"))
    (root / "kept").mkdir(parents=True)
    (root / "kept" / ".stale.parquet.crc").write_bytes(b"stale")
    (root / "nocrc.parquet").write_bytes(b"n")
    for name in data:
        fs.rename_file(f"file:{day}/{name}", f"file:{root}/live/date=2024-01-01/{name}")
    fs.rename_file(f"file:{root}/nocrc.parquet", f"file:{root}/kept/stale.parquet")
    fs.rename_file(
        f"file:{root}/date=2024-01-02/{_first_data(root / 'date=2024-01-02')}",
        f"file:{root}/kept/fresh.parquet",
    )
    fs.delete_file(f"file:{root}/kept/fresh.parquet")
    fs.delete_file(f"file:{root}/date=2024%3A01/x.parquet")
    fs.delete_file(f"file:{root}/absent.parquet")
    fs.delete_file(f"file:{root}/empty")


def _first_data(directory):
    return sorted(name for name in os.listdir(directory) if name.endswith(".parquet"))[0]


def test_files_moved_and_deleted_in_python_leave_the_tree_hadoop_leaves(spark, tmp_path):
    original = tmp_path / "original"
    a_target_with_odd_names(spark, original)
    os.remove(original / "link.parquet")
    in_python, in_hadoop = tmp_path / "python", tmp_path / "hadoop"
    shutil.copytree(original, in_python)
    shutil.copytree(original, in_hadoop)

    move_and_delete(writer.HadoopFileSystem(spark, in_python.as_uri()), in_python)
    move_and_delete(
        writer.HadoopFileSystem(spark, in_hadoop.as_uri(), local_in_python=False), in_hadoop
    )

    assert tree(in_python) == tree(in_hadoop)
    assert any(name.endswith(".parquet.crc") for name in tree(in_python))
    moved = spark.read.parquet(f"file:{in_python}/live").collect()
    assert [(row.id, str(row.date)) for row in moved] == [(1, "2024-01-01")]


def test_bytes_written_in_python_over_a_file_hadoop_wrote_read_back_the_same_through_hadoop(
    spark, tmp_path
):
    uri = f"file:{tmp_path}/target/_staging/run/_intent.json"
    python = writer.HadoopFileSystem(spark, uri)
    hadoop = writer.HadoopFileSystem(spark, uri, local_in_python=False)
    hadoop.write_bytes(uri, b"an older, longer intent")
    assert os.path.exists(tmp_path / "target/_staging/run/._intent.json.crc")

    python.write_bytes(uri, b"the new one")

    assert hadoop.read_bytes(uri) == python.read_bytes(uri) == b"the new one"
    assert python.read_bytes(f"{uri}.absent") is None is hadoop.read_bytes(f"{uri}.absent")
    assert sorted(os.listdir(tmp_path / "target/_staging/run")) == ["_intent.json"]


def test_a_directory_left_with_only_a_moved_files_checksum_is_removed_as_empty(spark, tmp_path):
    # A process killed between moving a file and moving its checksum leaves the checksum.
    partition = tmp_path / "target" / "p=a"
    partition.mkdir(parents=True)
    (partition / ".part-1.parquet.crc").write_bytes(b"crc")
    kept = tmp_path / "target" / "p=b"
    kept.mkdir()
    (kept / "_SUCCESS").write_bytes(b"")
    fs = writer.HadoopFileSystem(spark, (tmp_path / "target").as_uri())

    fs.delete_dir_if_empty(f"file:{partition}")
    fs.delete_dir_if_empty(f"file:{kept}")
    fs.delete_dir_if_empty(f"file:{tmp_path}/target/absent")

    assert not partition.exists()
    assert sorted(os.listdir(kept)) == ["_SUCCESS"]


def test_a_move_to_another_device_falls_back_to_hadoops_copy(spark, tmp_path, monkeypatch):
    source, destination = (
        tmp_path / "_staging" / "part-1.parquet",
        tmp_path / "p=a" / "part-1.parquet",
    )
    source.parent.mkdir()
    source.write_bytes(b"data")
    real_rename = os.rename

    def across_devices(old, new):
        if str(old) == str(source):
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(old))
        real_rename(old, new)

    monkeypatch.setattr(local_files.os, "rename", across_devices)
    writer.HadoopFileSystem(spark, tmp_path.as_uri()).rename_file(
        f"file:{source}", f"file:{destination}"
    )

    assert not source.exists()
    assert destination.read_bytes() == b"data"


def test_a_local_session_writes_with_hadoops_permissions_and_checksums_without_chmod(
    spark, tmp_path
):
    """Local sessions use ``LocalFileSystemWithoutForks`` (``make setup`` builds it): the
    permission bits Hadoop's default umask (022) gives, checksums kept and checked on read."""
    from glue_incremental.spark import LOCAL_FILESYSTEM_CLASS, local_filesystem_jar

    assert local_filesystem_jar() is not None, "make setup builds build/jars/local-filesystem.jar"
    assert spark.sparkContext._jsc.hadoopConfiguration().get("fs.file.impl") == (
        LOCAL_FILESYSTEM_CLASS
    )
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, part STRING")
    rows.write.partitionBy("part").parquet(f"file:{tmp_path}/out")
    modes = {}
    for directory, dirs, names in os.walk(tmp_path / "out"):
        modes |= {
            os.path.join(directory, d): (True, os.stat(os.path.join(directory, d))) for d in dirs
        }
        modes |= {
            os.path.join(directory, n): (False, os.stat(os.path.join(directory, n))) for n in names
        }
    assert any(path.endswith(".crc") for path in modes)
    for path, (is_dir, found) in modes.items():
        assert oct(found.st_mode & 0o7777) == oct(0o755 if is_dir else 0o644), path
    assert sorted(spark.read.parquet(f"file:{tmp_path}/out").collect()) == sorted(rows.collect())


def test_the_local_file_system_is_hadoops_own_when_asked(monkeypatch):
    from glue_incremental.spark import LOCAL_FILESYSTEM_ENV, local_filesystem_jar

    monkeypatch.setenv(LOCAL_FILESYSTEM_ENV, "hadoop")
    assert local_filesystem_jar() is None
