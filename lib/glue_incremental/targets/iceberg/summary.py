"""What a run writes into its Iceberg snapshot's summary, and reading it back; no Spark.

Keys ``glue-incremental.run-id``, ``.state-name``, ``.state-version``, ``.watermark``
and ``.commits`` (written by ``targets.iceberg.writer.snapshot_properties``). A snapshot another
writer made carries none of them: its fields are None. The operator tools read
summaries through pyiceberg with this module, without a JVM.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from glue_incremental.watermarks import DEFAULT_SLOT
from glue_incremental.watermarks.encoding import StateValues, decode

PREFIX = "glue-incremental."
RUN_ID = PREFIX + "run-id"
STATE_NAME = PREFIX + "state-name"
STATE_VERSION = PREFIX + "state-version"
WATERMARK = PREFIX + "watermark"
COMMITS = PREFIX + "commits"
# In the state of a run that wrote no snapshot: the one it left current (what a rewind restores).
RESTORE_SNAPSHOT: Final = "iceberg_snapshot"


@dataclass(frozen=True)
class Snapshot:
    """A table snapshot and what this platform wrote into its summary (None if foreign)."""

    snapshot_id: int
    parent_id: int | None
    run_id: str | None
    state_name: str | None
    state_versions: dict[str, int] | None
    # Each slot's state the run commits (``snapshot_properties`` writes one mapping per slot).
    watermarks: dict[str, StateValues] | None
    commits: bool

    @property
    def watermark(self) -> StateValues | None:
        """The default slot's state (the load job's); a join has slots ``left`` and ``right``."""
        return (self.watermarks or {}).get(DEFAULT_SLOT)

    @classmethod
    def from_summary(
        cls, snapshot_id: int, parent_id: int | None, summary: Mapping[str, str]
    ) -> Snapshot:
        versions = summary.get(STATE_VERSION)
        return cls(
            snapshot_id=snapshot_id,
            parent_id=parent_id,
            run_id=summary.get(RUN_ID),
            state_name=summary.get(STATE_NAME),
            state_versions=json.loads(versions) if versions is not None else None,
            watermarks=_by_slot(decode(summary[WATERMARK])) if WATERMARK in summary else None,
            commits=summary.get(COMMITS) == "true",
        )


def _by_slot(decoded: StateValues | None) -> dict[str, StateValues] | None:
    """The summary's states by slot; a slot whose value is not a state is not one of ours."""
    if decoded is None:
        return None
    return {slot: values for slot, values in decoded.items() if isinstance(values, dict)}
