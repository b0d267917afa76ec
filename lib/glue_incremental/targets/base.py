"""The ``Target`` interface: what a job does with its output, whatever its format.

A job builds its target once from its configuration (``targets.registry.build``) and does
everything with its output through it: recovery before reading, the schema, the stored versions as of the
run's start, merge and publish, maintenance after the commit, and what a rewind or reset
of the watermark does to the output. Invariants: ``docs/targets-and-sources.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol, TypedDict

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from glue_incremental.history.options import HistoryOptions
from glue_incremental.keys.ranges import KeyRange
from glue_incremental.partitions.values import PartitionValues
from glue_incremental.schema.evolution import SchemaPlan
from glue_incremental.targets.latest import PartitionMoves, WriteResult

if TYPE_CHECKING:
    from glue_incremental.run.context import IncrementalRun

# A state per slot, as the run commits it (``{"default": {...}}`` for a load).
# The values are whatever the store can encode (``watermarks.encoding`` checks each).
StatesBySlot = Mapping[str, Mapping[str, object]]
# Called once by a publish when the state to commit is final (see ``Target.upsert``).
Settle = Callable[[], StatesBySlot]


@dataclass(frozen=True)
class TargetOptions:
    """What a job's arguments say of its output; ``build`` turns it into a ``Target``."""

    format: str
    path: str = ""
    table: str | None = None
    catalog: str = "glue_catalog"
    partition_by: tuple[str, ...] = ()
    compact: bool = False
    expire_older_than: timedelta = timedelta(0)
    # Parquet: how long a publish keeps the files it replaced, for ``watermarks rewind`` to
    # restore (``restore``); None: deleted at once.
    retain: timedelta | None = None
    # A history target's options (``--history scd2``); None: the latest version of each key.
    history: HistoryOptions | None = None


@dataclass(frozen=True)
class UpsertSpec:
    """How rows merge: by key, keeping the greatest ``order_by``, ties by ``delivery``."""

    primary_key: Sequence[str]
    order_by: str
    replace_all: bool
    partition_moves: PartitionMoves = "detect"
    delivery: Sequence[str] = ()
    # A boolean column of the rows, true for a delete (``deletes``); never written.
    deleted: str | None = None
    # The rows' key range, when known: a target may skip looking up keys it cannot hold.
    incoming_range: KeyRange | None = None
    # The rows with a null ``order_by``, when counted: a target refusing them need not look.
    null_order_by: int | None = None
    # The rows of ``rows`` whose keys may be stored elsewhere, and their key range, when every
    # other row is a stored row of the target naming its partition, all of its key's stored
    # rows among them (a reconcile's gone keys): a target need not look for those keys.
    read_rows: DataFrame | None = None
    read_range: KeyRange | None = None


@dataclass(frozen=True)
class Published:
    """What a publish wrote, and the states ``settle`` returned (the ones to commit)."""

    result: WriteResult
    states: StatesBySlot = field(default_factory=dict)


@dataclass(frozen=True)
class OutputRewind:
    """A rewind's effect on the output: ``note`` for the history, ``apply`` after the state moved.

    The state moves first: if ``apply`` then fails, the next run re-reads and merges again
    (idempotent), where an output rolled back alone would leave rows never reloaded.
    """

    note: dict[str, str]
    apply: Callable[[], None] = lambda: None


class OutputState(TypedDict, total=False):
    """What a target adds to the committed state about its output (what a rewind restores)."""

    # An Iceberg target a run left unwritten: the snapshot current at ``mark_start``.
    iceberg_snapshot: int
    # A Parquet target: its last retained publish (``targets.parquet.restore.STATE_KEY``).
    parquet_publish: int


class Target(Protocol):
    """A job's output. Methods take the entered run; none of them commits the watermark."""

    def recover(self, run: IncrementalRun) -> None:
        """Finish or undo what a crashed run left, before anything is read (not on a dry run)."""

    def mark_start(self, run: IncrementalRun) -> None:
        """Remember the stored version this run starts from: later reads and the publish use it."""

    def schema(self, run: IncrementalRun) -> StructType | None:
        """The output's schema (partition columns as stored), or None before the first write."""

    def read_as_of_start(self, run: IncrementalRun) -> DataFrame | None:
        """The stored rows as this run found them (``mark_start``), or None if there are none."""

    def state_table(self) -> str | None:
        """The name the committed state records so a rewind can find the output (or None)."""

    def keeps_tombstones(self, run: IncrementalRun) -> bool:
        """Whether the output keeps tombstones (``tombstones``): a merge must then rank the rows
        it reads against them even when none of its own rows is a delete."""

    def unpublished_state(self) -> OutputState:
        """What a run that publishes nothing records of the output it leaves (a rewind to that
        run restores it): the Iceberg snapshot current at ``mark_start``; nothing for Parquet."""

    def output_position(self) -> OutputState:
        """What the committed state records of where the output stands after this run, written
        or not, so a rewind to the run can restore it: the Parquet target's last retained
        publish (``targets.parquet.restore.STATE_KEY``); nothing for Iceberg (a snapshot names its run)."""

    def evolve(self, run: IncrementalRun, plan: SchemaPlan) -> None:
        """Make the stored schema ``plan.resolved`` (columns added or widened) before ``upsert``;
        nothing when ``plan.evolves_target`` is False. Idempotent: a crash after it leaves data
        unchanged, and the next run finds nothing left to evolve."""

    def upsert(
        self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec, settle: Settle
    ) -> Published:
        """Merge ``rows`` in, all or nothing, fenced by the run's lease; ``settle`` once."""

    def replace_partitions(
        self,
        run: IncrementalRun,
        rows: DataFrame,
        affected: Sequence[PartitionValues] | None,
        settle: Settle,
    ) -> Published:
        """Make exactly ``affected`` (None: all) hold ``rows``, all or nothing; ``settle`` once."""

    def after_commit(self, run: IncrementalRun, states: StatesBySlot) -> None:
        """Optional maintenance once the watermark is committed, under the run's lease."""

    def rewind_output(self, spark: SparkSession, run_id: str) -> OutputRewind:
        """What rewinding the watermark to run ``run_id`` does to the output (checked now)."""

    def reset_note(self) -> dict[str, str]:
        """What a reset of the watermark leaves of the output, for the history."""
