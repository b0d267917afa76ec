"""The arguments a custom script's JDBC sources arrive in, as Terraform's custom kind passes them.

A source ``payments`` declared ``{ uri = "jdbc:...", table = "public.payments" }`` arrives as
``--payments_url`` and ``--payments_table``; the pipeline's credentials as the generic
load's ``--source_secret_id`` (Secrets Manager) or ``--connection_name`` (Glue connection),
one pair shared by every JDBC source of the pipeline (its role reads exactly that secret).
``jdbc_options`` declares them in the script's parser; ``jdbc_table``/``jdbc_reference``
build the declarations from the parsed values, so the names live here only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from glue_incremental.args import COMMON_OPTIONS, Option
from glue_incremental.custom.tables import JdbcReference, JdbcTable
from glue_incremental.engine.declarations import check_name
from glue_incremental.engine.errors import DeclarationError
from glue_incremental.engine.jdbc_table import CREDENTIAL_OPTIONS


def url_argument(name: str) -> str:
    return f"{name}_url"


def table_argument(name: str) -> str:
    return f"{name}_table"


def jdbc_options(*names: str) -> tuple[Option, ...]:
    """``--<name>_url`` and ``--<name>_table`` (required) for each JDBC source, then the
    credential options once."""
    options: list[Option] = []
    for name in names:
        _check_arguments_free(check_name(name))
        options += [
            Option(
                url_argument(name), f"JDBC source `{name}`: its URL, no password.", required=True
            ),
            Option(table_argument(name), f"JDBC source `{name}`: `[schema.]table`.", required=True),
        ]
    return (*options, *CREDENTIAL_OPTIONS)


def _check_arguments_free(name: str) -> None:
    """A source named ``watermarks`` would arrive as ``--watermarks_table``, the state table's
    own argument: the run would look for its state in a table named like the source's."""
    taken = {option.name for option in (*COMMON_OPTIONS, *CREDENTIAL_OPTIONS)}
    for argument in (url_argument(name), table_argument(name)):
        if argument in taken:
            raise DeclarationError(
                name, f"JDBC source {name!r}: its --{argument} is a common argument; rename it"
            )


def connection_arguments(args: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``JdbcConnection`` fields of source ``name`` from the parsed arguments."""
    return {
        "url": args[url_argument(name)],
        "table": args[table_argument(name)],
        "secret_id": args.get("source_secret_id"),
        "connection_name": args.get("connection_name"),
    }


def jdbc_table(
    args: Mapping[str, Any],
    name: str,
    *,
    watermark_column: str,
    primary_key: tuple[str, ...] | str,
    lookback: timedelta = timedelta(0),
    **more: Any,
) -> JdbcTable:
    """Source ``name`` read incrementally by ``watermark_column`` (checked now)."""
    return JdbcTable(
        **connection_arguments(args, name),
        watermark_column=watermark_column,
        primary_key=(primary_key,) if isinstance(primary_key, str) else tuple(primary_key),
        lookback=lookback,
        **more,
    )


def jdbc_reference(args: Mapping[str, Any], name: str, **more: Any) -> JdbcReference:
    """Source ``name`` read whole on every run (checked now)."""
    return JdbcReference(**connection_arguments(args, name), **more)
