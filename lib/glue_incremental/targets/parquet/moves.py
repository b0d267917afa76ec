"""Which partitions a Parquet merge rewrites beyond those its rows fall in: whether a key's
older version can sit in another partition, which keys the key index is asked about, and
the one untouched partition a run adding columns rewrites as it is."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame

from glue_incremental.io.hadoop_fs import HadoopFileSystem
from glue_incremental.keys import incoming as incoming_keys
from glue_incremental.keys import ranges as key_range
from glue_incremental.partitions.paths import dir_to_values
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.targets.latest import PartitionMoves


def moves_possible(
    primary_key: Sequence[str], partition_by: Sequence[str], partition_moves: PartitionMoves
) -> bool:
    """Whether a key's older version can sit in another partition than its new one."""
    if partition_moves not in ("detect", "ignore"):
        raise ValueError(f"partition_moves must be 'detect' or 'ignore', got {partition_moves!r}")
    return partition_moves == "detect" and not set(partition_by) <= set(primary_key)


def keys_to_look_up(
    incoming: DataFrame,
    surveyed: incoming_keys.IncomingKeys | None,
    read_rows: DataFrame | None,
    read_range: key_range.KeyRange | None,
    primary_key: Sequence[str],
    partition_by: Sequence[str],
    *,
    persisted: bool = False,
) -> tuple[DataFrame, incoming_keys.IncomingKeys | None]:
    """The rows whose keys the key index is asked about, and their survey: all of
    ``incoming`` (``surveyed``), or only ``read_rows`` (partition values as text; ``read_range``
    and ``persisted`` as ``keys.incoming.survey`` takes them) when the caller guarantees that
    every other row is a stored row of the target naming the partition it is stored in, and
    that every stored row of its key is among them (a reconcile's gone keys,
    ``load.reconcile.Reconciled``): the merge rewrites those partitions anyway."""
    if read_rows is None:
        return incoming, surveyed
    if read_range is not None and read_range.rows == 0:
        return read_rows, incoming_keys.IncomingKeys(partitions=(), keys=())
    return read_rows, incoming_keys.survey(
        read_rows,
        primary_key,
        partition_by,
        counted=read_range.rows if read_range else None,
        persisted=persisted,
        collected=read_range.pairs if read_range else None,
    )


def one_untouched(
    fs: HadoopFileSystem, target_uri: str, partition_by: Sequence[str], touched: set
) -> set[PartitionValues]:
    """The first stored partition outside ``touched`` (none if there is none): no incoming key
    is in it, so its rows survive the merge."""
    for relative in sorted(fs.partition_dirs(target_uri, len(partition_by))):
        values = tuple(dir_to_values(relative, partition_by).values())
        if values not in touched:
            return {values}
    return set()
