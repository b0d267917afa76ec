"""A file-sourced load job in the test world: JSON files landed at chosen times into a
``part``-partitioned Parquet target, runs at increasing clock times, and the check
that the target equals the pure-Python full refresh."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from glue_incremental.deletes.markers import DeleteMarker
from glue_incremental.keys import index as key_index
from glue_incremental.load.job import LoadConfig
from pyspark.testing import assertDataFrameEqual

from tests.harness import reference
from tests.harness.faults import Crash, CrashAtStep
from tests.harness.loads import (
    FixedClock,
    json_files_config,
    read_parquet,
    run_load_at,
    write_json_file,
)

COLUMNS = ["id", "part", "updated", "value"]


def config_for(tmp: Path, **overrides) -> LoadConfig:
    return json_files_config(tmp, **{"partition_by": ("part",), **overrides})


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


T0 = 1_700_000_000.0
# A delete marker (CDC's op = 'D') and snapshot options the delete and reconcile tests share.
OP_D = DeleteMarker("op", ("D",))
SNAPSHOTS = {"file_snapshots": True, "reconcile_max_fraction": 1.0}


def target_rows(job: Job, columns: list[str] = COLUMNS) -> list[tuple]:
    """What a reader of the job's target sees, as sorted tuples; a key seen twice fails."""
    seen = reference.visible_rows(job.target, columns)
    keys = [r["id"] for r in seen]
    assert len(keys) == len(set(keys)), f"a key is there twice: {sorted(keys)}"
    return reference.as_tuples(seen, columns)


class Job:
    """One file-sourced job with a default (detect) config, run at increasing times."""

    def __init__(self, spark, tmp: Path, store, job_name: str = "orders", **overrides) -> None:
        self.spark, self.tmp, self.store, self.job_name = spark, tmp, store, job_name
        self.config = config_for(tmp, **overrides)
        self.clock = FixedClock(T0)
        self.runs = 0

    @property
    def target(self) -> Path:
        return self.tmp / "target"

    def land(self, rows, name: str | None = None) -> None:
        self.clock.now += 10
        write_json_file(self.tmp / "source", rows, mtime=self.clock.now, name=name)

    def run(self, hook=None, **config_overrides) -> dict:
        self.clock.now += 60
        self.runs += 1
        config = config_for(self.tmp, **config_overrides) if config_overrides else self.config
        return run_load_at(
            self.spark,
            config,
            job_name=self.job_name,
            run_id=f"jr_{self.runs}",
            clock=self.clock,
            store=self.store,
            hook=hook,
        )

    def corrupt(self, partition: str) -> None:
        """Make the rows of a partition unreadable: a run that reads them fails. Footers (the
        schema) stay readable: the schema check may read any one footer of the target."""
        for path in (self.target / partition).glob("*.parquet"):
            data = path.read_bytes()
            footer_start = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
            path.write_bytes(data[:4] + b"\xff" * (footer_start - 4) + data[footer_start:])
            path.with_name(f".{path.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum

    def segments(self) -> list[int]:
        """Generations of the live index segments."""
        names = (p.name for p in (self.target / key_index.INDEX_DIR).glob("generation=*"))
        return sorted(int(name.split("=")[1].split("-")[0]) for name in names)

    def crash_at_publish_step_then_rerun(
        self, step: int, *, baseline: Path, rewound_to: str, rows: list[dict]
    ) -> None:
        """From the target ``baseline`` and the state after ``rewound_to``: a run crashing at
        its ``step``-th publish step, then ``rows`` landed and a rerun equal to a full refresh."""
        shutil.rmtree(self.target)
        shutil.copytree(baseline, self.target)
        self.store.rewind(self.job_name, rewound_to, why="next crash point")
        (self.tmp / "source" / "next.json").unlink(missing_ok=True)
        with pytest.raises(Crash):
            self.run(hook=CrashAtStep(step, prefix="publish."))
        self.land(rows, name="next.json")
        self.run()
        self.assert_equals_full_refresh()

    def assert_equals_full_refresh(self) -> None:
        latest = reference.latest_per_key(
            reference.source_rows(self.tmp / "source"), ("id",), "updated"
        )
        expected = self.spark.createDataFrame(
            [tuple(r[c] for c in COLUMNS) for r in latest],
            "id long, part string, updated long, value string",
        )
        seen = read_parquet(self.spark, self.config.target_path, COLUMNS)
        assert seen.count() == seen.select("id").distinct().count(), "a key is there twice"
        assertDataFrameEqual(seen, expected)
