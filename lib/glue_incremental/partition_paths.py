"""Partition directory names as Spark writes them: Hive's escaping, one parser for every reader.

``directory_name`` builds ``key=value`` as Spark's ``ExternalCatalogUtils`` does
(special characters as ``%XX``, null and empty as ``__HIVE_DEFAULT_PARTITION__``);
``parse_name`` and ``dir_to_values`` read them back, so the writer, the file
listing and the join agree on what a directory means.
"""

from __future__ import annotations

from collections.abc import Sequence

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

# Hive's escaping of path names, as Spark's ExternalCatalogUtils applies it.
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^") | {chr(code) for code in range(0x20)}
_HEX = set("0123456789abcdefABCDEF")


def escape(value: str) -> str:
    return "".join(f"%{ord(char):02X}" if char in _ESCAPED else char for char in value)


def unescape(value: str) -> str:
    out, index = [], 0
    while index < len(value):
        code = value[index + 1 : index + 3]
        if value[index] == "%" and len(code) == 2 and set(code) <= _HEX:
            out.append(chr(int(code, 16)))
            index += 3
        else:
            out.append(value[index])
            index += 1
    return "".join(out)


def directory_name(name: str, value: str | None) -> str:
    """``name=value`` for one partition level; None and ``""`` become Hive's null."""
    return f"{escape(name)}={HIVE_NULL if value is None or value == '' else escape(value)}"


def parse_name(name: str) -> tuple[tuple[str, str], ...]:
    """``(("key", "value"),)`` for a ``key=value`` directory name (unescaped), else ``()``."""
    key, sep, value = name.partition("=")
    if not sep or not key:
        return ()
    return ((unescape(key), unescape(value)),)


def dir_to_values(relative: str, partition_by: Sequence[str]) -> dict[str, str | None]:
    """The partition values a relative ``k=v/...`` directory names (None for Hive's null)."""
    if not relative:
        return {}
    values: dict[str, str | None] = {}
    for part in relative.split("/"):
        name, _, raw = part.partition("=")
        values[unescape(name)] = None if raw == HIVE_NULL else unescape(raw)
    return {name: values.get(name) for name in partition_by}
