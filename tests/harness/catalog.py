"""Reading a target the way a catalog reader does: only what the Glue Data Catalog says.

Nothing here knows the job's ``--target_path``. The table's partitions are read at
the locations the catalog registered for them; with none registered and partition
projection on (how ``modules/incremental_pipeline`` declares targets), the
partitions are the directories the projection's location template names: the
table's ``storage.location.template``, or Athena's default ``<location>/<key>=<value>/``.
The columns are the table's, by name and with its types, as Athena reads them: a column a
file lacks reads null, and a file's column the table does not list is not seen.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from glue_incremental import aws
from pyspark.sql import functions as F


def catalog_table(database: str, table: str) -> dict[str, Any]:
    return aws.client("glue").get_table(DatabaseName=database, Name=table)["Table"]


def registered_partitions(database: str, table: str) -> list[dict[str, Any]]:
    pages = (
        aws.client("glue")
        .get_paginator("get_partitions")
        .paginate(DatabaseName=database, TableName=table)
    )
    return [partition for page in pages for partition in page["Partitions"]]


def projection_template(described: dict[str, Any]) -> str:
    """Where projected partitions live: ``${key}`` placeholders under the table's location."""
    parameters = described.get("Parameters") or {}
    location = described["StorageDescriptor"]["Location"].rstrip("/")
    keys = [key["Name"] for key in described.get("PartitionKeys") or []]
    default = "/".join([location, *(f"{key}=${{{key}}}" for key in keys)])
    return parameters.get("storage.location.template") or default


def _ddl(columns: list[dict[str, Any]]) -> str:
    """Glue column types are Hive DDL, which Spark's reader takes as a schema."""
    return ", ".join(f"`{column['Name']}` {column['Type']}" for column in columns)


def read_through_catalog(spark: Any, database: str, table: str) -> Any:
    """The table's rows as Spark reads them from the catalog's locations and columns
    (Parquet tables); partition columns typed as the table declares them."""
    described = catalog_table(database, table)
    partition_keys = described.get("PartitionKeys") or []
    keys = [key["Name"] for key in partition_keys]
    location = described["StorageDescriptor"]["Location"]
    columns = described["StorageDescriptor"].get("Columns") or []
    reader = spark.read.schema(_ddl([*columns, *partition_keys]))
    partitions = registered_partitions(database, table)
    if partitions:
        frames = [
            spark.read.schema(_ddl(columns))
            .parquet(partition["StorageDescriptor"]["Location"])
            .select(
                "*",
                *(F.lit(v).alias(k) for k, v in zip(keys, partition["Values"], strict=True)),
            )
            for partition in partitions
        ]
        return reduce(lambda a, b: a.unionByName(b), frames)
    if not keys:
        return reader.parquet(location)
    if (described.get("Parameters") or {}).get("projection.enabled") != "true":
        raise AssertionError(f"{database}.{table}: partitioned, no partitions, no projection")
    template = projection_template(described)
    if template != projection_template({**described, "Parameters": {}}):
        raise NotImplementedError(f"custom projection template {template}")
    pattern = template
    for key in keys:
        pattern = pattern.replace(f"${{{key}}}", "*")
    return reader.option("basePath", location).parquet(pattern)
