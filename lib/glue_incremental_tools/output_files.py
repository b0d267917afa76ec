"""A Parquet target's files, for ``watermarks rewind`` to restore them without Spark.

The operator's command restores the files the publish retained (``glue_incremental.targets.parquet.restore``)
through the same object operations the job uses (``targets.parquet.publish.ObjectStore``, plus a copy):
S3 through boto3 (``s3://`` and ``s3a://`` name the same objects), a local path through the
OS. Only these semantics are relied on: one object is fully present or absent (a ``PUT`` or
``COPY``, a local ``rename``), and a rename may be a copy then a delete.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from glue_incremental.io import local_files

# Hadoop's local file system keeps a ``.<name>.crc`` beside each file it writes and checks
# it on read: a file moved or copied here takes its checksum along.
_CRC = ".{}.crc"


def open_store(target_uri: str) -> Any:
    """The object store of ``target_uri``: S3 for ``s3://``/``s3a://``, else the local disk."""
    scheme = target_uri.split("://", 1)[0].lower() if "://" in target_uri else ""
    if scheme in ("s3", "s3a", "s3n"):
        return S3Store()
    if scheme not in ("", "file") and not local_files.is_local(target_uri):
        raise ValueError(f"{target_uri}: no restore for scheme {scheme!r} (s3:// or a local path)")
    return LocalStore()


class LocalStore:
    """A local directory tree (``file:`` URIs or plain paths)."""

    @staticmethod
    def _path(uri: str) -> Path:
        return Path(local_files.local_path(uri) if local_files.is_local(uri) else uri)

    def size(self, uri: str) -> int | None:
        path = self._path(uri)
        return path.stat().st_size if path.is_file() else None

    def list_files(self, uri: str) -> list[tuple[str, int]]:
        path = self._path(uri)
        if not path.is_dir():
            return []
        return [
            (f"{uri.rstrip('/')}/{child.name}", child.stat().st_size)
            for child in sorted(path.iterdir())
            if child.is_file() and not _is_crc(child.name)
        ]

    def list_dirs(self, uri: str) -> list[str]:
        path = self._path(uri)
        if not path.is_dir():
            return []
        return [f"{uri.rstrip('/')}/{c.name}" for c in sorted(path.iterdir()) if c.is_dir()]

    def rename_file(self, source: str, destination: str) -> None:
        src, dst = self._path(source), self._path(destination)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
        crc = src.with_name(_CRC.format(src.name))
        if crc.exists():
            os.replace(crc, dst.with_name(_CRC.format(dst.name)))

    def copy_file(self, source: str, destination: str) -> None:
        src, dst = self._path(source), self._path(destination)
        dst.parent.mkdir(parents=True, exist_ok=True)
        partial = dst.with_name(f".{dst.name}.copying")
        shutil.copyfile(src, partial)
        os.replace(partial, dst)  # whole or absent, as an S3 COPY
        crc = src.with_name(_CRC.format(src.name))
        if crc.exists():
            shutil.copyfile(crc, dst.with_name(_CRC.format(dst.name)))

    def delete_file(self, uri: str) -> None:
        path = self._path(uri)
        path.unlink(missing_ok=True)
        path.with_name(_CRC.format(path.name)).unlink(missing_ok=True)

    def delete_dir_if_empty(self, uri: str) -> None:
        path = self._path(uri)
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()

    def delete_tree(self, uri: str) -> None:
        shutil.rmtree(self._path(uri), ignore_errors=True)

    def write_bytes(self, uri: str, data: bytes) -> None:
        path = self._path(uri)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.writing")
        partial.write_bytes(data)
        # Hadoop checks a file against its checksum when it has one: a stale one fails the read.
        path.with_name(_CRC.format(path.name)).unlink(missing_ok=True)
        os.replace(partial, path)

    def read_bytes(self, uri: str) -> bytes | None:
        path = self._path(uri)
        return path.read_bytes() if path.is_file() else None


class S3Store:
    """S3 objects through boto3 (the endpoint and region of ``glue_incremental.aws``)."""

    def __init__(self, client: Any = None) -> None:
        if client is None:
            from glue_incremental import aws

            client = aws.client("s3")
        self._s3 = client

    @staticmethod
    def _split(uri: str) -> tuple[str, str]:
        bucket, _, key = uri.split("://", 1)[1].partition("/")
        return bucket, key

    def size(self, uri: str) -> int | None:
        bucket, key = self._split(uri)
        listed = self._s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
        for item in listed.get("Contents", []):
            if item["Key"] == key:
                return int(item["Size"])
        return None

    def _listing(self, uri: str) -> tuple[list[tuple[str, int]], list[str]]:
        bucket, key = self._split(uri)
        prefix = key.rstrip("/") + "/"
        scheme = uri.split("://", 1)[0]
        files: list[tuple[str, int]] = []
        dirs: list[str] = []
        for page in self._s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix, Delimiter="/"
        ):
            for item in page.get("Contents", []):
                if item["Key"] != prefix:  # a directory marker
                    files.append((f"{scheme}://{bucket}/{item['Key']}", int(item["Size"])))
            for common in page.get("CommonPrefixes", []):
                dirs.append(f"{scheme}://{bucket}/{common['Prefix'].rstrip('/')}")
        return files, dirs

    def list_files(self, uri: str) -> list[tuple[str, int]]:
        return self._listing(uri)[0]

    def list_dirs(self, uri: str) -> list[str]:
        return self._listing(uri)[1]

    def copy_file(self, source: str, destination: str) -> None:
        bucket, key = self._split(source)
        to_bucket, to_key = self._split(destination)
        self._s3.copy_object(
            Bucket=to_bucket, Key=to_key, CopySource={"Bucket": bucket, "Key": key}
        )

    def rename_file(self, source: str, destination: str) -> None:
        self.copy_file(source, destination)
        self.delete_file(source)

    def delete_file(self, uri: str) -> None:
        bucket, key = self._split(uri)
        self._s3.delete_object(Bucket=bucket, Key=key)

    def delete_dir_if_empty(self, uri: str) -> None:
        files, dirs = self._listing(uri)
        if not files and not dirs:
            bucket, key = self._split(uri)
            self._s3.delete_object(Bucket=bucket, Key=key.rstrip("/") + "/")

    def delete_tree(self, uri: str) -> None:
        bucket, key = self._split(uri)
        prefix = key.rstrip("/") + "/"
        for page in self._s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix
        ):
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                self._s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})

    def write_bytes(self, uri: str, data: bytes) -> None:
        bucket, key = self._split(uri)
        self._s3.put_object(Bucket=bucket, Key=key, Body=data)

    def read_bytes(self, uri: str) -> bytes | None:
        bucket, key = self._split(uri)
        try:
            return bytes(self._s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        except self._s3.exceptions.NoSuchKey:
            return None


def _is_crc(name: str) -> bool:
    return name.startswith(".") and name.endswith(".crc")
