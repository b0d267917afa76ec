"""Merge a partial benchmark run into the committed results (``run --merge-into DIR``).

The sections the partial run measured replace (or join) those in ``DIR/results.json``;
every other section is kept as it was. Each section carries its own ``run``: the commit,
start time, scale and machine load of the run that measured it, so a README generated
from merged results says which figures come from which run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any


class ScaleMismatch(ValueError):
    """A partial run at another scale than the results it would be merged into."""


def section_run(meta: dict[str, Any]) -> dict[str, Any]:
    """What a section keeps of the run that measured it."""
    machine = meta.get("machine") or {}
    return {
        "git_commit": meta.get("git_commit"),
        "started_at": meta.get("started_at"),
        "scale": (meta.get("scale") or {}).get("name"),
        "library_files_uncommitted": meta.get("library_files_uncommitted") or [],
        "load_average_at_start": machine.get("load_average_at_start"),
        "load_average_at_end": meta.get("load_average_at_end"),
    }


def merge(base: dict[str, Any], partial: dict[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """``base`` with ``partial``'s sections in place of its own, in ``order`` (unknown last).

    Sections of ``base`` without a ``run`` get one from ``base``'s meta first, so none loses
    the commit and load it was measured at. Targets are left for the caller to re-judge.
    """
    base_scale = (base.get("meta", {}).get("scale") or {}).get("name")
    partial_scale = (partial.get("meta", {}).get("scale") or {}).get("name")
    if base_scale != partial_scale:
        raise ScaleMismatch(
            f"cannot merge a {partial_scale} run into {base_scale} results: the verdicts "
            "judge one scale"
        )
    merged = copy.deepcopy(base)
    sections: dict[str, Any] = merged.get("sections", {})
    for body in sections.values():
        body.setdefault("run", section_run(base["meta"]))
    for name, body in partial.get("sections", {}).items():
        sections[name] = {**copy.deepcopy(body), "run": section_run(partial["meta"])}
    ranked = {name: index for index, name in enumerate(order)}
    merged["sections"] = dict(
        sorted(sections.items(), key=lambda item: ranked.get(item[0], len(ranked)))
    )
    history = merged["meta"].setdefault("merged_runs", [])
    history.append({**section_run(partial["meta"]), "sections": list(partial["sections"])})
    return merged
