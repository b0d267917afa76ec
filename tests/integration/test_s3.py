"""The load and the join on ``s3://`` in LocalStack's S3, through Spark's S3A (marker ``s3``).

The same guarantees as on ``file://`` (tests/integration/test_incremental_load_files.py
and test_incremental_join.py), with fewer examples: S3 sets modification times
itself, so runs start on the real clock, after the objects they should see.
"""

from __future__ import annotations

import gzip
import json
import uuid
from datetime import timedelta

import pytest
from glue_incremental import aws
from glue_incremental.args import BookmarkOption
from glue_incremental.join import JoinJobConfig, JoinSpec, run_join
from glue_incremental.load.job import LoadConfig
from glue_incremental.run.context import BookmarkControl, IncrementalRun
from glue_incremental.sources.files import list_source_files
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from pyspark.testing import assertDataFrameEqual

from tests.harness.joins import OUT_COLUMNS, OUT_SCHEMA, reference
from tests.harness.loads import FixedClock, read_parquet, run_load_at
from tests.harness.s3 import after_last_write, keys_under, put_json_lines, split_uri
from tests.harness.s3 import split_uri as s3_split_uri
from tests.harness.targets import partition_values_as_strings

pytestmark = [pytest.mark.spark, pytest.mark.s3]

COLUMNS = ["id", "part", "updated", "value"]
# Fewer examples than on file://: every run is a few S3A round trips per file.
S3_EXAMPLES = 2 if settings.default.max_examples < 50 else 20
# No shrinking: each step costs seconds on S3; the failing example is reported as drawn.
S3_SETTINGS = settings(
    max_examples=S3_EXAMPLES, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)


def row(key: int, part: str, updated: int, value: str) -> dict:
    return {"id": key, "part": part, "updated": updated, "value": value}


def orders_config(root: str, **overrides) -> LoadConfig:
    """The ``orders`` load of ``root/source/`` into ``root/target/``, partitioned by ``part``."""
    options = {
        "source": f"{root}/source/",
        "source_format": "json",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "target_path": f"{root}/target/",
        "partition_by": ("part",),
    }
    return LoadConfig(**{**options, **overrides})


def run_after_last_write(spark, config: LoadConfig, store, run_id: str, **options) -> dict:
    """Run ``orders`` as ``run_id`` with the clock just after the objects S3 last stamped."""
    return run_load_at(
        spark,
        config,
        job_name="orders",
        run_id=run_id,
        clock=FixedClock(after_last_write()),
        store=store,
        **options,
    )


def test_the_file_bookmark_lists_s3_through_hadoops_s3a_file_system(spark, s3_root):
    first = put_json_lines(f"{s3_root}/source/part=a", [row(1, "a", 1, "x")])
    second = put_json_lines(f"{s3_root}/source/part=b", [row(2, "b", 2, "y")])

    files, _stats = list_source_files(spark, f"{s3_root}/source")

    jvm_path = spark._jvm.org.apache.hadoop.fs.Path(f"{s3_root}/source")
    file_system = jvm_path.getFileSystem(spark._jsc.hadoopConfiguration())
    assert file_system.getClass().getName() == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert sorted(f.uri for f in files) == [first, second]
    assert all(f.modified_ms > 0 and f.size > 0 for f in files)


def test_a_load_on_s3_reads_only_new_objects_and_replaces_their_partitions(spark, s3_root, store):
    config = orders_config(s3_root)
    put_json_lines(f"{s3_root}/source", [row(1, "a", 10, "x"), row(2, "b", 11, "y")])
    first = run_after_last_write(spark, config, store, "jr_1")
    partition_b = [
        key for key in keys_under(f"{s3_root}/target/part=b") if key.endswith(".parquet")
    ]
    put_json_lines(f"{s3_root}/source", [row(1, "a", 20, "x2"), row(3, "a", 21, "z")])

    second = run_after_last_write(spark, config, store, "jr_2")

    assert (first["records_read"], second["records_read"]) == (2, 2)
    assert second["partitions_written"] == [{"part": "a"}]
    rows = read_parquet(spark, config.target_path, COLUMNS).collect()
    assert sorted((r["id"], r["value"]) for r in rows) == [(1, "x2"), (2, "y"), (3, "z")]
    # The untouched partition keeps its very objects.
    assert [k for k in keys_under(f"{s3_root}/target/part=b") if k.endswith(".parquet")] == (
        partition_b
    )


_load_steps = st.lists(
    st.one_of(
        st.just(("run", None)),
        st.lists(
            st.tuples(
                st.integers(1, 4),
                st.sampled_from(["a", "b"]),
                st.integers(1, 30),
                st.sampled_from("pq"),
            ),
            min_size=1,
            max_size=3,
        ).map(lambda rows: ("batch", [row(k, p, u, f"{v}{u}") for k, p, u, v in rows])),
    ),
    min_size=1,
    max_size=4,
)


@S3_SETTINGS
@given(steps=_load_steps)
def test_property_s3_incremental_runs_equal_a_full_refresh(spark, s3_root, store, steps):
    root = f"{s3_root}/{uuid.uuid4().hex[:8]}"
    job = f"prop-{uuid.uuid4().hex[:8]}"
    config = orders_config(root, lookback=timedelta(seconds=600))
    put_json_lines(f"{root}/source", [row(1, "a", 1, "first")])
    runs = 0
    for kind, batch in [*steps, ("run", None)]:
        if kind == "batch":
            put_json_lines(f"{root}/source", batch)
            continue
        runs += 1
        clock = FixedClock(after_last_write(0.05))
        run_load_at(spark, config, job_name=job, run_id=f"jr_{runs}", clock=clock, store=store)

    reference = LoadConfig(**{**config.__dict__, "target_path": f"{root}/reference/"})
    run_load_at(
        spark,
        reference,
        job_name=f"{job}-reference",
        run_id="jr_reference",
        clock=FixedClock(after_last_write(0.05)),
        store=store,
        option=BookmarkOption.DISABLE,
    )
    assertDataFrameEqual(
        read_parquet(spark, config.target_path, COLUMNS),
        read_parquet(spark, reference.target_path, COLUMNS),
    )


_join_batch = st.tuples(
    st.sampled_from(["left", "right"]),
    st.sampled_from(["2024-01-01", "2024-01-02"]),
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 9)), min_size=1, max_size=3),
)


@S3_SETTINGS
@given(
    history=st.lists(st.lists(_join_batch, max_size=2), min_size=1, max_size=3),
    join_type=st.sampled_from(["inner", "left", "full"]),
)
def test_property_s3_every_join_run_equals_a_full_recompute(
    spark, s3_root, store, history, join_type
):
    root = f"{s3_root}/{uuid.uuid4().hex[:8]}"
    job = f"join-{uuid.uuid4().hex[:8]}"
    config = JoinJobConfig(
        left_path=f"{root}/left/",
        right_path=f"{root}/right/",
        left_format="json",
        right_format="json",
        spec=JoinSpec(("id",), join_type, ("date",)),
        target_path=f"{root}/target/",
    )
    landed: dict[str, list[tuple]] = {"left": [], "right": []}
    for number, batches in enumerate(history):
        for side, partition, rows in batches:
            if side == "left":
                payload = [{"id": k, "value": f"l{v}", "amount": v} for k, v in rows]
                landed["left"] += [(partition, k, f"l{v}", v) for k, v in rows]
            else:
                payload = [{"id": k, "value": f"r{v}", "label": f"x{v}"} for k, v in rows]
                landed["right"] += [(partition, k, f"r{v}", f"x{v}") for k, v in rows]
            put_json_lines(f"{root}/{side}/date={partition}", payload)
        run = IncrementalRun(
            spark=spark,
            job_name=job,
            run_id=f"jr_{number}",
            store=store,
            bookmark=BookmarkControl(BookmarkOption.ENABLE),
            clock=FixedClock(after_last_write(0.05)),
            publish_metrics=False,
        )
        with run:
            run_join(run, config)

        expected = reference(landed["left"], landed["right"], join_type)
        published = [
            key
            for key in keys_under(f"{root}/target")
            if key.endswith(".parquet") and "/_" not in key
        ]
        if not published:
            assert not (landed["left"] and landed["right"]) or expected == []
            continue
        with partition_values_as_strings(spark):
            actual = spark.read.parquet(config.target_path).select(*OUT_COLUMNS).collect()
        assertDataFrameEqual(actual, spark.createDataFrame(expected, OUT_SCHEMA).collect())


def test_csv_objects_on_s3_are_read_by_their_own_header_compressed_or_not(spark, s3_root, store):
    # The header line of each object is read through S3A (and its codec for .gz).
    bucket, prefix = split_uri(f"{s3_root}/source/")
    s3 = aws.client("s3")
    s3.put_object(Bucket=bucket, Key=f"{prefix}old.csv", Body=b"id,part,updated\n1,a,1\n")
    s3.put_object(
        Bucket=bucket,
        Key=f"{prefix}new.csv.gz",
        Body=gzip.compress(b"id,value,part,updated\n2,x,b,20\n"),
    )

    run_after_last_write(spark, orders_config(s3_root, source_format="csv"), store, "jr_1")

    with partition_values_as_strings(spark):
        seen = read_parquet(spark, f"{s3_root}/target/", ["id", "part", "updated", "value"])
        assert sorted(tuple(r) for r in seen.collect()) == [(1, "a", 1, None), (2, "b", 20, "x")]


@pytest.mark.s3
def test_an_s3_object_whose_key_holds_a_colon_is_read(spark, s3_root, store):
    bucket, prefix = s3_split_uri(f"{s3_root}/source/")
    body = json.dumps(row(1, "a", 1, "iso")) + "\n"
    aws.client("s3").put_object(Bucket=bucket, Key=f"{prefix}2024-01-01T00:00:00.json", Body=body)
    config = LoadConfig(
        source=f"{s3_root}/source/",
        source_format="json",
        watermark_column="updated",
        primary_key=("id",),
        target_path=f"{s3_root}/target/",
        partition_by=("part",),
    )

    run_load_at(
        spark,
        config,
        job_name="colon",
        run_id="jr_1",
        clock=FixedClock(after_last_write()),
        store=store,
    )

    seen = read_parquet(spark, config.target_path, COLUMNS).collect()
    assert [tuple(r) for r in seen] == [(1, "a", 1, "iso")]
