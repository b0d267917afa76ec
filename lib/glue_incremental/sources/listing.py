"""Listing a file source: what is there, with modification times, through Hadoop's ``FileSystem``.

``list_source_files`` walks ``file:``/``hdfs:`` level by level and skips leaf
directories unchanged since the bookmark's band start (they have directory
times); object stores (``s3:``/``s3a:``, ...) are listed with one recursive
listing here - ``sources.s3_listing`` lists S3 by key order instead. Hidden
names (``_SUCCESS``, ``.crc``, ``_temporary/``, ...) are never returned. The
rules are in ``docs/file-bookmarks.md``.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from functools import cached_property

from py4j.java_gateway import JavaObject
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.io import local_files
from glue_incremental.io.hadoop_fs import jvm_class, jvm_filesystem
from glue_incremental.partitions.paths import is_hidden, parse_name

FINGERPRINT_HEX_CHARS = 16
# Schemes whose directories have no modification time worth trusting.
OBJECT_STORE_SCHEMES = frozenset(
    {"s3", "s3a", "s3n", "gs", "wasb", "wasbs", "abfs", "abfss", "oss", "cosn"}
)

__all__ = [
    "FINGERPRINT_HEX_CHARS",
    "OBJECT_STORE_SCHEMES",
    "ListingStats",
    "SourceFile",
    "SourceNotFound",
    "fingerprint_of",
    "list_source_files",
]


class SourceNotFound(GlueIncrementalError, ValueError):
    """The source root does not exist; ``uri`` is the root as given."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        super().__init__(f"source root {uri!r} does not exist")


def fingerprint_of(uri: str, modified_ms: int, size: int) -> str:
    """A short stable hash of (full URI, modification time, size): 16 hex characters."""
    digest = hashlib.sha256(f"{uri}\n{modified_ms}\n{size}".encode()).hexdigest()
    return digest[:FINGERPRINT_HEX_CHARS]


@dataclass(frozen=True)
class SourceFile:
    """One listed file. ``partition`` holds the ``key=value`` directories under the root, in order
    (values unescaped like Spark's: ``%3A`` -> ``:``)."""

    uri: str
    modified_ms: int
    size: int
    partition: tuple[tuple[str, str], ...] = ()

    @cached_property
    def fingerprint(self) -> str:
        """Hash of (uri, modified_ms, size): a rewritten file (new time or size) is a new file."""
        return fingerprint_of(self.uri, self.modified_ms, self.size)

    @property
    def directory(self) -> str:
        """The URI of the directory holding the file (the key of the late-file counts)."""
        return self.uri.rsplit("/", 1)[0]


@dataclass(frozen=True)
class ListingStats:
    """How a listing went. ``pruned_directories`` are leaf directories not listed (URIs)."""

    root_uri: str
    files_listed: int
    directories_listed: int
    partitions_pruned: int = 0
    directory_mtimes_usable: bool = True
    recursive: bool = False
    pruned_directories: tuple[str, ...] = ()


@dataclass
class _Directory:
    uri: str
    modified_ms: int
    partition: tuple[tuple[str, str], ...]
    path: JavaObject | str  # org.apache.hadoop.fs.Path; a local path for file: (in Python)


def _is_java_not_found(error: Exception) -> bool:
    java = getattr(error, "java_exception", None)
    name = java.getClass().getName() if java is not None else ""
    return name.endswith("FileNotFoundException")


def list_source_files(
    spark: SparkSession,
    root_uri: str,
    *,
    modified_after_ms: int | None = None,
    prune_directories: bool = True,
) -> tuple[list[SourceFile], ListingStats]:
    """Every visible file under ``root_uri`` (sorted by (modified_ms, uri)) and how listing went.

    ``modified_after_ms`` is the pruning threshold (the bookmark's band start):
    leaf directories whose modification time is ``<= modified_after_ms`` are not
    listed (``ListingStats.pruned_directories``). Files of listed directories
    are returned whatever their time - the planner needs old ones to count late
    files. None (first run), ``prune_directories=False`` and directories
    reporting time 0 list everything; object stores are listed in full with one
    recursive listing.

    Raises ``SourceNotFound`` if the root does not exist and ``ValueError`` if
    it is not a directory or its URI/scheme is unusable.
    """
    jvm = spark._jvm
    try:
        _, fs = jvm_filesystem(spark, root_uri)
        path = fs.makeQualified(jvm_class(jvm, "org.apache.hadoop.fs.Path")(root_uri))
    except Py4JJavaError as error:
        raise ValueError(f"cannot open source root {root_uri!r}: {error.java_exception}") from error
    try:
        root_status = fs.getFileStatus(path)
    except Py4JJavaError as error:
        if _is_java_not_found(error):
            raise SourceNotFound(root_uri) from None
        raise
    if not root_status.isDirectory():
        raise ValueError(
            f"source root {root_uri!r} is a file; give the directory holding the files"
        )
    root = path.toString()
    scheme = (path.toUri().getScheme() or "").lower()
    if scheme in OBJECT_STORE_SCHEMES:
        files, directories = _list_recursively(fs, path, root)
        stats = ListingStats(
            root_uri=root,
            files_listed=len(files),
            directories_listed=directories,
            directory_mtimes_usable=False,
            recursive=True,
        )
    else:
        threshold = modified_after_ms if prune_directories else None
        files, stats = _list_by_directory(fs, path, root, root_status, threshold)
    files.sort(key=lambda source: (source.modified_ms, source.uri))
    return files, stats


def _list_recursively(fs: JavaObject, path: JavaObject, root: str) -> tuple[list[SourceFile], int]:
    """One recursive listing (a flat, paged LIST on object stores)."""
    prefix = root if root.endswith("/") else root + "/"
    files: list[SourceFile] = []
    directories: set[str] = set()
    iterator = fs.listFiles(path, True)
    while iterator.hasNext():
        status = iterator.next()
        uri = status.getPath().toString()
        relative = uri[len(prefix) :] if uri.startswith(prefix) else uri.rsplit("/", 1)[-1]
        parts = relative.split("/")
        if any(is_hidden(part) for part in parts):
            continue
        partition = tuple(pair for part in parts[:-1] for pair in parse_name(part))
        source = SourceFile(uri, int(status.getModificationTime()), int(status.getLen()), partition)
        files.append(source)
        directories.add(source.directory)
    return files, len(directories)


@dataclass(frozen=True)
class _Entry:
    """One directory entry as a listing sees it; ``path`` is what lists it in turn."""

    uri: str
    name: str
    modified_ms: int
    is_directory: bool
    size: int
    path: JavaObject | str


def _hadoop_children(fs: JavaObject, directory: _Directory) -> list[_Entry]:
    """``FileSystem.listStatus``: five py4j calls per entry. [] if the directory is gone."""
    try:
        statuses = fs.listStatus(directory.path)
    except Py4JJavaError as error:
        if _is_java_not_found(error):  # removed since its parent was listed
            return []
        raise
    entries = []
    for status in statuses:
        child = status.getPath()
        uri = child.toString()
        entries.append(
            _Entry(
                uri,
                uri.rstrip("/").rsplit("/", 1)[-1],
                int(status.getModificationTime()),
                bool(status.isDirectory()),
                int(status.getLen()),
                child,
            )
        )
    return entries


def _local_children(directory: _Directory) -> list[_Entry]:
    """The same entries for ``file:`` as Hadoop's local file system gives (URIs ``file:/...``,
    times in whole milliseconds, links followed), read in Python: no py4j call per file."""
    try:
        found = local_files.children(directory.path)
    except (FileNotFoundError, NotADirectoryError):  # removed since its parent was listed
        return []
    return [
        _Entry(
            f"{directory.uri.rstrip('/')}/{child.name}",
            child.name,
            child.modified_ms,
            child.is_directory,
            child.size,
            os.path.join(directory.path, child.name),
        )
        for child in found
    ]


def _list_by_directory(
    fs: JavaObject, path: JavaObject, root: str, root_status: JavaObject, threshold: int | None
) -> tuple[list[SourceFile], ListingStats]:
    """Level by level, hidden directories not entered; with a threshold, unchanged leaves
    are not listed. A directory removed while listing (``_temporary``, ...) is empty."""
    files: list[SourceFile] = []
    pruned: list[str] = []
    listed = 0

    local = (path.toUri().getScheme() or "").lower() == "file"
    children = _local_children if local else functools.partial(_hadoop_children, fs)

    def list_one(directory: _Directory) -> tuple[list[SourceFile], list[_Directory]]:
        nonlocal listed
        listed += 1
        found_files: list[SourceFile] = []
        found_dirs: list[_Directory] = []
        for entry in children(directory):
            if is_hidden(entry.name):
                continue
            if entry.is_directory:
                partition = directory.partition + parse_name(entry.name)
                found_dirs.append(_Directory(entry.uri, entry.modified_ms, partition, entry.path))
            else:
                found_files.append(
                    SourceFile(entry.uri, entry.modified_ms, entry.size, directory.partition)
                )
        return found_files, found_dirs

    root_modified = int(root_status.getModificationTime())
    usable = root_modified > 0
    level = [_Directory(root, root_modified, (), path.toUri().getPath() if local else path)]
    is_root = True
    while level:
        if not is_root and usable and any(d.modified_ms <= 0 for d in level):
            usable = False  # no usable directory times: list everything from here on
        if is_root or not usable or threshold is None:
            changed, unchanged = level, []
        else:
            changed = [d for d in level if d.modified_ms > threshold]
            unchanged = sorted(
                (d for d in level if d.modified_ms <= threshold),
                key=lambda d: (-d.modified_ms, d.uri),
            )
        next_level: list[_Directory] = []
        has_files = has_dirs = False
        to_list = list(changed)
        if not to_list and unchanged:
            to_list = [unchanged.pop(0)]  # probe: is this a level of leaves?
        while to_list:
            found_files, found_dirs = list_one(to_list.pop(0))
            files.extend(found_files)
            next_level.extend(found_dirs)
            has_files = has_files or bool(found_files)
            has_dirs = has_dirs or bool(found_dirs)
            if not to_list and unchanged:
                if has_dirs:  # an intermediate level: its sub-directories may be new
                    to_list, unchanged = unchanged, []
                elif not has_files:  # only empty directories so far: probe another
                    to_list = [unchanged.pop(0)]
        # What is left is a level of leaves unchanged since the band start.
        pruned.extend(directory.uri for directory in unchanged)
        level = sorted(next_level, key=lambda d: d.uri)
        is_root = False
    stats = ListingStats(
        root_uri=root,
        files_listed=len(files),
        directories_listed=listed,
        partitions_pruned=len(pruned),
        directory_mtimes_usable=usable,
        recursive=False,
        pruned_directories=tuple(pruned),
    )
    return files, stats
