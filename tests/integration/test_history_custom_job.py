"""``job.write(..., history=...)``: a custom script that shapes its rows first keeps every
version of them, under the load's rules, compared with the independent reference
(``tests/harness/history_reference.py``) built from every row the script ever wrote."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from glue_incremental.custom import (
    Dataset,
    DeclarationError,
    History,
    Output,
    incremental_job,
)
from pyspark.sql import functions as F

from tests.harness.history_reference import Made, history

pytestmark = pytest.mark.spark

COUNTS = ("versions_opened", "versions_closed")
DELIVERY_COLUMNS = ("file_modified", "file_name")


class Customers:
    """Raw customer rows in ``day=`` directories; the script upper-cases the segment and
    drops the raw ``source_system`` column before writing the versions."""

    def __init__(
        self,
        tmp: Path,
        declared: History | None = None,
        catalog_table: str | None = None,
        delivered: bool = False,
    ) -> None:
        self.delivered = delivered
        self.source, self.target = tmp / "source", tmp / "dim"
        self.catalog_table = catalog_table
        self.job = f"dim-{uuid.uuid4().hex[:8]}"
        self.declared = declared or History(columns=("segment",))
        self.landed: list[dict[str, Any]] = []
        self.files = 0

    def land(self, day: str, rows: list[tuple[int, int, str]], age: float = 60.0) -> None:
        directory = self.source / f"day={day}"
        directory.mkdir(parents=True, exist_ok=True)
        self.files += 1
        path = directory / f"part-{self.files:04d}.json"
        raw = [{"id": i, "updated": u, "segment": s, "source_system": "crm"} for i, u, s in rows]
        path.write_text("".join(json.dumps(one) + "\n" for one in raw))
        mtime = time.time() - age
        os.utime(path, (mtime, mtime))
        self.landed.extend(raw)

    def main(self, argv: list[str], spark: Any) -> dict[str, Any]:
        with incremental_job(
            argv,
            sources={"customers": Dataset(self.source.as_uri(), ("day",), "json")},
            targets={
                "dim": Output(
                    "parquet", path=self.target.as_uri(), catalog_table=self.catalog_table
                )
            },
            spark=spark,
        ) as job:
            rows = job.increment("customers")
            if rows is not None:
                shaped = rows.select("id", "updated", F.upper("segment").alias("segment"))
                delivery: tuple[str, ...] = ()
                if self.delivered:  # each row's file order, the documented way
                    shaped = rows.select(
                        "id",
                        "updated",
                        F.upper("segment").alias("segment"),
                        F.col("_metadata.file_modification_time").alias("file_modified"),
                        F.col("_metadata.file_name").alias("file_name"),
                    )
                    delivery = DELIVERY_COLUMNS
                job.write(
                    "dim",
                    shaped,
                    keys=["id"],
                    order_by="updated",
                    delivery=delivery,
                    history=self.declared,
                )
        return job.summary

    def run(self, spark: Any, run_id: str, *extra: str) -> dict[str, Any]:
        return self.main(["x.py", "--JOB_NAME", self.job, "--JOB_RUN_ID", run_id, *extra], spark)

    def versions(self, spark: Any) -> list[dict[str, Any]]:
        found = [r.asDict() for r in spark.read.parquet(self.target.as_uri()).collect()]
        return sorted(found, key=lambda one: (one["id"], one["valid_from"]))

    def expected(self) -> list[dict[str, Any]]:
        shaped = [
            Made({"id": r["id"], "updated": r["updated"], "segment": r["segment"].upper()})
            for r in self.landed
        ]
        return history(shaped, ["id"], "updated", self.declared.columns)


def test_a_script_writing_history_equals_the_reference_and_its_dry_run_the_next_run(
    spark, store, tmp_path
):
    dim = Customers(tmp_path)
    dim.land("2024-01-01", [(1, 10, "retail"), (2, 10, "smb")])
    first = dim.run(spark, "jr_1")
    assert dim.versions(spark) == dim.expected()
    assert [first[name] for name in COUNTS] == [2, 0]

    dim.land("2024-01-02", [(1, 20, "enterprise"), (2, 5, "startup"), (2, 30, "SMB")], age=30)
    files = sorted((p, p.stat().st_mtime_ns) for p in dim.target.rglob("*") if p.is_file())
    dry = dim.run(spark, "jr_dry", "--dry_run", "true")
    assert sorted((p, p.stat().st_mtime_ns) for p in dim.target.rglob("*") if p.is_file()) == files
    second = dim.run(spark, "jr_2")

    # A late version (key 2 at 5) slots in; "SMB" equals "smb" upper-cased: no new version.
    assert dim.versions(spark) == dim.expected()
    assert [dry[name] for name in COUNTS] == [second[name] for name in COUNTS]
    assert second["versions_opened"] == 2
    assert store.get_watermark(dim.job, "customers") is not None


def test_a_tracked_column_the_shaped_rows_lack_is_refused_in_one_line(spark, store, tmp_path):
    dim = Customers(tmp_path, History(columns=("tier",)))
    dim.land("2024-01-01", [(1, 10, "retail")])

    with pytest.raises(DeclarationError) as refused:
        dim.run(spark, "jr_1")

    assert str(refused.value) == (
        "write('dim', history=...): tracked column 'tier' is not a source column "
        "(columns: id, segment, updated); nothing was written"
    )
    assert not dim.target.exists()
    assert store.get_watermark(dim.job, "customers") is None


def test_a_scripts_history_output_gets_its_columns_and_the_added_ones_in_its_catalog_table(
    spark, store, tmp_path, monkeypatch
):
    from glue_incremental.targets.parquet import catalog_schema

    synced: list[list[str]] = []
    monkeypatch.setattr(
        catalog_schema,
        "sync",
        lambda table, schema: synced.append([table, *schema.fieldNames()]) or [],
    )
    dim = Customers(tmp_path, catalog_table="gi_dev.dim")
    dim.land("2024-01-01", [(1, 10, "retail")])

    dim.run(spark, "jr_1")

    assert synced == [
        ["gi_dev.dim", "id", "updated", "segment", "valid_from", "valid_to", "is_current"]
    ]


def test_a_correction_in_a_later_file_at_the_same_watermark_wins_as_in_the_load(
    spark, store, tmp_path
):
    # docs/history.md, rule 1: at one watermark the later delivery wins. The load passes its
    # file order; a script passes it with delivery= (docs/custom-jobs.md), as this one does.
    dim = Customers(tmp_path, delivered=True)
    dim.land("2024-01-01", [(1, 10, "smb")], age=120)
    dim.run(spark, "jr_1")
    dim.land("2024-01-02", [(1, 10, "retail")], age=30)  # the correction, same updated

    dim.run(spark, "jr_2")

    assert [v["segment"] for v in dim.versions(spark)] == ["RETAIL"]


def test_a_script_tracking_other_columns_than_its_versions_were_built_with_is_refused(
    spark, store, tmp_path
):
    # The current version absorbed a segment change while only the id was tracked: under
    # columns=("segment",) its stored history is not one a run writes. Nothing is written.
    dim = Customers(tmp_path, History(columns=("id",)))
    dim.land("2024-01-01", [(1, 10, "retail")])
    dim.run(spark, "jr_1")
    dim.land("2024-01-02", [(1, 20, "smb")])
    dim.run(spark, "jr_2")
    dim.declared = History(columns=("segment",))
    dim.land("2024-01-03", [(1, 30, "enterprise")])
    files = sorted((p, p.stat().st_mtime_ns) for p in dim.target.rglob("*") if p.is_file())
    committed = store.get_watermark(dim.job, "customers")

    with pytest.raises(Exception, match="do not follow from its stored deliveries"):
        dim.run(spark, "jr_3")

    assert sorted((p, p.stat().st_mtime_ns) for p in dim.target.rglob("*") if p.is_file()) == files
    assert store.get_watermark(dim.job, "customers") == committed
