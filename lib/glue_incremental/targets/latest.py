"""What both targets share: the tie rule that keeps one row per key, and a write's result.

``merge_latest`` keeps the latest version of each key by one total order, (watermark,
delivery time, file name), as a full refresh does. Ties: ``docs/writer-protocol.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pyspark.sql import DataFrame
from pyspark.sql.types import (
    DataType,
    DateType,
    DecimalType,
    FloatType,
    IntegralType,
    StructType,
)

from glue_incremental.deletes import tombstones
from glue_incremental.io.jvm_calls import quoted, select_sql
from glue_incremental.keys import index as key_index


@dataclass(frozen=True)
class WriteResult:
    records_written: int
    partitions_written: list[dict[str, str | None]] = field(default_factory=list)
    partitions_removed: list[dict[str, str | None]] = field(default_factory=list)
    records_deleted: int = 0


def merge_latest(
    df: DataFrame,
    primary_key: Sequence[str],
    order_by: str | None,
    *,
    prefer: str | None = None,
    delivery: Sequence[str] = (),
    keep_delivery: bool = False,
    deleted: str | None = None,
) -> DataFrame:
    """Keep one row per primary key: the one with the greatest ``order_by``.

    Ties (the same key and ``order_by``, null included) go, in this order, to:
    the later delivery (``delivery`` columns compared in order, descending,
    nulls last: a file's modification time, then its name; a stored row whose
    delivery is unknown ranks below any known one), then the greater
    ``prefer`` (the load marks the rows just read 1 and the target's rows 0:
    with no delivery to compare, as for JDBC, the source's current row wins),
    then the greater xxhash64 of the row's values (so two runs seeing the same
    candidates keep the same one), numbers hashed as doubles (``tie_hash``). ``prefer`` is dropped from the result, and
    ``delivery`` columns too unless ``keep_delivery``. ``deleted``: a reconcile's delete of a
    snapshot source ranks as ``deletes.tombstones.absent_versions`` says.
    """
    if not primary_key:
        raise ValueError("merge_latest needs a primary key")
    if deleted is not None:
        df = tombstones.absent_versions(df, primary_key, delivery, deleted)
    dropped = {prefer, *delivery}
    data_columns = [name for name in df.columns if name not in dropped]
    ordering: list[str] = []
    if order_by:
        ordering.append(f"{quoted(order_by)} DESC NULLS LAST")
    ordering.extend(f"{quoted(name)} DESC NULLS LAST" for name in delivery)
    if prefer:
        ordering.append(f"{quoted(prefer)} DESC NULLS LAST")
    hashed = [name for name in data_columns if name != tombstones.GONE_AT]
    ordering.extend(f"{term} DESC NULLS LAST" for term in tie_hash(df.schema, hashed))
    keys = ", ".join(quoted(key) for key in primary_key)
    rank = "__glue_incremental_rank"
    window = f"row_number() OVER (PARTITION BY {keys} ORDER BY {', '.join(ordering)})"
    ranked = select_sql(df, ["*", f"{window} AS {rank}"]).where(f"{rank} = 1")
    kept = [*data_columns, *(delivery if keep_delivery else ())]
    merged = select_sql(ranked, [quoted(name) for name in kept])
    return merged if deleted is None else tombstones.still_gone(merged, delivery, deleted)


def split_by_keys(
    stored: DataFrame, keys_of: DataFrame, primary_key: Sequence[str]
) -> tuple[DataFrame, DataFrame]:
    """``stored`` rows whose key ``keys_of`` has (the merge's candidates) and the rest (each a
    stored key's only row: its own winner, written as it is with no shuffle). ``keys_of`` must
    have few keys: they are broadcast. A null key equals a null key, as the merge groups them."""
    keys = keys_of.select(*[quoted(key) for key in primary_key]).distinct()
    split = functools.partial(key_index.having_keys, stored, keys, primary_key, broadcast=True)
    return split(how="left_semi"), split(how="left_anti")


def tie_hash(schema: StructType, columns: Sequence[str]) -> list[str]:
    """The tie's last step as SQL terms: ``xxhash64`` of ``columns`` with every number cast
    to double and every date to its midnight timestamp, so a value read before a widening
    (``3`` as int, a date) and after it (``3.0`` as double, ``3.00`` as decimal, a timestamp)
    hashes alike and a tie goes to the row a full refresh keeps; then, when that cast changed
    a number, the hash of the values as typed (two numbers a double cannot tell apart: a
    bigint's 19 digits, which no widening turns into a double)."""
    widest = [_as_widest(name, schema[name].dataType) for name in columns]
    terms = [f"xxhash64({', '.join(widest)})"]
    if any(_is_number(schema[name].dataType) for name in columns):
        terms.append(f"xxhash64({', '.join(quoted(name) for name in columns)})")
    return terms


def _as_widest(name: str, data_type: DataType) -> str:
    if _is_number(data_type):
        return f"CAST({quoted(name)} AS DOUBLE)"
    if isinstance(data_type, DateType):
        return f"CAST({quoted(name)} AS TIMESTAMP)"
    return quoted(name)


def _is_number(data_type: DataType) -> bool:
    return isinstance(data_type, IntegralType | DecimalType | FloatType)


PartitionMoves = Literal["detect", "ignore"]
