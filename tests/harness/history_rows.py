"""A delivery as the history targets hand it to ``history.groups.key_rows``: its values, the
file that delivered it (modification time, name), its delete flag and the incoming role."""

from __future__ import annotations

from typing import Any

from glue_incremental.history import groups


def incoming_row(
    values: dict[str, Any], delivery: tuple[Any, Any], *, deleted: bool = False
) -> dict[str, Any]:
    modified, name = delivery
    return {
        **values,
        "modified": modified,
        "name": name,
        groups.DELETED: deleted,
        groups.ROLE: groups.INCOMING,
    }
