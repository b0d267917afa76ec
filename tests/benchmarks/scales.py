"""How big each benchmark is: ``full`` for ``make bench``, ``smoke`` for the test suite."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Scale:
    name: str
    # 1. file ingestion: existing files, new files per incremental run, layout
    file_histories: tuple[int, ...]
    file_delta: int
    files_per_directory: int
    rows_per_file: int
    file_repeats: int
    # 2. JDBC: table sizes, share of rows changed per run, lookback window
    jdbc_rows: tuple[int, ...]
    jdbc_changed_fraction: float
    jdbc_days: int
    jdbc_lookback_hours: int
    jdbc_repeats: int
    # 3. incremental join: partitions per side, rows per partition and side, share affected
    join_partitions: tuple[int, ...]
    join_rows_per_partition: int
    join_affected_fraction: float
    join_repeats: int
    # 4. watermark store: history items, timed calls per case (commits: fewer on long
    # histories: each sample adds a version to the seeded history)
    watermark_histories: tuple[int, ...]
    watermark_samples: int
    watermark_long_history_commit_samples: int
    # 5. predicates: affected partitions, second-level partitions per first-level one
    predicate_partitions: tuple[int, ...]
    predicate_second_level: int
    # run every code path once, unmeasured, before the first measurement
    warm_up: bool
    # 7. discovery on S3 (local S3 endpoint): objects of history, per dt= partition, new ones
    s3_histories: tuple[int, ...] = (1_000, 10_000, 100_000)
    s3_objects_per_partition: int = 100
    s3_delta: int = 20
    s3_repeats: int = 3
    s3_real_run: bool = True  # one load run through S3A at the smallest size (~40 s: full only)
    # 8. the aggregation script: days of orders, rows per day, share of days affected
    aggregate_partitions: tuple[int, ...] = (1_000,)
    aggregate_rows_per_partition: int = 500
    aggregate_affected_fraction: float = 0.01
    aggregate_repeats: int = 3
    # 10. the reconcile (hard deletes): table size, share of rows deleted before it
    reconcile_rows: int = 1_000_000
    reconcile_deleted_fraction: float = 0.01
    # 11. history (SCD type 2): customers (keys), deliveries (the first of every key, then a
    # share of the keys each), keys per signup cohort (a partition; the increment updates one
    # cohort, so it does not grow with the dimension), rows per delivery file
    history_keys: tuple[int, ...] = (100_000, 1_000_000, 10_000_000)
    history_deliveries: int = 10
    history_updated_fraction: float = 0.1
    history_cohort_keys: int = 10_000
    history_rows_per_file: int = 50_000

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


FULL = Scale(
    name="full",
    file_histories=(1_000, 5_000, 20_000),
    file_delta=20,
    files_per_directory=25,
    rows_per_file=5,
    file_repeats=5,
    jdbc_rows=(100_000, 1_000_000),
    jdbc_changed_fraction=0.01,
    jdbc_days=100,
    jdbc_lookback_hours=1,
    jdbc_repeats=2,
    join_partitions=(100, 300, 1_000),
    join_rows_per_partition=2_500,
    join_affected_fraction=0.01,
    join_repeats=3,
    watermark_histories=(1, 10_000),
    watermark_samples=200,
    watermark_long_history_commit_samples=20,
    predicate_partitions=(100, 1_000, 10_000),
    predicate_second_level=100,
    warm_up=True,
)

SMOKE = Scale(
    name="smoke",
    file_histories=(25, 50),
    file_delta=20,
    files_per_directory=25,
    rows_per_file=2,
    file_repeats=1,
    jdbc_rows=(5_000,),
    jdbc_changed_fraction=0.01,
    jdbc_days=10,
    jdbc_lookback_hours=1,
    jdbc_repeats=1,
    join_partitions=(20,),
    join_rows_per_partition=20,
    join_affected_fraction=0.01,
    join_repeats=1,
    watermark_histories=(1, 20),
    watermark_samples=10,
    watermark_long_history_commit_samples=5,
    predicate_partitions=(10, 40),
    predicate_second_level=10,
    warm_up=False,
    s3_histories=(20, 60),
    s3_objects_per_partition=10,
    s3_delta=5,
    s3_repeats=1,
    s3_real_run=False,
    aggregate_partitions=(20,),
    aggregate_rows_per_partition=20,
    aggregate_repeats=1,
    reconcile_rows=5_000,
    history_keys=(200,),
    history_deliveries=2,
    history_cohort_keys=50,
    history_rows_per_file=100,
)

SCALES = {scale.name: scale for scale in (FULL, SMOKE)}
