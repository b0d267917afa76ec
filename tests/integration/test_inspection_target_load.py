"""``target`` and ``watermarks show`` after a real run of the load into LocalStack's S3.

A run of a tiny file pipeline (one key landed twice) publishes a partitioned Parquet
target with its key index and deliveries beside it; the command
must show exactly the latest row per key over everything landed, computed here in pure
Python, and the file source's watermark as times.
"""

from __future__ import annotations

import json

import pytest
from glue_incremental_tools import cli, deploy

from tests.harness import reference
from tests.harness.file_jobs import T0, config_for, row
from tests.harness.loads import FixedClock, run_load_at, write_json_file

pytestmark = pytest.mark.spark


def test_the_target_shows_what_a_load_published_and_the_file_marks_as_times(
    spark, s3_root, store, tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    target = f"{s3_root}/orders/"
    config = config_for(tmp_path, target_path=target)
    # Key 1 twice in the landed files: the target holds its latest version only.
    write_json_file(
        tmp_path / "source",
        [row(1, "a", 10, "x"), row(2, "b", 11, "y"), row(1, "a", 20, "x2"), row(3, "a", 21, "z")],
        mtime=T0 - 100,
    )
    run_load_at(spark, config, job_name="orders", run_id="jr_1", clock=FixedClock(T0), store=store)
    capsys.readouterr()  # the run's own summary line
    pipeline = {"kind": "load", "job_name": "orders", "state_name": "orders", "upstreams": []}
    monkeypatch.setattr(
        deploy,
        "terraform_outputs",
        lambda env, **_: {
            "watermarks_table_name": store.table_name,
            "pipelines": {"orders": {**pipeline, "target_path": target}},
        },
    )

    assert cli.main(["target", "orders", "--env", "local", "--json", "--limit", "100"]) == 0
    shown = json.loads(capsys.readouterr().out)

    expected = reference.latest_per_key(
        reference.source_rows(tmp_path / "source"), ("id",), "updated"
    )
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(shown["rows"], key=key) == sorted(expected, key=key)
    assert shown["row_count"] == len(expected)
    assert sorted(c["name"] for c in shown["schema"]) == ["id", "part", "updated", "value"]
    assert [(p["partition"], p["rows"]) for p in shown["partitions"]] == [
        ("part=a", 2),
        ("part=b", 1),
    ]

    assert cli.main(["watermarks", "--env", "local", "show", "orders"]) == 0
    out = capsys.readouterr().out
    assert "files=[files up to 2023-11-14T22:11:40Z" in out  # T0 - 100 s, the newest file
