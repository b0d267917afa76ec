"""A transform's filter is a delete: the target is the function applied to each key's latest
version, so a key whose newest version the function drops leaves the target, on Parquet and on
Iceberg (``docs/transforms.md``, "A filter"). The reference is pure Python: the latest version
per key over every delivery, then the function's row-wise twin."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from glue_incremental.deletes.markers import DeleteMarker
from glue_incremental.transforms.function import TransformSpec
from glue_incremental.watermarks import Watermarks, create_table

from tests.harness import reference, user_transforms
from tests.harness.file_jobs import T0
from tests.harness.iceberg import requires_iceberg, table_rows, unique_table
from tests.harness.jdbc_tables import jdbc_config, orders_table, upsert
from tests.harness.loads import FixedClock, json_files_config, run_load_at, write_json_file

pytestmark = pytest.mark.spark

FILTER = TransformSpec("tests.harness.user_transforms", "drops_test_accounts")
COLUMNS = ["account_id", "email", "spend", "updated"]


def account(key: int, email: str, updated: int, spend: float = 1.5) -> dict:
    return {"account_id": key, "email": email, "spend": spend, "updated": updated}


A = [account(9, "user9@shop.example", 1), account(3, "user3@shop.example", 1)]
B = [account(9, "qa9@example.test", 2)]  # account 9's newest version is a test account's


class Accounts:
    """JSON files of accounts under ``tmp/source`` loaded with the filter, one run at a time."""

    def __init__(self, spark, tmp: Path, store, **overrides) -> None:
        self.spark, self.tmp, self.store = spark, tmp, store
        self.config = json_files_config(
            tmp, primary_key=("account_id",), transform=FILTER, **overrides
        )
        self.clock = FixedClock(T0)
        self.delivered: list[tuple[tuple[int, str], dict]] = []
        self.runs = 0

    def land(self, rows: list[dict], *, late: bool = False) -> None:
        self.clock.now += 10
        path = write_json_file(
            self.tmp / "source", rows, mtime=self.clock.now - (200 if late else 0)
        )
        self.delivered += [((path.stat().st_mtime_ns, path.name), r) for r in rows]

    def run(self) -> dict:
        self.clock.now += 60
        self.runs += 1
        return run_load_at(
            self.spark,
            self.config,
            job_name="accounts",
            run_id=f"jr_{self.runs}",
            clock=self.clock,
            store=self.store,
        )

    def expected(self, columns=COLUMNS) -> list[tuple]:
        """The filter applied to each key's latest version over every delivery."""
        latest = reference.latest_per_key(self.delivered, ("account_id",), "updated")
        kept = [r for r in latest if not user_transforms.is_test_account(r)]
        return reference.as_tuples(kept, columns)

    def stored(self, columns=COLUMNS) -> list[tuple]:
        return reference.as_tuples(reference.visible_rows(self.tmp / "target", columns), columns)


@pytest.mark.parametrize("runs", ["one run", "a run per file"])
def test_a_key_whose_newest_version_is_filtered_out_leaves_the_target(spark, tmp_path, store, runs):
    job = Accounts(spark, tmp_path, store)
    job.land(A)
    if runs == "a run per file":
        job.run()
        assert [r[0] for r in job.stored()] == [3, 9]
    job.land(B)

    summary = job.run()

    assert job.stored() == job.expected() == [(3, "user3@shop.example", 1.5, 1)]
    assert summary["records_deleted"] == (1 if runs == "a run per file" else 0)


def test_a_late_older_version_of_a_filtered_key_stays_out_and_a_newer_one_brings_it_back(
    spark, tmp_path, store
):
    job = Accounts(spark, tmp_path, store)
    job.land(B)
    job.run()  # account 9 was only ever a test account: nothing stored, its tombstone kept
    assert job.stored() == []
    job.land([account(3, "user3@shop.example", 1)])
    job.run()  # filters nothing: the tombstone still ranks
    job.land(A[:1], late=True)
    job.run()
    assert job.stored() == job.expected() == [(3, "user3@shop.example", 1.5, 1)]

    job.land([account(9, "user9@shop.example", 3, spend=7.0)])
    job.run()
    assert job.stored() == job.expected()
    assert [r[:2] for r in job.stored()] == [(3, "user3@shop.example"), (9, "user9@shop.example")]


def test_a_filter_of_an_older_version_only_changes_nothing(spark, tmp_path, store):
    job = Accounts(spark, tmp_path, store)
    job.land([account(9, "qa9@example.test", 1), account(9, "user9@shop.example", 2)])

    summary = job.run()

    assert job.stored() == job.expected() == [(9, "user9@shop.example", 1.5, 2)]
    assert summary["records_deleted"] == 0
    assert not (tmp_path / "target" / "_tombstones").exists()  # no filter won: as a map


def test_a_filtered_key_leaves_the_target_beside_a_kept_delete_marker(spark, tmp_path, store):
    marker = DeleteMarker("op", ("D",))
    job = Accounts(spark, tmp_path, store, delete_marker=marker, keep_delete_marker=True)
    job.land([{**r, "op": "U"} for r in A])
    job.run()
    job.land([{**B[0], "op": "U"}, {**account(3, "user3@shop.example", 2), "op": "D"}])

    summary = job.run()

    assert job.stored() == []  # 9 filtered (its marker says U), 3 deleted by its marker
    assert summary["records_deleted"] == 2


@requires_iceberg
@pytest.mark.parametrize("runs", ["one run", "a run per file"])
def test_a_key_whose_newest_version_is_filtered_out_leaves_the_iceberg_table(
    spark, tmp_path, aws, runs
):
    create_table()
    table = unique_table("filters")
    job = Accounts(
        spark, tmp_path, Watermarks(), target_format="iceberg", target_table=table, target_path=""
    )
    job.land(A)
    if runs == "a run per file":
        job.run()
    job.land(B)

    summary = job.run()

    name = job.config.iceberg_target.name
    assert table_rows(spark, name, COLUMNS) == job.expected() == [(3, "user3@shop.example", 1.5, 1)]
    assert summary["records_deleted"] == (1 if runs == "a run per file" else 0)
    assert "__glue_incremental_filtered" not in spark.table(name).columns


def test_bounded_batches_delete_a_key_filtered_in_a_later_batch_of_the_run(spark, tmp_path, store):
    job = Accounts(spark, tmp_path, store, max_batch_files=1)
    job.land(A)
    job.land(B)

    summary = job.run()

    assert job.stored() == job.expected() == [(3, "user3@shop.example", 1.5, 1)]
    assert summary["records_deleted"] == 1  # batch 1 stored account 9, batch 2 removed it


@pytest.mark.postgres
def test_a_jdbc_key_filtered_in_the_reread_band_and_moved_leaves_once_and_stays_out(
    spark, postgres, tmp_path, store
):
    t0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    drops = TransformSpec("tests.harness.user_transforms", "drops_marked_rows")
    columns = ["id", "part", "value"]

    def run(number: int) -> dict:
        return run_load_at(
            spark,
            jdbc_config(postgres, table, tmp_path, transform=drops),
            job_name="pg_filter",
            run_id=f"jr_{number}",
            clock=FixedClock((t0 + timedelta(minutes=number)).timestamp()),
            store=store,
        )

    def stored() -> list[tuple]:
        return reference.as_tuples(reference.visible_rows(tmp_path / "target", columns), columns)

    with orders_table(postgres, prefix="filters") as table:
        upsert(postgres, table, [(1, "a", t0, "x"), (2, "a", t0, "y")])
        run(1)
        # Key 1's new version is filtered and moves to another partition; key 2 is re-read.
        upsert(postgres, table, [(1, "b", t0 + timedelta(seconds=1), "drop")])
        deleting = run(2)
        again = run(3)  # re-reads key 1's filtered version: a delete of an absent key

    assert stored() == [(2, "a", "y")]
    assert (deleting["records_deleted"], again["records_deleted"]) == (1, 0)


def iceberg_accounts(spark, tmp_path, store, **overrides) -> Accounts:
    return Accounts(
        spark,
        tmp_path,
        store,
        target_format="iceberg",
        target_table=unique_table("filters"),
        target_path="",
        **overrides,
    )


def stored_rows(job: Accounts, columns=COLUMNS) -> list[tuple]:
    if job.config.target_format == "iceberg":
        return table_rows(job.spark, job.config.iceberg_target.name, columns)
    return job.stored(columns)


@pytest.mark.parametrize("target", ["parquet", pytest.param("iceberg", marks=requires_iceberg)])
def test_a_late_older_filtered_version_leaves_a_newer_stored_row_in_place(
    spark, tmp_path, store, aws, target
):
    job = (
        Accounts(spark, tmp_path, store)
        if target == "parquet"
        else iceberg_accounts(spark, tmp_path, store)
    )
    job.land([account(9, "user9@shop.example", 5)])
    job.run()
    job.land([account(9, "qa9@example.test", 3)], late=True)  # older watermark, older file

    summary = job.run()

    assert stored_rows(job) == job.expected() == [(9, "user9@shop.example", 1.5, 5)]
    assert summary["records_deleted"] == 0


@pytest.mark.parametrize("newer", ["the filtered copy", "the kept copy"])
def test_a_watermark_tie_between_files_is_decided_by_the_later_file_across_the_filter(
    spark, tmp_path, store, newer
):
    job = Accounts(spark, tmp_path, store)
    qa, user = account(9, "qa9@example.test", 1), account(9, "user9@shop.example", 1)
    first, second = (user, qa) if newer == "the filtered copy" else (qa, user)
    job.land([first])
    job.land([second])

    job.run()

    assert job.stored() == job.expected()
    assert len(job.stored()) == (0 if newer == "the filtered copy" else 1)


def test_a_filtered_version_in_an_earlier_batch_outranks_an_older_one_in_a_later_batch(
    spark, tmp_path, store
):
    job = Accounts(spark, tmp_path, store, max_batch_files=1)
    job.land([account(9, "qa9@example.test", 2)])  # first file, newest watermark, filtered
    job.land([account(9, "user9@shop.example", 1), account(3, "user3@shop.example", 1)])

    job.run()

    assert job.stored() == job.expected() == [(3, "user3@shop.example", 1.5, 1)]


REGION_COLUMNS = [*COLUMNS, "region"]


@pytest.mark.parametrize("target", ["parquet", pytest.param("iceberg", marks=requires_iceberg)])
def test_a_key_filtered_in_another_partition_leaves_its_old_one_and_comes_back_in_a_third(
    spark, tmp_path, store, aws, target
):
    overrides = {"partition_by": ("region",)}
    job = (
        Accounts(spark, tmp_path, store, **overrides)
        if target == "parquet"
        else iceberg_accounts(spark, tmp_path, store, **overrides)
    )
    job.land([{**account(9, "user9@shop.example", 1), "region": "eu"}])
    job.run()
    job.land([{**account(9, "qa9@example.test", 2), "region": "us"}])
    summary = job.run()
    assert stored_rows(job, REGION_COLUMNS) == job.expected(REGION_COLUMNS) == []
    assert summary["records_deleted"] == 1

    job.land([{**account(9, "user9@shop.example", 3), "region": "ap"}])
    job.run()
    assert stored_rows(job, REGION_COLUMNS) == job.expected(REGION_COLUMNS)
    assert [r[-1] for r in stored_rows(job, REGION_COLUMNS)] == ["ap"]


def test_a_run_whose_every_row_is_filtered_writes_no_partition_for_keys_never_loaded(
    spark, tmp_path, store
):
    job = Accounts(spark, tmp_path, store, partition_by=("region",))
    job.land([{**account(3, "user3@shop.example", 1), "region": "eu"}])
    job.run()
    job.land([{**account(7, "qa7@example.test", 1), "region": "us"}])

    summary = job.run()

    assert job.stored(REGION_COLUMNS) == job.expected(REGION_COLUMNS)
    assert summary["records_deleted"] == 0
    assert not list((tmp_path / "target").glob("region=us/*.parquet"))


@requires_iceberg
def test_a_filtered_key_leaves_the_iceberg_table_beside_a_kept_delete_marker(
    spark, tmp_path, store
):
    marker = DeleteMarker("op", ("D",))
    job = iceberg_accounts(spark, tmp_path, store, delete_marker=marker, keep_delete_marker=True)
    job.land([{**r, "op": "U"} for r in A])
    job.run()
    job.land([{**B[0], "op": "U"}, {**account(3, "user3@shop.example", 2), "op": "D"}])

    summary = job.run()

    # 9 filtered (its marker says U) and 3 deleted by its marker both leave; the column stays.
    name = job.config.iceberg_target.name
    assert table_rows(spark, name, ["account_id", "op"]) == []
    assert "op" in spark.table(name).columns
    assert summary["records_deleted"] == 2


@requires_iceberg
def test_a_key_never_loaded_and_filtered_stays_out_of_the_iceberg_table_until_a_newer_version(
    spark, tmp_path, store
):
    job = iceberg_accounts(spark, tmp_path, store)
    job.land(B)
    job.run()  # account 9 only ever a test account: its tombstone goes to the side table
    job.land(A[:1], late=True)
    job.run()
    assert stored_rows(job) == job.expected() == []

    job.land([account(9, "user9@shop.example", 3, spend=7.0)])
    job.run()

    assert stored_rows(job) == job.expected() == [(9, "user9@shop.example", 7.0, 3)]
