"""The operator's object stores (``output_files``) run the publish and the restore as the
job's Hadoop file system does: on LocalStack's S3 through boto3 and on the local disk.

Three retained publishes of tiny files, then a restore to the first: every partition holds
exactly the files it held then, the later records are gone, and the restore run again
changes nothing.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from glue_incremental.targets.parquet import publish, restore
from glue_incremental_tools.output_files import LocalStore, S3Store, open_store

WEEK = timedelta(days=7)


@pytest.fixture(params=["local", "s3"])
def target(request, tmp_path):
    if request.param == "local":
        return (tmp_path / "target").as_uri()
    bucket = request.getfixturevalue("s3_bucket")
    return f"s3://{bucket}/target"


def put(fs, target: str, run_id: str, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        fs.write_bytes(publish.join(publish.stage_data_uri(target, run_id), path), data)


def live(fs, target: str, partitions: list[str]) -> dict[str, int]:
    return {entry.path: entry.size for entry in publish.live_files(fs, target, partitions)}


def test_a_restore_through_the_operators_store_brings_back_the_first_publish(target):
    fs = open_store(target)
    assert isinstance(fs, S3Store if target.startswith("s3://") else LocalStore)
    put(fs, target, "jr_1", {"p=a/one.parquet": b"1", "p=b/two.parquet": b"22"})
    publish.publish(fs, target, "jr_1", ["p=a", "p=b"], retain=WEEK)
    put(fs, target, "jr_2", {"p=a/three.parquet": b"333", "p=c/bad.parquet": b"4444"})
    publish.publish(fs, target, "jr_2", ["p=a", "p=c"], retain=WEEK)
    put(fs, target, "jr_3", {"p=b/bad.parquet": b"55555"})
    publish.publish(fs, target, "jr_3", ["p=b"], retain=WEEK)
    assert publish.retained_seqs(fs, target) == [1, 2, 3]

    done = restore.restore(fs, target, 1, run_id="rewind-1")

    assert restore.restored_partitions(done) == ["p=a", "p=b", "p=c"]
    assert live(fs, target, ["p=a", "p=b", "p=c"]) == {"p=a/one.parquet": 1, "p=b/two.parquet": 2}
    assert publish.retained_seqs(fs, target) == [1]
    assert fs.list_dirs(publish.staging_root(target)) == []
    restore.restore(fs, target, 1, run_id="rewind-2")
    assert live(fs, target, ["p=a", "p=b", "p=c"]) == {"p=a/one.parquet": 1, "p=b/two.parquet": 2}


def test_a_restore_past_a_pruned_publish_refuses_and_changes_nothing(target):
    fs = open_store(target)
    for number in (1, 2, 3):
        put(fs, target, f"jr_{number}", {f"p=a/f{number}.parquet": b"x" * number})
        publish.publish(fs, target, f"jr_{number}", ["p=a"], retain=WEEK)
    publish.prune(fs, target, older_than_ms=2**62)  # everything but the latest

    with pytest.raises(restore.OutputNotRetained, match=r"publish 2 .* reset"):
        restore.restore(fs, target, 1, run_id="rewind-1")
    assert live(fs, target, ["p=a"]) == {"p=a/f3.parquet": 3}
