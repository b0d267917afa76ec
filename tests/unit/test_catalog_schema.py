"""``catalog_schema``: the Glue catalog table of a Parquet target (a load's or a join's) follows
its schema (moto); ``--catalog_table`` is checked when the job's options are."""

from __future__ import annotations

import pytest
from glue_incremental import aws, join
from glue_incremental.args import ArgumentError
from glue_incremental.targets.parquet import catalog_schema
from moto import mock_aws
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

REGION = "us-east-1"


@pytest.fixture
def glue(monkeypatch):
    """A Glue catalog on moto in-process with ``lake.orders`` as Terraform creates it."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "LOCALSTACK_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    aws.reset_client_cache()
    with mock_aws():
        client = aws.client("glue")
        client.create_database(DatabaseInput={"Name": "lake"})
        client.create_table(
            DatabaseName="lake",
            TableInput={
                "Name": "orders",
                "TableType": "EXTERNAL_TABLE",
                "Parameters": {"classification": "parquet", "projection.enabled": "true"},
                "PartitionKeys": [{"Name": "part", "Type": "string"}],
                "StorageDescriptor": {
                    "Location": "s3://lake/orders/",
                    "Columns": [
                        {"Name": "id", "Type": "int"},
                        {"Name": "value", "Type": "string"},
                    ],
                },
            },
        )
        yield client
    aws.reset_client_cache()


def columns(glue) -> list[tuple[str, str]]:
    table = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    return [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]]


def schema(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields])  # type: ignore[arg-type]


def test_a_new_and_a_widened_column_reach_the_catalog_and_the_rest_is_kept(glue):
    target = schema(
        ("id", LongType()), ("value", StringType()), ("part", StringType()), ("qty", IntegerType())
    )

    changed = catalog_schema.sync("lake.orders", target)

    assert changed == ["id", "qty"]
    assert columns(glue) == [("id", "bigint"), ("value", "string"), ("qty", "int")]
    table = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    assert table["Parameters"]["projection.enabled"] == "true"
    assert [k["Name"] for k in table["PartitionKeys"]] == ["part"]
    assert table["StorageDescriptor"]["Location"] == "s3://lake/orders/"


def test_a_column_gone_from_the_target_schema_stays_and_an_unchanged_schema_is_no_update(glue):
    versions_before = glue.get_table_versions(DatabaseName="lake", TableName="orders")

    assert catalog_schema.sync("lake.orders", schema(("id", IntegerType()))) == []

    assert columns(glue) == [("id", "int"), ("value", "string")]
    after = glue.get_table_versions(DatabaseName="lake", TableName="orders")
    assert len(after["TableVersions"]) == len(versions_before["TableVersions"])


def test_after_a_commit_the_columns_added_are_reported_and_a_failure_does_not_raise(glue):
    details: dict = {}
    catalog_schema.sync_after_commit(details, "lake.orders", schema(("id", LongType())))
    catalog_schema.sync_after_commit(details, "lake.gone", schema(("id", LongType())))

    assert details["catalog_columns_updated"] == ["id"]
    assert details["catalog_update_error"].startswith("EntityNotFoundException: ")


def join_config(**overrides) -> join.JoinJobConfig:
    options = {
        "left_path": "s3://lake/orders/",
        "right_path": "s3://lake/customers/",
        "spec": join.JoinSpec(("customer_id",), "left", ("order_date",)),
        "target_path": "s3://lake/enriched/",
        **overrides,
    }
    return join.JoinJobConfig(**options)


def test_the_join_takes_its_outputs_catalog_table():
    assert join_config(catalog_table="lake.enriched").catalog_table == "lake.enriched"


@pytest.mark.parametrize(
    "overrides",
    [
        {"catalog_table": "enriched"},
        {"catalog_table": "lake.enriched.x"},
        {
            "catalog_table": "lake.enriched",
            "target_format": "iceberg",
            "target_table": "lake.enriched",
            "target_path": "",
        },
    ],
)
def test_a_catalog_table_that_is_not_database_table_of_a_parquet_output_is_refused(overrides):
    with pytest.raises(ArgumentError, match=r"^--catalog_table .* must be database\.table"):
        join_config(**overrides)
