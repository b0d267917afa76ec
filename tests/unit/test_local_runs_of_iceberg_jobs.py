"""A local run of an Iceberg job gets the Iceberg jars and its own warehouse, as Glue's
``--datalake-formats iceberg`` and the job's ``--conf`` give it on AWS."""

from __future__ import annotations

from glue_incremental_tools.runner import iceberg_environment

ICEBERG_JOB = {
    "--datalake-formats": "iceberg",
    "--conf": "spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    " --conf spark.sql.catalog.glue_catalog=org.apache.iceberg.spark.SparkCatalog"
    " --conf spark.sql.catalog.glue_catalog.warehouse=s3://data/curated/orders_iceberg/",
}
STACK = {"GLUE_INCREMENTAL_S3A_JAR_DIR": "/checkout/build/jars"}


def test_an_iceberg_job_runs_on_the_warehouse_its_conf_names_with_the_stacks_jars():
    assert iceberg_environment(ICEBERG_JOB, STACK) == {
        "GLUE_INCREMENTAL_ICEBERG_WAREHOUSE": "s3://data/curated/orders_iceberg/",
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
