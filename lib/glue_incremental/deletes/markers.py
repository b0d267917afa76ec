"""Soft deletes: which source rows are deletes (``--delete_marker``), and what they remove.

A delete is a version like any other: it takes part in the target's total order
(watermark, then delivery; ``targets.latest.merge_latest``) and, when it is a key's latest
version, the key leaves the target. An older delete than the stored row loses; a
later insert of the key brings it back. The marker becomes one boolean column,
``DELETED``, carried through the merge (``targets.base.UpsertSpec.deleted``) and never
written. First run: deletes among the rows read are applied to the rows read (the
target starts without those keys). Design: ``docs/deletes.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, NullType, StringType

from glue_incremental.args import ArgumentError
from glue_incremental.errors import GlueIncrementalError, user_columns
from glue_incremental.keys.index import having_keys

# The merge's predicate column: true for a row that is a delete.
DELETED = "__glue_incremental_deleted"
# True on a row standing for a key whose newest version a transform filtered out
# (``transforms.function.apply``): a delete like a marked one, whatever its marker says.
FILTERED = "__glue_incremental_filtered"

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_EQUALS = re.compile(rf"\s*({_NAME})\s*=\s*(.*?)\s*")
_IN = re.compile(rf"\s*({_NAME})\s+(?i:in)\s*\((.*)\)\s*")


class DeleteMarkerError(GlueIncrementalError, ValueError):
    """The source's marker column is missing or of a type the marker cannot be read from."""


@dataclass(frozen=True)
class DeleteMarker:
    """``column`` marks a delete: true (``values`` empty: a boolean column, or text ``true`` in
    any case) or one of ``values``.

    Values are compared as text (``op = 'D'``; a number column's ``1``); a null marker
    is never a delete.
    """

    column: str
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not re.fullmatch(_NAME, self.column):
            raise ArgumentError(
                "delete_marker", f"--delete_marker column {self.column!r} is not a column name"
            )
        if any(not value for value in self.values) or len(set(self.values)) != len(self.values):
            raise ArgumentError(
                "delete_marker",
                f"--delete_marker values {list(self.values)!r} must be distinct and not empty",
            )

    @property
    def text(self) -> str:
        """The marker as an operator writes it (the argument's syntax)."""
        if not self.values:
            return self.column
        if len(self.values) == 1:
            return f"{self.column}={self.values[0]}"
        return f"{self.column} in ({','.join(self.values)})"

    def is_delete(self, value: object) -> bool:
        """The decision for one marker value, on plain Python data (the Spark rule's twin)."""
        if value is None:
            return False
        if not self.values:
            return value is True or (isinstance(value, str) and value.strip().lower() == "true")
        return _as_text(value) in self.values

    def predicate(self, rows: DataFrame) -> F.Column:
        """True where a row of ``rows`` is a delete (never null)."""
        if self.column not in rows.columns:
            raise DeleteMarkerError(
                f"--delete_marker column {self.column!r} is not in the source "
                f"(columns: {', '.join(user_columns(rows.columns))})"
            )
        if not self.values:
            return _boolean_predicate(rows, self.column)
        marker = F.col(f"`{self.column}`")
        return F.coalesce(marker.cast("string").isin(*self.values), F.lit(False))


def _boolean_predicate(rows: DataFrame, column: str) -> F.Column:
    """A boolean marker: a boolean column, or one read as null or text (JSON infers a column
    null in every row as string): ``true`` in any case is a delete, ``false`` or null is not.
    Text holding anything else is refused (one extra read of ``rows``, only for text)."""
    kind = rows.schema[column].dataType
    marker = F.col(f"`{column}`")
    if isinstance(kind, BooleanType):
        return F.coalesce(marker, F.lit(False))
    if isinstance(kind, NullType):
        return F.lit(False)
    if isinstance(kind, StringType):
        text = F.lower(F.trim(marker))
        other = rows.where(marker.isNotNull() & ~text.isin("true", "false")).select(marker)
        found = other.limit(1).collect()
        if found:
            raise DeleteMarkerError(
                f"--delete_marker {column!r} is string, not boolean: it holds {found[0][0]!r}, "
                f"not true or false; name the values that mean deleted, e.g. --delete_marker "
                f'"{column}=D"'
            )
        return F.coalesce(text == F.lit("true"), F.lit(False))
    raise DeleteMarkerError(
        f"--delete_marker {column!r} is {kind.simpleString()}, not boolean: name the value "
        f'that means deleted, e.g. --delete_marker "{column}=1"'
    )


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_marker(name: str, value: str | None) -> DeleteMarker | None:
    """``is_deleted``, ``op=D`` or ``op in (D,X)`` (quotes around values optional); "": none."""
    text = (value or "").strip()
    if not text:
        return None
    found = _IN.fullmatch(text)
    if found:
        return DeleteMarker(found[1], _values(name, found[2].split(",")))
    found = _EQUALS.fullmatch(text)
    if found:
        return DeleteMarker(found[1], _values(name, [found[2]]))
    if re.fullmatch(_NAME, text):
        return DeleteMarker(text)
    raise ArgumentError(
        name,
        f"--{name} {value!r} is not a boolean column (is_deleted), a column and a value "
        "(op=D) or a column and values (op in (D,X))",
    )


def _values(name: str, items: Sequence[str]) -> tuple[str, ...]:
    values = tuple(item.strip().strip("'\"") for item in items)
    if any(not item for item in values):
        raise ArgumentError(name, f"--{name} has an empty value: {', '.join(items)!r}")
    return values


def check_roles(
    marker: DeleteMarker,
    *,
    primary_key: Sequence[str],
    watermark_column: str,
    partition_by: Sequence[str],
) -> None:
    """The marker column cannot also be the key, the watermark or a partition column."""
    for option, names in (
        ("primary_key", primary_key),
        ("watermark_column", (watermark_column,)),
        ("partition_by", partition_by),
    ):
        if marker.column in names:
            raise ArgumentError(
                "delete_marker",
                f"--delete_marker column {marker.column!r} is also a --{option} column",
            )


def mark(
    rows: DataFrame,
    marker: DeleteMarker | None,
    *,
    keep_marker: bool,
    reads_tombstones: bool = False,
) -> DataFrame:
    """``rows`` with the ``DELETED`` column (and without the marker unless ``keep_marker``).

    ``reads_tombstones`` (a source of full snapshots, whose reconciles leave tombstones): the
    column even without a marker, all false, so every merge, reconciling or not, ranks the
    rows read against the tombstones of their keys (``deletes.tombstones.as_candidates``).
    A ``FILTERED`` column (a transform's filter, ``transforms.function.apply``) makes deletes too: a row
    true there is a delete whatever its marker says; the column ends in ``DELETED``.
    """
    filtered = F.col(FILTERED) if FILTERED in rows.columns else None
    if marker is None:
        if filtered is not None:
            return rows.withColumn(DELETED, filtered).drop(FILTERED)
        return rows.withColumn(DELETED, F.lit(False)) if reads_tombstones else rows
    predicate = marker.predicate(rows)
    marked = rows.withColumn(DELETED, predicate if filtered is None else filtered | predicate)
    marked = marked.drop(FILTERED)
    return marked if keep_marker else marked.drop(marker.column)


def stored(rows: DataFrame, deleted: str | None) -> DataFrame:
    """Stored rows as merge candidates: never deletes (a deleted key is not stored)."""
    return rows if deleted is None else rows.withColumn(deleted, F.lit(False))


def surviving(merged: DataFrame, deleted: str | None) -> DataFrame:
    """The merge's winners that stay: every winner but the deletes, without ``deleted``."""
    if deleted is None:
        return merged
    return merged.where(~F.col(deleted)).drop(deleted)


def count_removed(
    merged: DataFrame, existing: DataFrame | None, primary_key: Sequence[str], deleted: str | None
) -> int:
    """Stored keys whose winning version is a delete: the run's ``RecordsDeleted``."""
    if deleted is None or existing is None:
        return 0
    keys = [F.col(f"`{key}`") for key in primary_key]
    won = merged.where(F.col(deleted)).select(*keys).distinct()
    return having_keys(existing.select(*keys).distinct(), won, primary_key).count()


def latest_is_delete(
    versions: Sequence[tuple[object, object, bool]],
) -> bool:
    """Plain-Python decision: of ``(watermark, delivery, is_delete)`` versions, is the latest a
    delete? Greatest watermark wins (null lowest), then the later delivery (null lowest)."""
    if not versions:
        return False

    def order(version: tuple[object, object, bool]) -> tuple:
        watermark, delivery, _ = version
        return (watermark is not None, watermark, delivery is not None, delivery)

    return max(versions, key=order)[2]
