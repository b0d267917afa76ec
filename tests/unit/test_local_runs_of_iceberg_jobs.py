"""A local run of an Iceberg job gets the Iceberg jars and its own warehouse, as Glue's
``--datalake-formats iceberg`` and the job's ``--conf`` give it on AWS; the operator
commands find its table in the warehouse the same job definition names."""

from __future__ import annotations

from glue_incremental_tools.iceberg_catalog import (
    conf_warehouse,
    current_metadata_file,
    job_warehouse,
)
from glue_incremental_tools.runner import iceberg_environment

WAREHOUSE = "s3://data/curated/orders_iceberg/"
ICEBERG_JOB = {
    "--datalake-formats": "iceberg",
    "--conf": "spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    " --conf spark.sql.catalog.glue_catalog=org.apache.iceberg.spark.SparkCatalog"
    f" --conf spark.sql.catalog.glue_catalog.warehouse={WAREHOUSE}",
}
STACK = {"GLUE_INCREMENTAL_S3A_JAR_DIR": "/checkout/build/jars"}


def test_an_iceberg_job_runs_on_the_warehouse_its_conf_names_with_the_stacks_jars():
    assert iceberg_environment(ICEBERG_JOB, STACK) == {
        "GLUE_INCREMENTAL_ICEBERG_WAREHOUSE": WAREHOUSE,
        "GLUE_INCREMENTAL_JARS_DIR": "/checkout/build/jars",
    }


def test_a_jar_directory_already_chosen_is_kept():
    chosen = {**STACK, "GLUE_INCREMENTAL_JARS_DIR": "/elsewhere/jars"}
    assert (
        iceberg_environment(ICEBERG_JOB, chosen)["GLUE_INCREMENTAL_JARS_DIR"] == "/elsewhere/jars"
    )


def test_a_job_without_iceberg_gets_nothing_even_with_a_conf():
    parquet_job = {"--conf": ICEBERG_JOB["--conf"], "--target_format": "parquet"}
    assert iceberg_environment(parquet_job, STACK) == {}


def test_the_warehouse_is_the_conf_setting_of_the_jobs_catalog_wherever_it_rides():
    alone = {"--conf": f"spark.sql.catalog.glue_catalog.warehouse={WAREHOUSE}"}
    other_catalog = {"--conf": "spark.sql.catalog.other.warehouse=s3://elsewhere/"}
    assert conf_warehouse(ICEBERG_JOB) == conf_warehouse(alone) == WAREHOUSE
    assert conf_warehouse(other_catalog) is None
    assert conf_warehouse({}) is None


def test_the_operator_commands_find_the_warehouse_the_job_definition_gives_its_runs():
    definition = {"Name": "gi-local-orders-iceberg", "DefaultArguments": ICEBERG_JOB}
    assert job_warehouse(definition) == WAREHOUSE
    # A non-overridable --conf is what every run gets, whatever the defaults say.
    pinned = {"--conf": "spark.sql.catalog.glue_catalog.warehouse=s3://pinned/"}
    assert job_warehouse({**definition, "NonOverridableArguments": pinned}) == "s3://pinned/"
    assert (
        job_warehouse({"Name": "parquet", "DefaultArguments": {"--target_path": "s3://t/"}}) is None
    )


def test_the_current_metadata_is_the_highest_version_whatever_the_hint_says():
    names = ["v1.metadata.json", "v2.metadata.json", "v10.metadata.json", "version-hint.text"]
    assert current_metadata_file([*names, "snap-1-abc.avro", "vx.metadata.json"]) == (
        "v10.metadata.json"
    )
    assert current_metadata_file(["version-hint.text"]) is None
