"""The ``MERGE INTO`` statement an Iceberg target's upsert commits with (``writer``)."""

from __future__ import annotations

from collections.abc import Sequence


def merge_statement(
    table: str,
    source_view: str,
    columns: Sequence[str],
    primary_key: Sequence[str],
    deleted: str | None = None,
    within: str | None = None,
) -> str:
    """``MERGE INTO`` by primary key; rows equal to the stored ones are not rewritten.

    ``deleted`` (a boolean column of the source view, not of the table): a matched
    delete removes the stored row (``WHEN MATCHED ... THEN DELETE``), an unmatched one
    inserts nothing. ``within``: a condition on the table's rows (alias ``t``) every row
    holding an incoming key meets (``keys.ranges.within``), which Iceberg prunes files by.
    """
    on = " AND ".join(f"t.`{key}` <=> s.`{key}`" for key in primary_key)
    if within is not None:
        on = f"{on} AND {within}"
    if deleted is None:
        differs = " OR ".join(f"NOT (t.`{name}` <=> s.`{name}`)" for name in columns)
        return (
            f"MERGE INTO {table} t USING {source_view} s ON {on} "
            f"WHEN MATCHED AND ({differs}) THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *"
        )
    data = [name for name in columns if name != deleted]
    differs = " OR ".join(f"NOT (t.`{name}` <=> s.`{name}`)" for name in data)
    names = ", ".join(f"`{name}`" for name in data)
    return (
        f"MERGE INTO {table} t USING {source_view} s ON {on} "
        f"WHEN MATCHED AND s.`{deleted}` THEN DELETE "
        f"WHEN MATCHED AND ({differs}) THEN UPDATE SET "
        + ", ".join(f"t.`{name}` = s.`{name}`" for name in data)
        + f" WHEN NOT MATCHED AND NOT s.`{deleted}` THEN INSERT ({names}) VALUES ("
        + ", ".join(f"s.`{name}`" for name in data)
        + ")"
    )
