"""The reconcile's decisions on plain Python data: when it runs, and its safety stop."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.load.config import LoadConfig
from glue_incremental.load.reconcile import KeyCounts, ReconcileStopped, due, runs_since_after
from glue_incremental.sources import snapshots
from glue_incremental.sources.jdbc import JdbcSource, key_query
from glue_incremental.sources.listing import SourceFile


def config(**overrides) -> LoadConfig:
    options = {
        "source": "jdbc:postgresql://db:5432/shop",
        "source_table": "public.orders",
        "watermark_column": "updated_at",
        "primary_key": ("id",),
        "target_path": "file:///tmp/target",
    }
    return LoadConfig(**{**options, **overrides})


@pytest.mark.parametrize(
    ("counts", "stops"),
    [
        (KeyCounts(target=100, source=95, gone=5), False),
        (KeyCounts(target=100, source=90, gone=10), False),  # exactly the fraction is allowed
        (KeyCounts(target=100, source=89, gone=11), True),
        (KeyCounts(target=100, source=0, gone=100), True),  # an empty source never empties
        (KeyCounts(target=0, source=0, gone=0), False),  # nothing stored: nothing at stake
        (KeyCounts(target=0, source=3, gone=0), False),
    ],
)
def test_the_safety_stop_refuses_an_empty_source_and_a_loss_above_the_fraction(counts, stops):
    if stops:
        with pytest.raises(ReconcileStopped, match=r"reconcile stopped: .*nothing was written"):
            counts.check(0.1)
    else:
        counts.check(0.1)


def test_a_reconcile_runs_every_nth_run_or_on_demand():
    every_three = config(reconcile_every=3)
    runs, reconciled_at, since = range(1, 8), [], None
    for number in runs:
        now = due(every_three, since, on_demand=False)
        since = runs_since_after(every_three, since, reconciled=now)
        if now:
            reconciled_at.append(number)
    assert reconciled_at == [3, 6]
    assert due(config(), None, on_demand=True)
    assert not due(config(), 41, on_demand=False)
    assert runs_since_after(config(), 41, reconciled=False) is None  # the state keeps no count


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"source": "file:///data", "source_table": None, "reconcile_every": 5},
            "--reconcile_every needs a JDBC source or --file_snapshots true: a file source "
            "cannot say a row is gone",
        ),
        (
            {"source": "s3://bucket/data", "source_table": None, "reconcile": True},
            "--reconcile needs a JDBC source or --file_snapshots true",
        ),
        (
            {"file_snapshots": True},
            "--file_snapshots is for a file source whose every file is a full snapshot",
        ),
    ],
)
def test_a_reconcile_of_a_file_source_is_refused_in_one_line(overrides, message):
    with pytest.raises(ArgumentError, match=message) as raised:
        config(**overrides)
    assert "\n" not in str(raised.value)


def test_a_file_source_of_full_snapshots_may_reconcile():
    files = {"source": "s3://bucket/data", "source_table": None, "file_snapshots": True}
    assert config(**files, reconcile_every=5).reconcile_every == 5
    assert config(**files, reconcile=True).reconcile


def test_the_latest_snapshot_is_the_newest_file_by_time_then_name():
    older = SourceFile("s3://b/data/day=2/snapshot-9.json", modified_ms=1_000, size=10)
    tie_a = SourceFile("s3://b/data/day=1/a.json", modified_ms=2_000, size=10)
    tie_b = SourceFile("s3://b/data/day=0/b.json", modified_ms=2_000, size=10)

    assert snapshots.latest([older, tie_b, tie_a]) == tie_b  # same time: the later name
    assert snapshots.latest([older]) == older
    assert snapshots.latest([]) is None


def test_keys_missing_from_the_latest_snapshot_are_gone():
    first, second = [(1,), (2,), (3,)], [(1,), (3,)]

    counts = KeyCounts.of(stored=first, source=second)

    assert counts == KeyCounts(target=3, source=2, gone=1)
    counts.check(0.5)  # one key of three
    with pytest.raises(ReconcileStopped, match=r"more than --reconcile_max_fraction 0\.1"):
        counts.check(0.1)
    with pytest.raises(ReconcileStopped, match="the source returned no keys"):
        KeyCounts.of(stored=first, source=[]).check(1.0)  # an empty snapshot never empties


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("reconcile_max_fraction", "0", "is not a fraction above 0 and at most 1"),
        ("reconcile_max_fraction", "1.5", "is not a fraction"),
        ("reconcile_max_fraction", "a tenth", "is not a fraction"),
        ("reconcile_every", "-1", "is not a whole number of runs"),
    ],
)
def test_bad_reconcile_options_are_one_line_naming_the_option(name, value, message):
    from glue_incremental.load.config import OPTIONAL_ARGS

    args = {
        **OPTIONAL_ARGS,
        "source": "jdbc:postgresql://db:5432/shop",
        "source_table": "orders",
        "watermark_column": "updated_at",
        "primary_key": "id",
        "target_path": "file:///tmp/target",
        name: value,
    }
    with pytest.raises(ArgumentError, match=rf"--{name} .*{message}") as raised:
        LoadConfig.from_args(args)
    assert raised.value.name == name


def test_the_key_read_selects_only_the_key_columns():
    source = JdbcSource(url="jdbc:postgresql://db/shop", table="public.orders")
    assert key_query(source, ["id", "region"]) == 'SELECT "id", "region" FROM "public"."orders"'


@pytest.mark.parametrize(("gone", "keys", "fraction"), [(1, 4, 0.25), (3, 10, 0.3), (1, 3, 1 / 3)])
def test_a_reconcile_removing_exactly_the_fraction_is_allowed(gone, keys, fraction):
    counts = KeyCounts.of([(k,) for k in range(keys)], [(k,) for k in range(gone, keys)])
    counts.check(fraction)  # "more than" the fraction stops, exactly the fraction does not
    with pytest.raises(ReconcileStopped):
        KeyCounts.of([(k,) for k in range(keys)], [(k,) for k in range(gone + 1, keys)]).check(
            fraction
        )
