"""``--source_schema``: a file source read with declared columns instead of inferred ones."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.load.job import LoadConfig, SchemaError

from tests.harness.file_jobs import config_for, row
from tests.harness.loads import FixedClock, read_parquet, run_load_at, write_json_file

pytestmark = pytest.mark.spark

T0 = 1_700_000_000.0
DECLARED = "id STRING, part STRING, updated BIGINT, value STRING"


def run_orders(spark, config: LoadConfig, store) -> dict:
    return run_load_at(
        spark, config, job_name="orders", run_id="jr_1", clock=FixedClock(T0), store=store
    )


def test_declared_columns_are_read_with_their_declared_types(spark, tmp_path, store):
    # Inference would make `id` a bigint; the declaration says string.
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x"), row(2, "b", 11, "y")], mtime=T0)

    summary = run_orders(spark, config_for(tmp_path, source_schema=DECLARED), store)

    target = read_parquet(spark, (tmp_path / "target").as_uri())
    assert summary["records_read"] == 2
    assert dict(target.dtypes)["id"] == "string"
    assert sorted(r["id"] for r in target.collect()) == ["1", "2"]


def test_a_value_that_does_not_fit_its_declared_type_stops_the_run_before_writing(
    spark, tmp_path, store
):
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0)
    write_json_file(tmp_path / "source", [{**row(2, "a", 11, "y"), "updated": "soon"}], mtime=T0)

    with pytest.raises(SchemaError, match="does not fit --source_schema") as raised:
        run_orders(spark, config_for(tmp_path, source_schema=DECLARED), store)

    assert raised.value.column == "updated"
    assert "column 'updated': value 'soon' is not bigint" in str(raised.value)
    assert not (tmp_path / "target").exists()
    assert store.get_watermark("orders") is None


@pytest.mark.parametrize("declared", ["id STRING,, updated", "bigint"])
def test_a_declaration_that_is_not_a_column_list_is_refused_before_anything_is_read(
    spark, tmp_path, store, declared
):
    write_json_file(tmp_path / "source", [row(1, "a", 10, "x")], mtime=T0)

    with pytest.raises(ArgumentError) as raised:
        run_orders(spark, config_for(tmp_path, source_schema=declared), store)

    assert raised.value.name == "source_schema"
    assert str(raised.value).splitlines()[0].startswith("--source_schema ")
    assert not (tmp_path / "target").exists()
    assert store.get_watermark("orders") is None


def test_a_declared_schema_is_refused_for_a_jdbc_source():
    with pytest.raises(ArgumentError, match="--source_schema is for file sources") as raised:
        LoadConfig(
            source="jdbc:postgresql://db/shop",
            source_table="public.orders",
            watermark_column="updated",
            primary_key=("id",),
            target_path="file:///tmp/target",
            source_schema="id BIGINT",
        )

    assert raised.value.name == "source_schema"
