"""3. Incremental join with a small share of partitions affected vs a full recompute.

Pending: the join job's entry point (``glue_scripts/incremental_join.py`` /
``glue_incremental.join.main``) is not there yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.benchmarks.common import Context

ROOT = Path(__file__).resolve().parents[2]


def available() -> bool:
    try:
        from glue_incremental import join
    except ImportError:
        return False
    return (ROOT / "glue_scripts" / "incremental_join.py").exists() and hasattr(join, "main")


def run(ctx: Context) -> dict[str, Any]:
    return {
        "status": "pending",
        "reason": (
            "the incremental join job (glue_scripts/incremental_join.py, "
            "glue_incremental.join.main) is not available yet"
        ),
    }
