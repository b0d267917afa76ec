"""Names and paths as Spark reads and writes them: Hive's escaping, hidden names, literal paths.

``directory_name`` builds ``key=value`` as Spark's ``ExternalCatalogUtils`` does
(special characters as ``%XX``, null and empty as ``__HIVE_DEFAULT_PARTITION__``);
``parse_name`` and ``dir_to_values`` read them back, so the writer, the file
listing and the join agree on what a directory means. ``is_hidden`` is the one
rule for names no listing of the library returns (Spark's), and ``literal``
the one way a path reaches ``spark.read`` (never as a glob).
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


def is_hidden(name: str) -> bool:
    """Whether Spark's file index skips this file or directory name, and so every listing here.

    Spark's rule (``InMemoryFileIndex.shouldFilterOutPathName``): ``.x``, ``_x``
    unless it holds ``=`` (``_ingest_date=2024-01-01`` is a partition), and
    ``x._COPYING_``; also S3 console folder markers ``x_$folder$`` (never data).
    """
    return (
        name.startswith(".")
        or (name.startswith("_") and "=" not in name)
        or name.endswith("._COPYING_")
        or name.endswith("_$folder$")
    )


_GLOB_CHARS = "\\[]{}*?"


def literal(uri: str) -> str:
    """``uri`` for ``spark.read``, which globs its paths: glob characters escaped, so
    ``out[1]/t`` or ``{a}`` is read as written. Only paths handed to a reader; ``basePath``
    and writes take paths literally already."""
    return "".join("\\" + char if char in _GLOB_CHARS else char for char in uri)


def partition_dir(partition_by: Sequence[str], values: Sequence[str | None]) -> str:
    """``a=1/b=x%2Fy``: the relative directory Spark uses for these values."""
    return "/".join(
        directory_name(name, value) for name, value in zip(partition_by, values, strict=True)
    )
