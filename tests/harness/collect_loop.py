"""The partition-predicate loop the original join script used: collects per first-level value.

One ``distinct().collect()`` of ``partition1`` per table, then, for every first-level value,
one ``where().select('partition2').distinct().collect()`` per table, and the predicate
strings concatenated: Spark jobs grow with the number of first-level values.
``as_written=True`` keeps its two copy-paste slips (table2's first level selects
``partition2``, and table2's list is rebuilt from table1's), which drop partitions only
table2 touches; ``as_written=False`` fixes them and keeps the job structure.
"""

from __future__ import annotations

from typing import Any


def collect_loop_predicates(
    table1_new_df: Any, table2_new_df: Any, *, as_written: bool
) -> tuple[str, str, set[tuple[Any, Any]]]:
    """Both tables' predicates and the ``(partition1, partition2)`` pairs the loop visited."""
    table1_partition1 = [x[0] for x in table1_new_df.select("partition1").distinct().collect()]
    first_level = "partition2" if as_written else "partition1"
    table2_partition1 = [x[0] for x in table2_new_df.select(first_level).distinct().collect()]
    if as_written:
        table2_partition1 = list(table1_partition1)
    partition1 = list(set(table1_partition1).union(set(table2_partition1)))

    visited: set[tuple[Any, Any]] = set()
    table1_predicate = ""
    table2_predicate = ""
    for p1 in partition1:
        partition2 = set(_second_level(table1_new_df, p1)) | set(_second_level(table2_new_df, p1))
        table1_query = ""
        table2_query = ""
        for p2 in partition2:
            table1_query += f"(partition1=='{p1}' and partition2=='{p2}') or "
            table2_query += f"(partition1=='{p1}' and partition2=='{p2}') or "
            visited.add((p1, p2))
        table1_predicate += table1_query
        table2_predicate += table2_query
    return table1_predicate[:-4], table2_predicate[:-4], visited


def _second_level(table: Any, p1: Any) -> list[Any]:
    rows = table.where(table["partition1"] == p1).select("partition2").distinct().collect()
    return [x[0] for x in rows]
