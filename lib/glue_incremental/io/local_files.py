"""``file:`` paths read, moved and deleted in Python, exactly as Hadoop's local file system does.

Hadoop answers each listed entry through several py4j calls: publishing a
full reload of 800 partitions spent about 20 s on listings and sizes alone,
and a first load of 1,600 files about 8 s on Hadoop's renames (5 ms each,
against 0.1 ms here). A move or delete takes the file's ``.crc`` checksum
with it, as Hadoop's ``ChecksumFileSystem`` does, so Hadoop and Spark read the
result as if Hadoop had made it. S3A or HDFS paths never come here.
``tests/integration/test_local_filesystem.py`` checks every answer and every
tree against Hadoop's.
"""

from __future__ import annotations

import os
import re
import stat as stat_mode
from dataclasses import dataclass

SCHEME = "file:"


@dataclass(frozen=True)
class LocalEntry:
    """One directory entry: ``uri`` as Hadoop prints it (``file:/dir/name``), links followed."""

    uri: str
    name: str
    is_directory: bool
    size: int


def is_local(uri: str) -> bool:
    return uri[: len(SCHEME)].lower() == SCHEME


def local_path(uri: str) -> str:
    """``file:///a/b``, ``file:/a/b//`` -> ``/a/b``. Hadoop takes the text literally: no %-decoding."""
    rest = uri[len(SCHEME) :]
    if rest.startswith("//"):
        rest = rest[2:]  # an empty authority: file:///a
    normalized = re.sub("/+", "/", rest)
    return normalized.rstrip("/") or "/"


def hadoop_uri(path: str) -> str:
    return SCHEME + path


def _is_checksum(name: str) -> bool:
    # Hadoop's ChecksumFileSystem hides ``.<file>.crc`` from every listing.
    return name.startswith(".") and name.endswith(".crc")


@dataclass(frozen=True)
class Child:
    """One entry of a local directory: times in whole milliseconds, links followed."""

    name: str
    is_directory: bool
    size: int
    modified_ms: int


def children(path: str) -> list[Child]:
    """The entries of directory ``path`` Hadoop's local file system lists (no ``.crc``).

    Raises ``FileNotFoundError`` or ``NotADirectoryError`` as ``os.scandir`` does.
    """
    found = []
    with os.scandir(path) as scan:
        for item in scan:
            if _is_checksum(item.name):
                continue
            try:
                stat = item.stat()  # follows links, as java.io.File does
            except FileNotFoundError:  # removed meanwhile, or a dangling link
                continue
            directory = item.is_dir()
            found.append(
                Child(
                    item.name,
                    directory,
                    0 if directory else stat.st_size,
                    stat.st_mtime_ns // 1_000_000,
                )
            )
    return found


def entries(uri: str) -> list[LocalEntry]:
    """``FileSystem.listStatus``: the children of a directory, a file itself, [] if absent."""
    path = local_path(uri)
    try:
        return [
            LocalEntry(
                hadoop_uri(os.path.join(path, child.name)),
                child.name,
                child.is_directory,
                child.size,
            )
            for child in children(path)
        ]
    except FileNotFoundError:
        return []
    except NotADirectoryError:  # a file lists itself, unless the checksum filter hides it
        name, length = os.path.basename(path), size(uri)
        if length is None or _is_checksum(name):
            return []
        return [LocalEntry(hadoop_uri(path), name, False, length)]


def size(uri: str) -> int | None:
    """A file's length; None if it is absent or a directory."""
    try:
        found = os.stat(local_path(uri))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None if stat_mode.S_ISDIR(found.st_mode) else found.st_size


def exists(uri: str) -> bool:
    return os.path.exists(local_path(uri))


def checksum_path(path: str) -> str:
    """Where Hadoop keeps ``path``'s checksum: ``dir/.name.crc``."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.crc")


def move_file(source_uri: str, destination_uri: str) -> None:
    """Hadoop's ``rename`` of one file: its parent made, its checksum moved with it (or a stale
    one at the destination removed). Raises ``FileNotFoundError`` if ``source_uri`` is absent."""
    source, destination = local_path(source_uri), local_path(destination_uri)
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    os.rename(source, destination)
    source_checksum, destination_checksum = checksum_path(source), checksum_path(destination)
    if os.path.lexists(source_checksum):
        os.rename(source_checksum, destination_checksum)
    elif os.path.lexists(destination_checksum):
        os.remove(destination_checksum)


def delete_file(uri: str) -> bool:
    """Hadoop's non-recursive ``delete`` of a file, checksum first; False if absent.

    Raises ``IsADirectoryError`` for a directory (the caller asks Hadoop, which deletes an
    empty one). Links are followed for the question, as ``java.io.File`` does."""
    path = local_path(uri)
    try:
        if stat_mode.S_ISDIR(os.stat(path).st_mode):
            raise IsADirectoryError(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    checksum = checksum_path(path)
    if os.path.lexists(checksum):
        os.remove(checksum)
    os.remove(path)
    return True


def remove_dir_if_empty(uri: str) -> bool:
    """Remove a directory that holds nothing Hadoop's listings show; True if removed.

    Checksums left alone in it are removed with it: a process killed between moving a file
    and moving its checksum leaves one behind, and Hadoop would refuse to delete the
    directory for it (its listing hides the file; its non-recursive delete counts it)."""
    path = local_path(uri)
    try:
        with os.scandir(path) as entries:
            orphans = [entry.path for entry in entries]
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not all(_is_checksum(os.path.basename(found)) for found in orphans):
        return False
    for orphan in orphans:
        os.remove(orphan)
    os.rmdir(path)
    return True


def write_bytes(uri: str, data: bytes) -> None:
    """Hadoop's ``create`` (overwrite) then write: the parent made, any checksum of an earlier
    file of that name removed (Hadoop would verify against it), written whole or not at all
    (a temporary file renamed over it)."""
    path = local_path(uri)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    checksum = checksum_path(path)
    if os.path.lexists(checksum):
        os.remove(checksum)
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.writing")
    with open(temporary, "wb") as out:
        out.write(data)
    os.replace(temporary, path)


def read_bytes(uri: str) -> bytes | None:
    """A file's bytes; None if it is absent (a directory raises, as Hadoop's ``open`` does)."""
    try:
        with open(local_path(uri), "rb") as found:
            return found.read()
    except FileNotFoundError:
        return None
