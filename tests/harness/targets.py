"""Writer targets on a local disk or in LocalStack's S3: where tests put them, save and read them.

The same test drives either: ``LocalTarget`` (a directory under ``tmp_path``) or
``S3Target`` (a prefix in LocalStack's S3, written by Spark through S3A, saved,
restored and read back with boto3, so the check never goes through the code under test).
"""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

import pyarrow.parquet as pq
from glue_incremental import aws

from tests.harness.reference import hidden, visible_rows
from tests.harness.s3 import keys_under, split_uri


class Target(Protocol):
    uri: str

    def rows(self, columns: Sequence[str]) -> list[dict[str, Any]]: ...
    def data_files(self) -> list[str]: ...
    def exists(self) -> bool: ...
    def save(self, name: str) -> None: ...
    def restore(self, name: str) -> None: ...


class LocalTarget:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.uri = path.as_uri()

    def rows(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        return visible_rows(self.path, columns)

    def data_files(self) -> list[str]:
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*.parquet"))

    def exists(self) -> bool:
        return self.path.exists()

    def save(self, name: str) -> None:
        saved = self.path.with_name(f"{self.path.name}.{name}")
        shutil.rmtree(saved, ignore_errors=True)
        shutil.copytree(self.path, saved)

    def restore(self, name: str) -> None:
        shutil.rmtree(self.path)
        shutil.copytree(self.path.with_name(f"{self.path.name}.{name}"), self.path)


def _hidden(parts: Sequence[str]) -> bool:
    return any(hidden(part) for part in parts)


class S3Target:
    def __init__(self, uri: str) -> None:
        self.uri = uri.rstrip("/")
        self.bucket, self.prefix = split_uri(self.uri + "/")

    def _relative(self, prefix: str) -> list[tuple[str, str]]:
        """(key, key relative to ``prefix``) of every object under ``prefix`` but directory markers."""
        found = keys_under(f"s3://{self.bucket}/{prefix}")
        return [(key, key[len(prefix) :]) for key in found if not key.endswith("/")]

    def rows(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        """What a reader listing the prefix sees now (as ``reference.visible_rows`` on a disk)."""
        s3 = aws.client("s3")
        rows = []
        for key, relative in self._relative(self.prefix):
            parts = relative.split("/")
            if not relative.endswith(".parquet") or _hidden(parts):
                continue
            partition = {
                unquote(name): unquote(value)
                for name, value in (p.split("=", 1) for p in parts[:-1])
            }
            try:
                body = s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            except s3.exceptions.NoSuchKey:
                continue
            for record in pq.read_table(io.BytesIO(body), partitioning=None).to_pylist():
                record.update(partition)
                rows.append({name: record.get(name) for name in columns})
        return rows

    def data_files(self) -> list[str]:
        return [rel for _, rel in self._relative(self.prefix) if rel.endswith(".parquet")]

    def exists(self) -> bool:
        return bool(self._relative(self.prefix))

    def _copy(self, source_prefix: str, destination_prefix: str) -> None:
        s3 = aws.client("s3")
        for key, relative in self._relative(source_prefix):
            s3.copy_object(
                Bucket=self.bucket,
                Key=destination_prefix + relative,
                CopySource={"Bucket": self.bucket, "Key": key},
            )

    def _delete(self, prefix: str) -> None:
        s3 = aws.client("s3")
        keys = keys_under(f"s3://{self.bucket}/{prefix}")
        for start in range(0, len(keys), 1000):
            chunk = [{"Key": key} for key in keys[start : start + 1000]]
            s3.delete_objects(Bucket=self.bucket, Delete={"Objects": chunk})

    def _saved(self, name: str) -> str:
        return f"{self.prefix.rstrip('/')}.{name}/"

    def save(self, name: str) -> None:
        self._delete(self._saved(name))
        self._copy(self.prefix, self._saved(name))

    def restore(self, name: str) -> None:
        self._delete(self.prefix)
        self._copy(self._saved(name), self.prefix)


PARTITION_TYPE_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"


@contextlib.contextmanager
def partition_values_as_strings(spark: Any) -> Iterator[None]:
    """Spark reads partition values as the strings in the paths (the join writes strings)."""
    before = spark.conf.get(PARTITION_TYPE_INFERENCE)
    spark.conf.set(PARTITION_TYPE_INFERENCE, "false")
    try:
        yield
    finally:
        spark.conf.set(PARTITION_TYPE_INFERENCE, before)
