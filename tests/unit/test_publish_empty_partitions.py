"""A publish removes the partition directories it leaves empty, and their parents left empty,
without listing a parent once per partition (plain files: the tools' ``LocalStore``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from glue_incremental.io.local_files import local_path
from glue_incremental.targets.parquet import publish
from glue_incremental_tools.output_files import LocalStore


class CountingStore(LocalStore):
    """``LocalStore``, counting the listings of each directory."""

    def __init__(self) -> None:
        self.listed: Counter[str] = Counter()

    def list_files(self, uri: str) -> list[tuple[str, int]]:
        self.listed[uri.rstrip("/")] += 1
        return super().list_files(uri)

    def list_dirs(self, uri: str) -> list[str]:
        self.listed[uri.rstrip("/")] += 1
        return super().list_dirs(uri)


def _file(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_partition_left_empty_goes_with_its_parent_left_empty_and_a_shared_parent_stays(
    tmp_path: Path,
) -> None:
    target = tmp_path / "target"
    for relative in ("a=1/b=1", "a=1/b=2", "a=2/b=1"):
        _file(target / relative / "part-0.parquet")
    store = CountingStore()

    publish.publish(store, f"file:{target}", "run-1", ["a=1/b=1", "a=2/b=1"])

    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*.parquet")) == [
        "a=1/b=2/part-0.parquet"
    ]
    assert (target / "a=1").is_dir()
    assert not (target / "a=1" / "b=1").exists()
    assert not (target / "a=2").exists()


def test_a_publish_of_many_partitions_never_lists_their_parent(tmp_path: Path) -> None:
    target = tmp_path / "target"
    partitions = [f"_delivery/day={day:03d}" for day in range(200)]
    run_data = Path(local_path(publish.stage_data_uri(f"file:{target}", "run-1")))
    for relative in partitions:
        _file(target / relative / "part-old.parquet", "old")
        _file(run_data / relative / "part-new.parquet", "new")
    store = CountingStore()

    publish.publish(store, f"file:{target}", "run-1", partitions)

    assert all((target / relative / "part-new.parquet").is_file() for relative in partitions)
    assert not any((target / relative / "part-old.parquet").exists() for relative in partitions)
    assert store.listed[f"file:{target}/_delivery"] == 0
