"""A custom script's JDBC sources arrive as Terraform's custom kind passes them
(``--<name>_url``, ``--<name>_table``, the pipeline's ``--source_secret_id`` or
``--connection_name``) and are checked before any run, in one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.custom import DeclarationError, JdbcReference, JdbcTable, jdbc_options
from glue_incremental.custom.jdbc_arguments import jdbc_reference, jdbc_table

SCRIPT = Path(__file__).resolve().parents[2] / "glue_scripts" / "label_payments.py"
URL = "jdbc:postgresql://db.internal:5432/shop"
SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:shop-AbCdEf"


def label_payments():
    spec = importlib.util.spec_from_file_location("label_payments", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def argv(**overrides: str) -> list[str]:
    arguments = {
        "--payments_url": URL,
        "--payments_table": "public.payments",
        "--methods_url": URL,
        "--methods_table": "public.payment_methods",
        "--source_secret_id": SECRET,
        "--target_path": "s3://lake/payments_labelled/",
        **overrides,
    }
    return ["s.py", "--JOB_NAME", "payments_labelled", *[x for kv in arguments.items() for x in kv]]


def test_the_label_payments_parser_reads_terraforms_jdbc_arguments_without_spark():
    args = label_payments().parse_arguments(argv())
    payments = jdbc_table(args, "payments", watermark_column="updated_at", primary_key="id")
    methods = jdbc_reference(args, "methods")
    assert isinstance(payments, JdbcTable) and isinstance(methods, JdbcReference)
    assert (payments.url, payments.table, payments.secret_id, payments.primary_key) == (
        URL,
        "public.payments",
        SECRET,
        ("id",),
    )
    assert (methods.table, methods.secret_id, methods.connection_name) == (
        "public.payment_methods",
        SECRET,
        None,
    )


def test_a_connection_instead_of_a_secret_reaches_every_jdbc_source():
    arguments = argv(**{"--connection_name": "shop-db"})
    arguments = (
        arguments[: arguments.index("--source_secret_id")]
        + arguments[arguments.index("--source_secret_id") + 2 :]
    )
    args = label_payments().parse_arguments(arguments)
    assert jdbc_reference(args, "methods").connection_name == "shop-db"
    assert jdbc_reference(args, "payments").secret_id is None


def test_a_missing_jdbc_table_argument_fails_naming_it():
    arguments = argv()
    del arguments[arguments.index("--methods_table") : arguments.index("--methods_table") + 2]
    with pytest.raises(ArgumentError) as error:
        label_payments().parse_arguments(arguments)
    assert error.value.name == "methods_table"


def test_a_password_in_a_jdbc_url_argument_is_refused_before_the_run_without_echoing_it():
    args = label_payments().parse_arguments(argv(**{"--payments_url": f"{URL}?password=hunter2"}))
    with pytest.raises(DeclarationError) as error:
        jdbc_table(args, "payments", watermark_column="updated_at", primary_key="id")
    message = str(error.value)
    assert "carries a password" in message and "hunter2" not in message
    assert "\n" not in message


def test_a_jdbc_source_name_that_cannot_be_a_slot_is_refused():
    with pytest.raises(DeclarationError):
        jdbc_options("Payments")
