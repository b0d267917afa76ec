"""The Hadoop ``FileSystem`` calls the writer, ``publish`` and ``key_index`` make.

One adapter for ``file:``, ``s3a:`` and ``hdfs:``: ``file:`` listings, sizes, file moves,
deletes, reads and writes are done in Python (``local_files``), everything else through py4j.
Listings skip the names Spark's file index skips (``partitions.paths.is_hidden``),
so the writer and Spark agree on what the target holds.
"""

from __future__ import annotations

import errno
import functools
import weakref
from collections.abc import Iterator
from urllib.parse import urlsplit

from py4j.java_gateway import JavaClass, JavaObject, JVMView
from pyspark.sql import SparkSession

from glue_incremental.io import local_files
from glue_incremental.partitions.paths import is_hidden


def session_jvm(spark: SparkSession) -> JVMView:
    """The session's py4j view of its JVM (None only once the context is stopped)."""
    view = spark.sparkContext._jvm
    assert view is not None, "a SparkSession whose JVM is gone"
    return view


@functools.lru_cache(maxsize=64)
def jvm_class(jvm: JVMView, name: str) -> JavaClass:
    """The JVM class ``name``, looked up once per JVM (each package step is a py4j call)."""
    found = jvm
    for part in name.split("."):
        found = getattr(found, part)
    return found


# Per JVM, by file system root: (the Hadoop configuration, the root's FileSystem).
_OPENED: weakref.WeakKeyDictionary[JVMView, dict[str, tuple[JavaObject, JavaObject]]] = (
    weakref.WeakKeyDictionary()
)


def jvm_filesystem(spark: SparkSession, uri: str) -> tuple[JavaObject, JavaObject]:
    """The session's Hadoop configuration and the FileSystem of ``uri``'s root.

    Looked up once per JVM and root (scheme and authority), as Hadoop's own FileSystem
    cache returns one instance per root: a run opens its target several times, and each
    lookup is three py4j round trips.
    """
    parts = urlsplit(uri)
    root = f"{parts.scheme}://{parts.netloc}"
    opened = _OPENED.setdefault(session_jvm(spark), {})
    if root not in opened:
        opened[root] = open_in_jvm(spark, uri)
    return opened[root]


def open_in_jvm(spark: SparkSession, uri: str) -> tuple[JavaObject, JavaObject]:
    """Hadoop's configuration and ``FileSystem.get`` for ``uri``: three py4j round trips."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    path_class = jvm_class(session_jvm(spark), "org.apache.hadoop.fs.Path")
    return conf, path_class(uri).getFileSystem(conf)


# Hadoop's codecs by extension: such a file's first line is read through its codec.
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst")


class HadoopFileSystem:
    """The Hadoop FileSystem calls the writer and ``publish`` need (file://, s3a://, hdfs://)."""

    def __init__(self, spark: SparkSession, uri: str, *, local_in_python: bool = True) -> None:
        self._jvm = jvm = session_jvm(spark)
        self._Path = jvm_class(jvm, "org.apache.hadoop.fs.Path")
        self._conf, self._fs = jvm_filesystem(spark, uri)
        self._made_dirs: set[str] = set()
        # file: listings, sizes, moves and deletes in Python (``local_files``): no py4j
        # calls per entry or per file.
        self._local = local_in_python and local_files.is_local(uri)

    def exists(self, uri: str) -> bool:
        if self._local:
            return local_files.exists(uri)
        return bool(self._fs.exists(self._Path(uri)))

    def size(self, uri: str) -> int | None:
        """A file's length; None if it is absent or a directory."""
        if self._local:
            return local_files.size(uri)
        path = self._Path(uri)
        if not self._fs.exists(path):
            return None
        status = self._fs.getFileStatus(path)
        return None if status.isDirectory() else int(status.getLen())

    def delete_tree(self, uri: str) -> None:
        self._made_dirs.clear()
        self._fs.delete(self._Path(uri), True)

    def delete(self, uri: str) -> None:
        self.delete_tree(uri)

    def delete_file(self, uri: str) -> None:
        if self._local:
            try:
                local_files.delete_file(uri)
                return
            except IsADirectoryError:
                pass  # Hadoop's answer for a directory: deleted if empty, refused if not
        self._fs.delete(self._Path(uri), False)

    def delete_dir_if_empty(self, uri: str) -> None:
        self._made_dirs.clear()
        if self._local:
            local_files.remove_dir_if_empty(uri)
            return
        path = self._Path(uri)
        if self._fs.exists(path) and not list(self._fs.listStatus(path)):
            self._fs.delete(path, False)

    def mkdirs(self, uri: str) -> None:
        self._fs.mkdirs(self._Path(uri))

    def rename_file(self, source: str, destination: str) -> None:
        if self._local:
            try:
                local_files.move_file(source, destination)
                return
            except OSError as error:
                if error.errno != errno.EXDEV:
                    raise
                # Another device: Hadoop copies then deletes, as it always has.
        # One mkdirs per directory of a publish, not per file (each costs requests on S3).
        parent = _parent(destination)
        if parent not in self._made_dirs:
            self.mkdirs(parent)
            self._made_dirs.add(parent)
        if not self._fs.rename(self._Path(source), self._Path(destination)):
            raise OSError(f"could not move {source} to {destination}")

    def copy_file(self, source: str, destination: str) -> None:
        """Copy one file (a server-side copy on S3); the destination is replaced."""
        parent = _parent(destination)
        if parent not in self._made_dirs:
            self.mkdirs(parent)
            self._made_dirs.add(parent)
        copied = jvm_class(self._jvm, "org.apache.hadoop.fs.FileUtil").copy(
            self._fs, self._Path(source), self._fs, self._Path(destination), False, True, self._conf
        )
        if not copied:
            raise OSError(f"could not copy {source} to {destination}")

    def write_bytes(self, uri: str, data: bytes) -> None:
        if self._local:
            local_files.write_bytes(uri, data)
            return
        stream = self._fs.create(self._Path(uri), True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def read_bytes(self, uri: str) -> bytes | None:
        if self._local:
            return local_files.read_bytes(uri)
        path = self._Path(uri)
        if not self._fs.exists(path):
            return None
        stream = self._fs.open(path)
        try:
            return bytes(jvm_class(self._jvm, "org.apache.commons.io.IOUtils").toByteArray(stream))
        finally:
            stream.close()

    def first_line(self, uri: str) -> str:
        """The file's first line (a CSV header), decompressed by its extension as Spark reads it
        (``.gz``, ``.bz2``...); empty for an empty file. Reads a few bytes, not the file."""
        if self._local and not uri.lower().endswith(_COMPRESSED):
            with open(local_files.local_path(uri), encoding="utf-8", newline="") as text:
                return text.readline().rstrip("\r\n")
        path = self._Path(uri)
        factory = jvm_class(self._jvm, "org.apache.hadoop.io.compress.CompressionCodecFactory")
        codec = factory(self._conf).getCodec(path)
        stream = self._fs.open(path)
        try:
            raw = stream if codec is None else codec.createInputStream(stream)
            io = self._jvm.java.io
            line = io.BufferedReader(io.InputStreamReader(raw, "UTF-8")).readLine()
            return "" if line is None else str(line)
        finally:
            stream.close()

    def _entries(self, uri: str) -> list[local_files.LocalEntry]:
        """``listStatus``: [] if ``uri`` is absent."""
        if self._local:
            return local_files.entries(uri)
        return [self._entry(status) for status in self._statuses(uri)]

    def _statuses(self, uri: str) -> list[JavaObject]:
        path = self._Path(uri)
        if not self._fs.exists(path):
            return []
        return list(self._fs.listStatus(path))

    @staticmethod
    def _entry(status: JavaObject) -> local_files.LocalEntry:
        child = status.getPath()
        directory = bool(status.isDirectory())
        return local_files.LocalEntry(
            str(child), str(child.getName()), directory, 0 if directory else int(status.getLen())
        )

    def list_files(self, uri: str) -> list[tuple[str, int]]:
        return [(entry.uri, entry.size) for entry in self._entries(uri) if not entry.is_directory]

    def list_dirs(self, uri: str) -> list[str]:
        return [entry.uri for entry in self._entries(uri) if entry.is_directory]

    def has_data_files(self, uri: str) -> bool:
        return self.first_data_file(uri) is not None

    def first_data_file(self, uri: str) -> str | None:
        """A visible file under ``uri`` (any one), found without listing every directory."""
        return next(self._walk_files(uri), None)

    def _iter_entries(self, uri: str) -> Iterator[local_files.LocalEntry]:
        if self._local:
            yield from local_files.entries(uri)
            return
        # An iterator, not listStatus: stopping at the first match costs a few py4j calls
        # (S3A: a page) instead of one per entry of a directory that grows with history.
        path = self._Path(uri)
        if not self._fs.exists(path):
            return
        iterator = self._fs.listStatusIterator(path)
        while iterator.hasNext():
            yield self._entry(iterator.next())

    def _walk_files(self, uri: str) -> Iterator[str]:
        for entry in self._iter_entries(uri):
            if is_hidden(entry.name):
                continue
            if entry.is_directory:
                yield from self._walk_files(entry.uri)
            else:
                yield entry.uri

    def data_dirs(self, root: str) -> list[str]:
        """Relative directories under ``root`` ("" for itself) directly holding a visible
        file, at any depth and whatever their names: everything a reader of ``root`` sees."""
        found = []
        pending = [("", root)]
        while pending:
            relative, uri = pending.pop()
            entries = [entry for entry in self._entries(uri) if not is_hidden(entry.name)]
            if any(not entry.is_directory for entry in entries):
                found.append(relative)
            pending.extend(
                (f"{relative}/{entry.name}".lstrip("/"), entry.uri)
                for entry in entries
                if entry.is_directory
            )
        return sorted(found)

    def partition_dirs(self, root: str, depth: int) -> list[str]:
        """Relative ``k=v/...`` directories ``depth`` levels below ``root``."""
        return self.partition_dirs_and_hidden(root, depth)[0]

    def partition_dirs_and_hidden(self, root: str, depth: int) -> tuple[list[str], list[str]]:
        """``partition_dirs``, and the ``k=v`` directories on the way that Spark's file index
        skips (``is_hidden``: a value ending in ``._COPYING_`` or ``_$folder$``): what is
        written there no reader sees."""
        level, hidden = [("", root)], []
        for _ in range(depth):
            found = [
                (f"{relative}/{entry.name}".lstrip("/"), entry)
                for relative, path in level
                for entry in self._entries(path)
                if entry.is_directory and "=" in entry.name
            ]
            hidden += [relative for relative, entry in found if is_hidden(entry.name)]
            level = [(relative, e.uri) for relative, e in found if not is_hidden(e.name)]
        return [relative for relative, _ in level], hidden


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0]
