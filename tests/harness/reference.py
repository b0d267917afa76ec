"""The independent reference: a full refresh computed in pure Python from the source files.

"Latest row per key": the greatest watermark wins; ties go to the later
delivery (file modification time, then file name). That is the rule docs/load-job.md
states ("Ties"); nothing here calls the library.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow.parquet as pq


def hidden(part: str) -> bool:
    """Spark's rule for a name its file index skips: ``.x``, ``_x`` but not ``_key=value``."""
    return part.startswith(".") or (part.startswith("_") and "=" not in part)


def source_rows(root: Path) -> list[tuple[tuple[int, str], dict[str, Any]]]:
    """Every row of every visible JSON-lines file under ``root``, with its delivery order."""
    found = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if path.is_file() and not any(hidden(part) for part in parts):
            delivery = (path.stat().st_mtime_ns, path.name)
            for line in path.read_text().splitlines():
                if line.strip():
                    found.append((delivery, json.loads(line)))
    return found


def latest_per_key(
    rows: Iterable[tuple[tuple[int, str], Mapping[str, Any]]],
    primary_key: Sequence[str],
    watermark: str,
) -> list[dict[str, Any]]:
    """One row per key: the greatest (watermark, delivery); a null watermark ranks lowest."""
    best: dict[tuple, tuple[tuple, dict[str, Any]]] = {}
    for delivery, row in rows:
        key = tuple(row[name] for name in primary_key)
        value = row.get(watermark)
        rank = (value is not None, value if value is not None else 0, delivery)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, dict(row))
    return sorted((row for _, row in best.values()), key=lambda row: str(row))


def full_refresh(root: Path, primary_key: Sequence[str], watermark: str) -> list[dict[str, Any]]:
    return latest_per_key(source_rows(root), primary_key, watermark)


def visible_rows(target: Path, columns: Sequence[str]) -> list[dict[str, Any]]:
    """What a reader listing ``target`` sees now: every visible Parquet file's rows.

    Partition values come from ``k=v`` directory names (Hive-unescaped), as strings; a file that
    vanishes between the listing and the read counts as not seen.
    """
    rows = []
    if not target.exists():
        return rows
    for path in sorted(target.rglob("*.parquet")):
        relative = path.relative_to(target).parts
        if any(hidden(part) for part in relative):
            continue
        partition = {
            unquote(name): unquote(value)
            for name, value in (part.split("=", 1) for part in relative[:-1])
        }
        try:
            table = pq.read_table(path)
        except FileNotFoundError:
            continue
        for record in table.to_pylist():
            record.update(partition)
            rows.append({name: record.get(name) for name in columns})
    return rows


def as_tuples(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> list[tuple]:
    """Rows as sorted tuples of ``columns`` (a null sorts first: a key's greatest version may
    come from a delivery that lacked a column others carry)."""
    return sorted((tuple(row.get(name) for name in columns) for row in rows), key=_nulls_first)


def _nulls_first(values: tuple) -> tuple:
    return tuple((False, 0) if value is None else (True, value) for value in values)


def without_deletes(
    latest: Iterable[Mapping[str, Any]], is_delete: Callable[[Mapping[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Soft deletes on a full refresh: a key whose latest version is a delete is absent."""
    return [dict(row) for row in latest if not is_delete(row)]


def without_gone_keys(
    latest: Iterable[Mapping[str, Any]], source_keys: Iterable[tuple], primary_key: Sequence[str]
) -> list[dict[str, Any]]:
    """Hard deletes (a reconcile): only keys the source still has stay."""
    present = set(source_keys)
    return [dict(row) for row in latest if tuple(row[name] for name in primary_key) in present]


def as_loaded(
    rows: Iterable[tuple[tuple[int, str], Mapping[str, Any]]],
    columns_of_run: Mapping[int, Sequence[str]],
    columns: Sequence[str],
) -> list[tuple[tuple[int, str], dict[str, Any]]]:
    """Rows as schema evolution stores them: each delivery (whose order starts with the run that
    read it) keeps only the columns that run's source had; every other one of ``columns`` is
    null (a column that appeared later reads null for older rows, one gone stays null)."""
    return [
        (
            order,
            {name: row.get(name) if name in columns_of_run[order[0]] else None for name in columns},
        )
        for order, row in rows
    ]


def full_refresh_with_changes(
    deliveries: Iterable[tuple[tuple[int, int], Mapping[str, Any]]],
    columns_of_epoch: Mapping[int, Sequence[str]],
    columns: Sequence[str],
    *,
    primary_key: Sequence[str],
    watermark: str,
    is_delete: Callable[[Mapping[str, Any]], bool],
) -> list[dict[str, Any]]:
    """The full refresh of a source whose declared schema changed between epochs, with soft
    deletes: each delivery (``(epoch, landing order)``) keeps only its epoch's columns, the
    latest version per key wins, and a key whose latest version is a delete is absent.

    Widening changes no value; ``columns``: every column any epoch loaded, the marker's too.
    """
    loaded = as_loaded(list(deliveries), columns_of_epoch, columns)
    return without_deletes(latest_per_key(loaded, primary_key, watermark), is_delete)


def latest_snapshot_merged(
    snapshots: Sequence[Sequence[Mapping[str, Any]]], primary_key: Sequence[str], watermark: str
) -> list[dict[str, Any]]:
    """Hard deletes on a source of full snapshots, after a reconcile: the keys of the latest
    snapshot, each with its latest version over every snapshot (watermark, then delivery)."""
    delivered = [((index,), row) for index, rows in enumerate(snapshots) for row in rows]
    latest = latest_per_key(delivered, primary_key, watermark)
    present = [tuple(row[name] for name in primary_key) for row in snapshots[-1]]
    return without_gone_keys(latest, present, primary_key)
