"""A ``file:`` source is listed in Python: it must see exactly what Hadoop's local file system
sees (the bookmark keeps URIs and times, so a difference would re-read or skip files)."""

from __future__ import annotations

import os

import pytest
from glue_incremental.sources import listing

pytestmark = pytest.mark.spark

NAMES = [
    "date=2024-01-01/a b.json",
    "date=2024%3A01/x.json",
    "k=ü/é.json",
    "part:colon.json",
    "nested/k=v/f.json",
    "_hidden/x.json",
    ".dot.json",
    "empty/",
]


def both_listings(spark, root):
    """(local, Hadoop) entries of every directory under ``root``, as comparable tuples."""
    jvm = spark._jvm
    root_path = jvm.org.apache.hadoop.fs.Path(root.as_uri())
    fs = root_path.getFileSystem(spark._jsc.hadoopConfiguration())
    local, hadoop = set(), set()
    for directory, _, _ in os.walk(root):
        path = fs.makeQualified(jvm.org.apache.hadoop.fs.Path(f"file://{directory}"))
        uri = path.toString()
        for entries, into in (
            (listing._local_children(listing._Directory(uri, 0, (), directory)), local),
            (listing._hadoop_children(fs, listing._Directory(uri, 0, (), path)), hadoop),
        ):
            into.update(
                (e.uri, e.name, e.modified_ms, e.is_directory, 0 if e.is_directory else e.size)
                for e in entries
            )
    return local, hadoop


def test_the_python_listing_of_a_local_source_equals_hadoops(spark, tmp_path):
    for index, name in enumerate(NAMES):
        path = tmp_path / "source" / name
        if name.endswith("/"):
            path.mkdir(parents=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n" * (index + 1))
        os.utime(path, ns=(1_700_000_000_123_456_789 + index, 1_700_000_000_123_456_789 + index))

    local, hadoop = both_listings(spark, tmp_path / "source")

    assert len(local) == 14  # 7 files, 7 directories (hidden ones too: hiding is not its job)
    assert local == hadoop
