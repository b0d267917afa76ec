"""A custom script's arguments and declarations are checked before any run, in one line."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.custom import (
    Dataset,
    DeclarationError,
    JdbcReference,
    JdbcTable,
    Output,
    iceberg,
    parquet,
)
from glue_incremental.engine.declarations import check_name
from glue_incremental.errors import GlueIncrementalError

from tests.harness.aggregates import script_module

URL = "jdbc:postgresql://db.internal:5432/shop"


def test_the_aggregation_scripts_parser_types_its_arguments_without_spark():
    args = script_module().parse_arguments(
        ["s.py", "--JOB_NAME", "daily", "--orders_path", "s3://l/o", "--target_path", "s3://l/d"]
    )
    assert (args["orders_path"], args["orders_format"], args["upstream_job"]) == (
        "s3://l/o",
        "parquet",
        None,
    )
    assert args["JOB_NAME"] == "daily" and args["dry_run"] is False
    assert (args["day_column"], args["amount_type"], args["partition_by"]) == (
        "day",
        "bigint",
        "day",
    )


def test_the_aggregation_script_reads_the_platforms_orders_by_their_own_column_and_type():
    args = script_module().parse_arguments(
        [
            *("s.py", "--JOB_NAME", "daily", "--orders_path", "s3://l/o", "--target_path", "y"),
            *("--day_column", "order_date", "--amount_type", "DECIMAL(12, 2)"),
        ]
    )
    assert (args["day_column"], args["amount_type"]) == ("order_date", "decimal(12,2)")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--orders_path", "x"], "target_path"),
        (["--orders_path", "x", "--target_path", "y", "--orders_format", "xml"], "orders_format"),
        (["--orders_path", "x", "--target_path", "y", "--order_path", "z"], "orders_path"),
        (["--orders_path", "x", "--target_path", "y", "--amount_type", "money"], "amount_type"),
        (
            ["--orders_path", "x", "--target_path", "y", "--amount_type", "decimal(40,2)"],
            "amount_type",
        ),
        (["--orders_path", "x", "--target_path", "y", "--day_column", "order date"], "day_column"),
        (["--orders_path", "x", "--target_path", "y", "--partition_by", "day/x"], "partition_by"),
    ],
)
def test_a_bad_argument_of_the_aggregation_script_is_named(argv, named):
    with pytest.raises(ArgumentError) as error:
        script_module().parse_arguments(["s.py", "--JOB_NAME", "daily", *argv])
    assert error.value.name == named or named in str(error.value)


@pytest.mark.parametrize(
    ("declare", "fragment"),
    [
        (lambda: Dataset("s3://l/o", ()), "partition_by names at least one column"),
        (lambda: Dataset("s3://l/o", ("day",), "xml"), "format 'xml'"),  # type: ignore[arg-type]
        (lambda: Dataset("db.t", ("day",), "iceberg", upstream_job="j"), "upstream_job"),
        (lambda: Dataset("s3://l/o", ("day",), partition_types={"hour": "int"}), "hour:int"),
        (lambda: Dataset("s3://l/o", ("day",), partition_types={"day": "time"}), "day:time"),
        (lambda: Dataset("s3://l/o", ("day",), full_listing_every=0), "full_listing_every"),
        (lambda: Output("parquet"), "a parquet output needs a path"),
        (
            lambda: Output("parquet", path="p", schema_evolution="widen"),  # type: ignore[arg-type]
            "schema_evolution 'widen'",
        ),
        (lambda: Output("iceberg", table="db.t", catalog_table="db.t"), "Parquet target"),
        (lambda: Output("iceberg"), "an iceberg output needs a table"),
        (lambda: check_name("Orders"), "not lower_snake_case"),
        (lambda: JdbcTable(URL, "t", primary_key=("id",)), "watermark_column names"),
        (lambda: JdbcTable(URL, "t", watermark_column="at"), "primary_key"),
        (lambda: JdbcTable("mysql://h/db", "t", watermark_column="at", primary_key="id"), "jdbc:"),
        (lambda: JdbcTable(URL, "a b", watermark_column="at", primary_key="id"), "a b"),
        (
            lambda: JdbcTable(URL, "t", secret_id="s", connection_name="c", watermark_column="at"),
            "not both",
        ),
        (lambda: JdbcReference("jdbc:postgresql://u:pw@h/db", "t"), "carries a password"),
    ],
)
def test_a_bad_declaration_is_one_line_naming_what_is_wrong(declare, fragment):
    with pytest.raises(DeclarationError) as error:
        declare()
    assert isinstance(error.value, GlueIncrementalError)
    assert fragment in str(error.value) and "\n" not in str(error.value)
    assert "pw" not in str(error.value).replace("password", "")


def test_a_jdbc_table_takes_the_jdbc_sources_options_with_no_password():
    table = JdbcTable(
        URL, "sales.orders", secret_id="pg/orders", watermark_column="at", primary_key="id"
    )
    options = table.source_options
    assert (options.url, options.table, options.secret_id) == (URL, "sales.orders", "pg/orders")
    assert options.primary_key == ("id",) and options.password is None


def test_a_single_partition_column_may_be_given_as_a_string():
    assert Dataset("s3://l/o", "day").partition_by == ("day",)  # type: ignore[arg-type]
    assert parquet("s3://l/d", "day").options().partition_by == ("day",)
    assert iceberg("db.t").options().table == "db.t"
