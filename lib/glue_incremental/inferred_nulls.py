"""A column JSON inferred as text because every value read was null is no type change.

Spark's JSON reader types a column that is null in every row it reads as ``string``. A
batch of one file (``--max_batch_files``), or a run reading one file, whose rows all lack a
value for a number or timestamp column (the watermark of rows not yet dated, a quantity
not filled in) would otherwise read as that column changing from its stored type to text:
a ``SchemaChangeError`` that stops this run and every later one, since the file stays.
``as_stored`` gives such a column its stored type (its values stay null), as a read of the
same file together with others would have. Only inferred reads of JSON files need it
(Parquet and JDBC carry their types; CSV is read as text; a declared schema is kept).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType


def as_stored(
    rows: DataFrame, stored: StructType | None, *, partition_by: Sequence[str] = ()
) -> DataFrame:
    """``rows`` with each text column that the target stores as another type, and that is
    null in every row, cast to the stored type. One small read when such a column exists
    (none otherwise)."""
    if stored is None:
        return rows
    types = {field.name: field.dataType for field in stored.fields}
    suspects = [
        field.name
        for field in rows.schema.fields
        if isinstance(field.dataType, StringType)
        and field.name in types
        and field.name not in partition_by
        and not isinstance(types[field.name], StringType)
    ]
    if not suspects:
        return rows
    counts = rows.agg(*[F.count(F.col(f"`{name}`")) for name in suspects]).first()
    assert counts is not None  # a global aggregate always has one row
    empty = {name for name, count in zip(suspects, counts, strict=True) if not count}
    return rows.select(
        *[
            F.lit(None).cast(types[name]).alias(name) if name in empty else F.col(f"`{name}`")
            for name in rows.columns
        ]
    )
