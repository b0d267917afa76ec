"""Listing S3 by key with boto3: the whole source, from a key on (``StartAfter``), or a few prefixes.

Used by ``sources.discovery`` for ``s3://``/``s3a://`` sources. boto3 rather than
S3A because S3A's ``listFiles`` has no ``StartAfter`` and no request count; boto3
gives both, with the same objects, times (``LastModified``, whole seconds) and
sizes. URIs keep the root's scheme (``s3://bucket/key``), as S3A returns them, so
fingerprints do not change when a source moves from one listing to the other.
Every call counts the requests it sent (``S3Listing.requests``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypedDict

from glue_incremental import aws
from glue_incremental.partitions.paths import is_hidden, parse_name
from glue_incremental.sources.listing import SourceFile, SourceNotFound

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})

__all__ = ["S3_SCHEMES", "S3Listing", "S3Root", "is_s3_uri"]


def is_s3_uri(uri: str) -> bool:
    return uri.partition("://")[0].lower() in S3_SCHEMES


@dataclass(frozen=True)
class S3Root:
    """A source root on S3: ``scheme://bucket/prefix`` (the prefix ends with ``/`` or is empty)."""

    scheme: str
    bucket: str
    prefix: str

    @classmethod
    def parse(cls, uri: str) -> S3Root:
        scheme, sep, rest = uri.partition("://")
        bucket, _, key = rest.partition("/")
        if not sep or scheme.lower() not in S3_SCHEMES or not bucket:
            raise ValueError(f"{uri!r} is not an s3://bucket/prefix URI")
        key = key.strip("/")
        return cls(scheme, bucket, f"{key}/" if key else "")

    def uri_of(self, key: str) -> str:
        return f"{self.scheme}://{self.bucket}/{key}"

    def relative(self, key: str) -> str | None:
        """``key`` below the root, or None when it is not under it."""
        return key[len(self.prefix) :] if key.startswith(self.prefix) else None


class ListRequest(TypedDict, total=False):
    Bucket: str
    Prefix: str
    StartAfter: str
    Delimiter: str
    ContinuationToken: str


class ListedObject(TypedDict):
    """The parts of a ``ListObjectsV2`` entry read here."""

    Key: str
    LastModified: datetime
    Size: int


class ListPage(TypedDict, total=False):
    Contents: list[ListedObject]
    IsTruncated: bool
    NextContinuationToken: str


class ObjectLister(Protocol):
    """The S3 call a listing makes (a boto3 ``s3`` client)."""

    def list_objects_v2(self, **request: str) -> ListPage: ...


@dataclass
class S3Listing:
    """Lists one root; ``requests`` counts the ListObjectsV2 pages sent (retries excluded)."""

    root: S3Root
    client: ObjectLister | None = None  # None: the default client
    requests: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.client is None:
            self.client = aws.client("s3")

    def everything(self) -> list[SourceFile]:
        """Every visible file under the root; ``SourceNotFound`` when there is none."""
        files = list(self._pages(self.root.prefix))
        if not files:
            raise SourceNotFound(self.root.uri_of(self.root.prefix))
        return files

    def from_key(self, relative_start: str) -> list[SourceFile]:
        """Files whose key (below the root) sorts after ``relative_start`` (``StartAfter``)."""
        return list(self._pages(self.root.prefix, start_after=self.root.prefix + relative_start))

    def under(self, relative_directories: Iterable[str]) -> list[SourceFile]:
        """Files under each of ``relative_directories`` (``""``: the root's own files only)."""
        files: list[SourceFile] = []
        for directory in sorted({d.strip("/") for d in relative_directories}):
            if directory:
                files.extend(self._pages(self.root.prefix + directory + "/"))
            else:  # the root itself: its own files only, not the whole source below it
                files.extend(self._pages(self.root.prefix, delimiter="/"))
        return files

    def _pages(
        self, prefix: str, start_after: str | None = None, delimiter: str | None = None
    ) -> Iterator[SourceFile]:
        request: ListRequest = {"Bucket": self.root.bucket, "Prefix": prefix}
        if start_after:
            request["StartAfter"] = start_after
        if delimiter:
            request["Delimiter"] = delimiter
        client = self.client
        assert client is not None  # __post_init__ sets it
        while True:
            self.requests += 1
            page = client.list_objects_v2(**request)
            for item in page.get("Contents", ()):
                source = self._source_file(item)
                if source is not None:
                    yield source
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            request["ContinuationToken"] = token

    def _source_file(self, item: ListedObject) -> SourceFile | None:
        key = item["Key"]
        relative = self.root.relative(key)
        if not relative or key.endswith("/"):
            return None  # the root itself, or a "directory" marker object
        parts = relative.split("/")
        if any(is_hidden(part) for part in parts):
            return None
        partition = tuple(pair for part in parts[:-1] for pair in parse_name(part))
        modified_ms = int(item["LastModified"].timestamp() * 1000)
        return SourceFile(self.root.uri_of(key), modified_ms, int(item["Size"]), partition)


def relative_key(root: S3Root, uri: str) -> str:
    """The key of a file URI below the root (what ``StartAfter`` compares)."""
    key = uri.split("://", 1)[1].split("/", 1)[1]
    return root.relative(key) or ""


def relative_directory(root: S3Root, uri: str) -> str:
    """The directory of a file URI below the root (``dt=2024-01-01/hour=03``; ``""`` at the root)."""
    key = uri.split("://", 1)[1].split("/", 1)[1]
    relative = root.relative(key) or ""
    return relative.rsplit("/", 1)[0] if "/" in relative else ""
