"""The Glue Data Catalog table of a Parquet target follows its schema: columns added or widened.

After a run that published, ``sync`` compares the table's columns with the target's
schema and calls ``UpdateTable`` only if a column is missing or of another type, so a run
whose update failed is healed by the next one. Columns are never removed (a column gone
from the source stays in the target) and partition keys are left as Terraform declared
them. Terraform ignores the columns after creation (``ignore_changes`` in
``modules/incremental_pipeline/catalog.tf``), so its next plan keeps them. The load and the
join both take ``--catalog_table`` (``check_option``) and sync after their commit
(``sync_after_commit``).
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

from pyspark.sql.types import StructType

from glue_incremental import aws
from glue_incremental.args import ArgumentError

if TYPE_CHECKING:
    from glue_incremental.run.summary import JsonValue

# The members of GetTable's Table that UpdateTable's TableInput accepts
# (https://docs.aws.amazon.com/glue/latest/webapi/API_TableInput.html).
TABLE_INPUT_KEYS = (
    "Name",
    "Description",
    "Owner",
    "LastAccessTime",
    "LastAnalyzedTime",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "ViewOriginalText",
    "ViewExpandedText",
    "TableType",
    "Parameters",
    "TargetTable",
)


class GlueColumn(TypedDict):
    """A column of a Glue table (``StorageDescriptor.Columns``); other keys are kept as read."""

    Name: str
    Type: str
    Comment: NotRequired[str]
    Parameters: NotRequired[dict[str, str]]


def column_changes(
    columns: Sequence[GlueColumn], schema: StructType, partition_keys: Sequence[str]
) -> list[GlueColumn]:
    """The table's columns after taking ``schema`` in (same list if nothing changes): types
    updated in place, new columns appended; names compared as Glue stores them, lower case."""
    wanted = {
        f.name.lower(): f.dataType.simpleString()
        for f in schema.fields
        if f.name.lower() not in {k.lower() for k in partition_keys}
    }
    updated: list[GlueColumn] = [
        {**c, "Type": wanted.get(c["Name"].lower(), c["Type"])} for c in columns
    ]
    known = {c["Name"].lower() for c in columns}
    updated += [{"Name": name, "Type": kind} for name, kind in wanted.items() if name not in known]
    return updated


def sync(catalog_table: str, schema: StructType) -> list[str]:
    """Make ``database.table`` list ``schema``'s columns; returns the names added or retyped."""
    database, table = catalog_table.split(".", 1)
    glue = aws.client("glue")
    described = glue.get_table(DatabaseName=database, Name=table)["Table"]
    descriptor = described.get("StorageDescriptor") or {}
    columns = list(descriptor.get("Columns") or [])
    partition_keys = [key["Name"] for key in described.get("PartitionKeys") or []]
    updated = column_changes(columns, schema, partition_keys)
    if updated == columns:
        return []
    table_input = {key: described[key] for key in TABLE_INPUT_KEYS if key in described}
    table_input["StorageDescriptor"] = {**descriptor, "Columns": updated}
    glue.update_table(DatabaseName=database, TableInput=table_input)
    before = {(c["Name"].lower(), c["Type"]) for c in columns}
    return [c["Name"] for c in updated if (c["Name"].lower(), c["Type"]) not in before]


def check_option(catalog_table: str | None, target_format: str) -> None:
    """``--catalog_table`` names ``database.table`` of a Parquet target (raises ArgumentError)."""
    if catalog_table is not None and (target_format != "parquet" or catalog_table.count(".") != 1):
        raise ArgumentError(
            "catalog_table",
            f"--catalog_table {catalog_table!r} must be database.table, for a Parquet "
            "target (an Iceberg table keeps its own catalog entry)",
        )


def sync_after_commit(
    details: MutableMapping[str, JsonValue], catalog_table: str, schema: StructType
) -> None:
    """``sync`` after a run committed, into the run's summary ``details``: the columns
    updated, or the error; a failure is reported, not raised (the next run heals the table)."""
    try:
        details["catalog_columns_updated"] = [*sync(catalog_table, schema)]
    except Exception as error:
        details["catalog_update_error"] = f"{type(error).__name__}: {error}".splitlines()[0]
