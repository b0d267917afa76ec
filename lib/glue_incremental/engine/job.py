"""The run engine: the load, the join and custom scripts are thin clients of ``CustomJob``.

A job (``custom.script.incremental_job`` for a script) takes the lease, and the block
recovers each target's half-done publish, then hands the job a ``CustomJob``. The script reads
increments (one state slot per dataset), writes each declared target once. A write is
staged when called and published (write-ahead, in call order) only on a clean exit, just
before every slot read commits in ONE fenced transaction; the metrics and the summary line
follow. An exception (or a bad script: an undeclared name, news read but not written)
publishes and commits nothing. Dry run: plans, writes nothing. ``CustomJob.running`` is
the same block inside a run the caller entered: the generic join is a script on it, and
the generic load runs each batch as one block, with the same behaviour for all three.
Design and example: ``docs/custom-jobs.md`` ("One engine").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from glue_incremental.engine.datasets import PlannedSource, plan_source, plan_sources
from glue_incremental.engine.declarations import (
    Dataset,
    Incremental,
    Output,
    Source,
    Whole,
    check_name,
)
from glue_incremental.engine.errors import (
    DeclarationError,
    NothingWritten,
    ScriptExited,
    UndeclaredName,
    WrittenTwice,
)
from glue_incremental.engine.history import History, bind, history_target
from glue_incremental.engine.planned import Planned
from glue_incremental.history.options import HistoryOptions
from glue_incremental.hooks import hooks
from glue_incremental.keys.ranges import KeyRange
from glue_incremental.partitions.values import Partition
from glue_incremental.run.context import IncrementalRun
from glue_incremental.schema import conform as schema_conform
from glue_incremental.schema.evolution import SchemaPlan
from glue_incremental.targets import registry as target_types
from glue_incremental.targets.latest import PartitionMoves, WriteResult
from glue_incremental.targets.parquet import catalog_schema, output_changes, writer
from glue_incremental.targets.parquet.history import catalog_columns
from glue_incremental.targets.registry import Target, UpsertSpec

# The kinds of sources read incrementally (a slot each) and read whole (no slot).
_INCREMENTAL = (Dataset, Incremental)
_WHOLE = Whole
# The summary line's own keys (``run_summary``, ``CustomJob._record``): a ``describe`` naming
# one would replace a count or a status, or fail the run after its commit.
SUMMARY_KEYS = frozenset(
    (
        *("job_name", "state_name", "run_id", "status", "bookmark_option", "dry_run"),
        *("old_watermark", "new_watermark", "committed", "duration_seconds", "error"),
        *("release", "records_read", "records_new", "records_written", "records_deleted"),
        *("late_files_skipped", "null_watermark_rows", "future_watermark_rows", "batches"),
        *("state_bytes", "schema_changes", "watermark_time", "watermark_lag_seconds"),
        *("partitions_written", "partitions_removed", "targets_written", "waiting_for"),
        *("plan", "metrics_published"),
    )
)


@runtime_checkable
class Previewed(Protocol):
    """A target whose dry run computes what its ``upsert`` would change, writing nothing
    (a history target: the versions it would open and close, in the run's details)."""

    def preview(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> None: ...


@runtime_checkable
class Refuses(Protocol):
    """A target that may refuse a write's rows: before anything of the run is written, a
    schema change's rewrite included (a history target: a null watermark, a tracked column
    missing). Returns the spec the write then uses."""

    def refuse(self, run: IncrementalRun, rows: DataFrame, spec: UpsertSpec) -> UpsertSpec: ...


# What an error calls a source of the kind asked for (``affected_partitions``: a dataset).
_KIND_NAMES: dict[type | tuple[type, ...], str] = {
    Dataset: "partitioned Dataset",
    _INCREMENTAL: "source read incrementally (Dataset, JdbcTable)",
}


@dataclass
class CustomJob:
    """What a custom script calls: read increments and references, write declared targets."""

    args: dict[str, Any]
    sources: dict[str, Source]
    targets: dict[str, Output]
    # The hook point reached once the output is durable, before the commit: each job
    # kind names its own (``custom.published``, ``join.published``; None: no point, the
    # load's, whose crash sweeps count its steps without it).
    published_point: str | None = "custom.published"
    # Targets the caller built itself, by declared name (the load builds its target once
    # per run from options an ``Output`` does not declare, and recovers it before its
    # first batch); the others are built from their ``Output``.
    built_targets: Mapping[str, Target] = field(default_factory=dict)
    _run: IncrementalRun | None = field(default=None, init=False)
    _built: dict[str, Target] = field(default_factory=dict, init=False)
    _planned: dict[str, Planned] = field(default_factory=dict, init=False)
    # Writes the script asked for, published in ``finish`` (call order), then their results.
    _staged: dict[str, Callable[[], WriteResult]] = field(default_factory=dict, init=False)
    # What a dry run computes instead of a staged write (``Previewed`` targets only).
    _previews: list[Callable[[], None]] = field(default_factory=list, init=False)
    _written: dict[str, WriteResult] = field(default_factory=dict, init=False)
    _settled: dict[str, dict[str, Any]] | None = field(default=None, init=False)
    _described: dict[str, Any] | None = field(default=None, init=False)
    _commit_unchanged: dict[str, bool] = field(default_factory=dict, init=False)
    _together: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False)
    _waiting_for: list[str] = field(default_factory=list, init=False)
    _schema_plans: dict[str, SchemaPlan] = field(default_factory=dict, init=False)
    # A custom job's history outputs written without a schema plan: their rows' columns.
    _history_columns: dict[str, StructType] = field(default_factory=dict, init=False)
    # Each Parquet target's notes of publishes this commit names (``targets.parquet.output_changes.note_uncommitted``).
    _notes: dict[str, list[str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for name in [*self.sources, *self.targets]:
            check_name(name)
        self._built = {
            name: self.built_targets[name]
            if name in self.built_targets
            else target_types.build(o.options())
            for name, o in self.targets.items()
        }

    # -- what the script uses ---------------------------------------------------------------------

    @property
    def run(self) -> IncrementalRun:
        assert self._run is not None, "the job is used inside its `with incremental_job` block"
        return self._run

    @property
    def spark(self) -> SparkSession:
        return self.run.spark

    @property
    def dry_run(self) -> bool:
        return self.run.dry_run

    @property
    def summary(self) -> dict[str, Any]:
        """The run's summary line once the block ended."""
        return self.run.summary

    def increment(self, source: str) -> DataFrame | None:
        """The rows of ``source`` that arrived since this job's last commit (first run: all),
        or None when nothing arrived."""
        return self._plan(source).new_rows

    def affected_partitions(self, source: str, *more: str) -> list[Partition]:
        """The partitions (value tuples, in ``partition_by`` order, as strings) this run's
        increment touches, plus those a previous run left pending, minus those an
        upstream has not settled. Several datasets (same ``partition_by``) are planned
        together on first use: the union, minus what an upstream of any has not settled."""
        if more:
            self._plan_together((source, *more))
        return list(self._plan(source, Dataset).affected)

    def planned(self, source: str) -> PlannedSource:
        """A dataset as planned for this run (its side, counts, affected and pending
        partitions): what a script reports of it with ``describe``."""
        planned = self._plan(source, Dataset)
        assert isinstance(planned, PlannedSource)  # a Dataset is planned as one
        return planned

    def describe(self, **details: Any) -> None:
        """The script's own account of the run: these keys go into the summary line (a dry
        run's ``plan``) in place of the per-source ``sources`` breakdown. A key the summary
        line sets itself (``SUMMARY_KEYS``: ``records_read``, ``committed``, ...) is refused."""
        taken = sorted(SUMMARY_KEYS.intersection(details))
        if taken:
            raise DeclarationError(
                taken[0],
                f"describe({', '.join(taken)}=...): the run summary sets these keys itself; "
                "give the script's own figures other names",
            )
        self._described = {**(self._described or {}), **details}

    def adopt(self, source: str, planned: Planned) -> Planned:
        """A source the script planned itself (the load: one batch of its own source); its
        slot ``source`` commits ``planned.state`` with the others, as a declared one's."""
        check_name(source)
        if source in self.sources or source in self._planned:
            raise DeclarationError(source, f"source {source!r} is already declared or planned")
        self._planned[source] = planned
        return planned

    def wait_for_schemas(self, *sources: str) -> bool:
        """True when every dataset named has a schema (a file, or a declared one). If not,
        the run waits: its clean exit writes and commits nothing, and the summary's
        ``waiting_for`` names the datasets without one (a join cannot read a side before)."""
        self._waiting_for = [name for name in sources if not self.planned(name).side.has_schema]
        return not self._waiting_for

    def read_partitions(self, source: str, partitions: Sequence[Partition]) -> DataFrame:
        """Exactly ``partitions`` of ``source``, whole, as of the files this run consumes."""
        return self.planned(source).read(self.run, partitions)

    def read_whole(self, source: str) -> DataFrame:
        """A declared ``Reference`` or ``JdbcReference`` table, read whole (no state)."""
        reference = self.sources.get(source)
        if not isinstance(reference, _WHOLE):
            raise UndeclaredName("reference", source, self._names(_WHOLE))
        return cast(DataFrame, reference.read(self.spark))

    def write(
        self,
        target: str,
        rows: DataFrame,
        *,
        keys: Sequence[str],
        order_by: str,
        partition_moves: PartitionMoves = "detect",
        delivery: Sequence[str] = (),
        deleted: str | None = None,
        incoming_range: KeyRange | None = None,
        null_order_by: int | None = None,
        read_rows: DataFrame | None = None,
        read_range: KeyRange | None = None,
        schema: SchemaPlan | None = None,
        replace_all: bool | None = None,
        commit_unchanged: bool = True,
        history: History | HistoryOptions | None = None,
    ) -> None:
        """Merge ``rows`` into ``target`` by ``keys``, keeping the greatest ``order_by``;
        with ``history``, every version instead, bounded by ``order_by`` (``docs/history.md``).
        Published on a clean exit of the block, never if it raises (a dry run computes a
        ``Previewed`` target's changes instead). Options (the load's): ``docs/custom-jobs.md``."""
        built = self._target(target)
        if history is not None:
            hidden = {*delivery, deleted}
            built = self._built[target] = history_target(
                self.run,
                target,
                self.targets[target],
                bind(target, history, keys, order_by),
                [name for name in rows.columns if name not in hidden],
            )
        if self.targets[target].schema_evolution is not None:
            raise DeclarationError(
                target, f"target {target!r}: schema_evolution applies to replace_partitions"
            )
        spec = UpsertSpec(
            primary_key=tuple(keys),
            order_by=order_by,
            replace_all=self._full_reload if replace_all is None else replace_all,
            partition_moves=partition_moves,
            delivery=tuple(delivery),
            deleted=deleted,
            incoming_range=incoming_range,
            null_order_by=null_order_by,
            read_rows=read_rows,
            read_range=read_range,
        )

        def upsert() -> WriteResult:
            checked = built.refuse(self.run, rows, spec) if isinstance(built, Refuses) else spec
            if schema is not None:
                built.evolve(self.run, schema)
            result = built.upsert(self.run, rows, checked, self._settle).result
            if schema is not None:
                self._schema_plans[target] = schema
            elif history is not None:  # a custom job's history output: its rows' columns
                self._history_columns[target] = StructType(
                    [f for f in rows.schema.fields if f.name not in {*delivery, deleted}]
                )
            return result

        self._commit_unchanged[target] = commit_unchanged
        self._stage(target, upsert)
        if isinstance(built, Previewed):
            previewed = built
            self._previews.append(lambda: previewed.preview(self.run, rows, spec))

    def replace_partitions(
        self, target: str, rows: DataFrame, partitions: Sequence[Partition]
    ) -> None:
        """Make exactly ``partitions`` of ``target`` hold ``rows`` (all or nothing); a
        partition without rows is removed. A full reload replaces the whole target.
        Published on a clean exit of the block, never if it raises."""
        built = self._target(target)
        affected = None if self._replaces_whole else list(partitions)
        if affected == []:
            self._stage(target, lambda: WriteResult(0))
            return
        self._stage(target, lambda: self._replace(target, built, rows, affected))

    # -- the run's lifecycle ----------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self, run: IncrementalRun, *, recover: bool = True) -> Iterator[CustomJob]:
        """The script's block inside an entered ``run``: ``start``, then ``finish`` on a
        clean exit (an exception publishes and commits nothing). ``recover=False``: the
        caller recovered the targets already (the load, once before its first batch)."""
        try:
            self.start(run, recover=recover)
            try:
                yield self
            except SystemExit as exit_:  # else Glue sees exit 0 for a run that committed nothing
                raise ScriptExited(exit_.code) from None
            self.finish()
        finally:
            for planned in self._planned.values():
                planned.release()

    def start(self, run: IncrementalRun, *, recover: bool = True) -> None:
        """Finish or undo what a crashed run left in each target, before anything is read."""
        self._run = run
        for target in self._built.values():
            if recover:
                target.recover(run)
            target.mark_start(run)

    def finish(self) -> None:
        """On a clean exit: check the script wrote what it read, publish the staged writes,
        then commit every slot read."""
        run = self.run
        details = self._details()
        if run.dry_run:
            for preview in self._previews:
                preview()
            run.record(records_read=0, records_written=0, plan=details)
            return
        if self._waiting_for:
            late = sum(p.late_files for p in self._planned.values())
            run.record(
                records_read=0,
                records_written=0,
                late_files_skipped=late,
                waiting_for=self._waiting_for,
                **details,
            )
            return
        read = [name for name, planned in self._planned.items() if planned.has_news]
        unwritten = [name for name in self.targets if name not in self._staged]
        if read and unwritten:
            raise NothingWritten(read, unwritten)
        self._check_states_fit()
        for name, write in self._staged.items():
            run.guard()  # a run that lost its lease stages nothing more (the publish checks too)
            self._written[name] = write()
        states = self._with_unwritten(
            self._settled if self._settled is not None else self._settle_states()
        )
        wrote = any(
            self._commit_unchanged.get(name, True) or result.records_deleted
            for name, result in self._written.items()
        )
        # A job reading only whole tables has no slot: nothing to commit after its publish.
        changed = not all(self._planned[name].unchanged(s) for name, s in states.items())
        committing = bool(states) and (wrote or changed)
        if committing:
            # The states as stored: the recorded state size is the committed item's.
            states = self._with_output_changes(states)
        if committing:
            run.commit(states)
        for target in self._built.values():
            target.after_commit(run, states)
        written = {name: plan.resolved for name, plan in self._schema_plans.items()}
        for name, columns in {**written, **self._history_columns}.items():
            catalog_table = self.targets[name].catalog_table
            if catalog_table and run.committed:
                table = catalog_columns(self._built[name], columns)  # a history target's: +3
                catalog_schema.sync_after_commit(run.details, catalog_table, table)
        self._forget_notes()
        # After the commit: a commit that failed (a lost lease) leaves no counts recorded.
        self._record(details, states)
        for planned in self._planned.values():
            planned.after_commit(run)

    # -- internals --------------------------------------------------------------------------------

    @property
    def _full_reload(self) -> bool:
        """Bookmarks disabled: every dataset is read from the start, targets replaced whole."""
        return not self.run.bookmark.reads_state and not any(
            planned.pending for planned in self._planned.values()
        )

    @property
    def _replaces_whole(self) -> bool:
        """``replace_partitions`` replaces the whole target: a full reload, or an upstream's
        commits could not name the partitions they changed (every partition is affected;
        a partition the upstream removed is known to no one). ``write`` merges only the
        rows given, so it keeps to ``_full_reload``."""
        planned = self._planned.values()
        return self._full_reload or any(getattr(p, "recompute_all", False) for p in planned)

    def _names(self, kind: type | tuple[type, ...]) -> list[str]:
        return [name for name, source in self.sources.items() if isinstance(source, kind)]

    def _plan(self, source: str, kind: type | tuple[type, ...] = _INCREMENTAL) -> Planned:
        declared = self._declared(source, kind)
        if source not in self._planned:
            if isinstance(declared, Dataset):
                self._planned[source] = plan_source(self.run, source, declared)
            elif isinstance(declared, Incremental):
                self._planned[source] = declared.plan(self.run, source)
        return self._planned[source]

    def _declared(self, source: str, kind: type | tuple[type, ...]) -> Source:
        declared = self.sources.get(source)
        if declared is not None and not isinstance(declared, kind):
            wanted = _KIND_NAMES.get(kind, "source")
            raise DeclarationError(
                source,
                f"source {source!r} is a {type(declared).__name__}: this needs a {wanted} "
                f"(declared: {', '.join(self._names(kind)) or 'none'})",
            )
        if not isinstance(declared, kind):
            raise UndeclaredName(_KIND_NAMES.get(kind, "source"), source, self._names(kind))
        return cast(Source, declared)

    def _dataset(self, source: str) -> Dataset:
        declared = self._declared(source, Dataset)
        assert isinstance(declared, Dataset)  # _declared checked the kind
        return declared

    def _target(self, name: str) -> Target:
        if name not in self._built:
            raise UndeclaredName("target", name, list(self.targets))
        if name in self._staged:
            raise WrittenTwice(name)
        return self._built[name]

    def _stage(self, name: str, write: Callable[[], WriteResult]) -> None:
        """Stage ``write``: ``finish`` runs it on a clean exit (never on a dry run)."""
        self._staged[name] = write

    def _plan_together(self, sources: Sequence[str]) -> None:
        """Plan ``sources`` as one (``plan_sources``), unless they already were."""
        group = tuple(sources)
        datasets = {name: self._dataset(name) for name in group}
        if all(set(self._together.get(name, ())) == set(group) for name in group):
            return  # planned together already, whatever order they are named in
        if any(name in self._planned for name in group):
            raise DeclarationError(
                ",".join(sources),
                f"datasets {', '.join(sources)}: plan them together with "
                "affected_partitions(...) before any other use of one of them",
            )
        self._planned.update(plan_sources(self.run, datasets))
        self._together.update(dict.fromkeys(group, group))

    def _replace(
        self, name: str, built: Target, rows: DataFrame, affected: list[Partition] | None
    ) -> WriteResult:
        """A staged ``replace_partitions``: the schema evolved first when declared."""
        output = self.targets[name]
        if output.schema_evolution is not None:
            rows, plan = schema_conform.evolve_output(
                self.run, built, rows, output.schema_evolution, output.partition_by
            )
            self._schema_plans[name] = plan
        return built.replace_partitions(self.run, rows, affected, self._settle).result

    def _settle(self) -> dict[str, Any]:
        """Called by a publish once its output is durable: the states to commit."""
        return self._settle_states()

    def _settle_states(self) -> dict[str, dict[str, Any]]:
        run = self.run
        published_at_ms = int(run.clock() * 1000)
        if self.published_point is not None:
            hooks.point(self.published_point, run_id=run.run_id)
        for planned in self._planned.values():
            planned.recheck_upstream(run)
        self._settled = self._states(published_at_ms)
        return self._settled

    def _states(self, published_at_ms: int) -> dict[str, dict[str, Any]]:
        tables = [t.state_table() for t in self._built.values() if t.state_table()]
        output_table = tables[0] if len(tables) == 1 else None
        return {
            name: planned.state(published_at_ms, output_table)
            for name, planned in self._planned.items()
        }

    def _check_states_fit(self) -> None:
        """Before any publish: a state the store could never commit (over DynamoDB's item
        limit) stops the run here, with nothing written, as the load's ``check_fits`` does."""
        run = self.run
        for name, state in self._states(int(run.clock() * 1000)).items():
            run.store.check_fits(str(run.state_name), run.run_id, state, slot=name)

    def _with_output_changes(self, states: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each slot's state with the partitions this commit wrote or removed in each Parquet
        target (``output_changes``): what a downstream of this job recomputes."""
        run = self.run
        changes = {}
        for name, output in self.targets.items():
            if output.format != "parquet" or not output.path:
                continue
            # A publish whose commit a crash prevented left a note: its partitions too.
            fs = writer.open_filesystem(run.spark, output.path)
            noted, notes = output_changes.uncommitted_partitions(
                fs, output.path, output.partition_by
            )
            self._notes[output.path] = notes
            result = self._written.get(name)
            done = [*result.partitions_written, *result.partitions_removed] if result else []
            changes[output_changes.location(output.path)] = output_changes.entry(
                output.partition_by, [*done, *noted]
            )

        def fits(slot: str, state: Mapping[str, Any]) -> None:
            run.store.check_fits(str(run.state_name), run.run_id, state, slot=slot)

        return output_changes.with_changes(states, changes, fits)

    def _forget_notes(self) -> None:
        """Once committed: the notes of the publishes the commit named."""
        if not self.run.committed:
            return
        for path, notes in self._notes.items():
            output_changes.forget_uncommitted(writer.open_filesystem(self.run.spark, path), notes)

    def _with_unwritten(self, states: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each slot's state with where every target not written this run was left, and where
        each target's output stands (``Target.output_position``: what a rewind restores)."""
        left: dict[str, Any] = {}
        for name, target in self._built.items():
            if name not in self._written:
                left.update(target.unpublished_state())
            left.update(target.output_position())
        return {slot: {**state, **left} for slot, state in states.items()}

    def _details(self) -> dict[str, Any]:
        if self._described is not None:
            return dict(self._described)
        return {
            "sources": {name: planned.details() for name, planned in self._planned.items()},
        }

    def _record(self, details: Mapping[str, Any], states: Mapping[str, dict[str, Any]]) -> None:
        """The run's counts; each source adds its own figures (the load's ``RecordsNew``,
        null and future watermark rows, state bytes) for the state its slot commits."""
        times = [p.watermark_time for p in self._planned.values()]
        known = [time for time in times if time is not None]
        results = self._written.values()
        written = [p for r in results for p in r.partitions_written]
        removed = [p for r in results for p in r.partitions_removed]
        figures: dict[str, Any] = {}
        for name, planned in self._planned.items():
            figures.update(planned.figures(states.get(name, {})))
        self.run.record(
            records_read=sum(p.records_read for p in self._planned.values()),
            records_written=sum(r.records_written for r in results),
            records_deleted=sum(r.records_deleted for r in results),
            watermark_time=min(known) if known else None,
            late_files_skipped=sum(p.late_files for p in self._planned.values()),
            partitions_written=written,
            partitions_removed=removed,
            targets_written=sorted(self._written),
            schema_changes=[c for plan in self._schema_plans.values() for c in plan.describe()],
            **figures,
            **details,
        )
