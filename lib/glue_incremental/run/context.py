"""The run context every Glue script uses: it owns the order that makes loads safe.

Take the job's lease, read the committed state (honouring ``--job-bookmark-option``),
let the job write its output durably (``guard`` before publishing), then ``commit``
all slots in one transaction fenced by the lease; metrics and one JSON summary line
on the way out, also when nothing was read. A failure before the commit leaves the
watermark where it was. ``hooks`` names the steps where tests inject crashes.
On Glue the GlueContext's session is used; elsewhere a local SparkSession.
Design: ``docs/watermarks-and-leases.md`` (the order of a run).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import sysconfig
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

import py4j
import pyspark
from pyspark.context import SparkContext
from pyspark.sql import SparkSession

from glue_incremental.args import (
    COMMON_OPTIONS,
    ArgumentError,
    BookmarkOption,
    parse_bool,
    parse_positive_int,
    resolve_options,
    typed_values,
    validate_run_id,
)
from glue_incremental.errors import GlueIncrementalError, first_line
from glue_incremental.hooks import HookHandler, HookPoints, hooks  # noqa: F401 (runtime.hooks)
from glue_incremental.run import metrics as run_metrics
from glue_incremental.run.summary import JsonValue, RunCounts, RunSummary, jsonable
from glue_incremental.spark import apply_required_conf, local_spark_session
from glue_incremental.watermarks import DEFAULT_SLOT, Lease, Watermarks
from glue_incremental.watermarks.digest import state_digest
from glue_incremental.watermarks.encoding import StateValues

log = logging.getLogger("glue_incremental.run.context")


@dataclass(frozen=True)
class BookmarkControl:
    """``--job-bookmark-option`` with Glue's optional replay range."""

    option: BookmarkOption = BookmarkOption.ENABLE
    from_run: str | None = None
    to_run: str | None = None

    def __post_init__(self) -> None:
        if (self.from_run or self.to_run) and self.option is not BookmarkOption.PAUSE:
            raise ArgumentError(
                "job-bookmark-from",
                "--job-bookmark-from/--job-bookmark-to replay a range and need "
                "--job-bookmark-option job-bookmark-pause",
            )
        if bool(self.from_run) != bool(self.to_run):
            missing = "job-bookmark-to" if self.from_run else "job-bookmark-from"
            raise ArgumentError(
                missing,
                f"--{missing} is missing: Glue replays a range only with both "
                "--job-bookmark-from and --job-bookmark-to",
            )

    @property
    def commits(self) -> bool:
        return self.option is BookmarkOption.ENABLE

    @property
    def reads_state(self) -> bool:
        return self.option is not BookmarkOption.DISABLE


class GlueBookmarkJob(Protocol):
    """awsglue's ``Job`` as a run uses it: committed after the watermark (Glue's own bookmark)."""

    def commit(self) -> None: ...


@dataclass
class GlueJob:
    """The edge to Glue: resolved arguments, the SparkSession and, on Glue, the Job."""

    args: dict[str, str | None]
    spark: SparkSession
    glue_job: GlueBookmarkJob | None = None

    @property
    def job_name(self) -> str:
        return str(self.args["JOB_NAME"])

    @property
    def run_id(self) -> str:
        return str(self.args["JOB_RUN_ID"])

    @property
    def bookmark(self) -> BookmarkControl:
        return BookmarkControl(
            BookmarkOption.parse(
                self.args.get("job-bookmark-option") or BookmarkOption.ENABLE.value
            ),
            self.args.get("job-bookmark-from"),
            self.args.get("job-bookmark-to"),
        )

    @property
    def dry_run(self) -> bool:
        return parse_bool("dry_run", self.args.get("dry_run"))

    @classmethod
    def from_argv(
        cls,
        argv: Sequence[str] | None = None,
        *,
        required: Sequence[str] = (),
        optional: Mapping[str, str | None] | None = None,
        spark: SparkSession | None = None,
    ) -> GlueJob:
        args = resolve_options(list(argv if argv is not None else sys.argv), required, optional)
        validate_run_id(str(args["JOB_RUN_ID"]))
        typed_values(COMMON_OPTIONS, args)  # every common argument is valid before anything runs
        BookmarkControl(
            BookmarkOption.parse(args["job-bookmark-option"] or ""),
            args.get("job-bookmark-from"),
            args.get("job-bookmark-to"),
        )
        if spark is not None:
            return cls(args, spark)
        try:  # awsglue exists only on Glue: elsewhere the job runs on a local session
            from awsglue.context import GlueContext
            from awsglue.job import Job
        except ImportError:
            return cls(args, local_spark_session(app_name=str(args["JOB_NAME"])))

        glue_context = GlueContext(SparkContext.getOrCreate())
        job = Job(glue_context)
        job.init(args["JOB_NAME"], glue_init_args(args))
        apply_required_conf(glue_context.spark_session)
        return cls(args, glue_context.spark_session, job)

    def run(self, **overrides: Any) -> IncrementalRun:
        """The run context for this job, configured from its arguments."""
        options: dict[str, Any] = {  # IncrementalRun's fields, some replaced by ``overrides``
            "spark": self.spark,
            "job_name": self.job_name,
            "run_id": self.run_id,
            "bookmark": self.bookmark,
            "store": Watermarks(self.args.get("watermarks_table") or "glue-watermarks"),
            "state_name": self.args.get("watermark_name") or self.job_name,
            "lease_seconds": parse_positive_int(
                "lease_seconds", self.args.get("lease_seconds") or "900"
            ),
            "dry_run": self.dry_run,
            "glue_job": self.glue_job,
            "metrics_namespace": self.args.get("metrics_namespace") or run_metrics.NAMESPACE,
            "release": self.args.get("release"),
        }
        options.update(overrides)
        return IncrementalRun(**options)


def glue_init_args(args: Mapping[str, str | None]) -> dict[str, str | None]:
    """The arguments in ``getResolvedOptions``' shape, as awsglue's ``Job.init`` expects them.

    awsglue turns ``--job-bookmark-option`` into the key ``job_bookmark_option``.
    """
    return {name.replace("-", "_"): value for name, value in args.items()}


@dataclass
class IncrementalRun:
    """One run of one job; use as a context manager.

    ``state_name`` is where the state lives: the job name by default, or a
    logical pipeline name (``--watermark_name``) that survives renaming or
    recreating the Glue job. First run: ``previous`` returns None.
    """

    spark: SparkSession
    job_name: str
    run_id: str
    store: Watermarks
    bookmark: BookmarkControl = field(default_factory=BookmarkControl)
    state_name: str | None = None
    lease_seconds: int = 900
    dry_run: bool = False
    glue_job: GlueBookmarkJob | None = None
    publish_metrics: bool = True
    metrics_namespace: str = run_metrics.NAMESPACE
    clock: Callable[[], float] = time.time
    release: str | None = None

    lease: Lease | None = field(default=None, init=False)
    started_at: float = field(default=0.0, init=False)
    # What the job adds to the summary line (plan, snapshot ids, errors after the commit).
    details: dict[str, JsonValue] = field(default_factory=dict, init=False)
    committed: bool = field(default=False, init=False)
    _previous: dict[str, StateValues | None] = field(default_factory=dict, init=False)
    _changed_by_hand: set[str] = field(default_factory=set, init=False)
    _counts: RunCounts | None = field(default=None, init=False)
    _started_from: dict[str, StateValues | None] | None = field(default=None, init=False)
    _line: dict[str, JsonValue] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        validate_run_id(self.run_id)
        self.state_name = self.state_name or self.job_name

    @property
    def summary(self) -> dict[str, JsonValue]:
        """The summary line once the run ended (``RunSummary.line``); until then its details."""
        return dict(self._line if self._line is not None else self.details)

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> IncrementalRun:
        self.started_at = self.clock()
        if not self.dry_run:
            self.lease = self.store.acquire_lease(
                str(self.state_name), self.run_id, seconds=self.lease_seconds
            )
            self.lease.start_heartbeat()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if exc is None:
                self._finish_successfully()
            else:
                self._log_summary(
                    "FAILED",
                    error=f"{type(exc).__name__}: {first_line(exc) if str(exc) else ''}",
                )
        finally:
            if self.lease is not None:
                with contextlib.suppress(Exception):
                    self.lease.release()

    # -- state ----------------------------------------------------------------------------------

    def previous(self, slot: str = DEFAULT_SLOT) -> StateValues | None:
        """The values this run starts from, or None (first run, reset, or bookmarks disabled)."""
        if slot in self._previous:
            return self._previous[slot]
        assert self.state_name
        values: StateValues | None
        if not self.bookmark.reads_state:
            values = None
        elif self.bookmark.from_run:
            values = self.store.state_after_run(self.state_name, self.bookmark.from_run, slot)[
                "watermarks"
            ]
        else:
            state = self.store.get_watermark(self.state_name, slot)
            values = state["watermarks"] if state else None
            if state and state.get("kind") in ("rewind", "set"):
                self._changed_by_hand.add(slot)
        self._previous[slot] = values
        return values

    def committed_values(self, slot: str = DEFAULT_SLOT) -> StateValues | None:
        """The slot's last committed values whatever the bookmark option (a disabled run reads
        them too): what the output was last written under. None before any commit or after
        a reset."""
        if self.bookmark.reads_state and not self.bookmark.from_run:
            return self.previous(slot)
        assert self.state_name
        state = self.store.get_watermark(self.state_name, slot)
        return state["watermarks"] if state else None

    def starts_from_an_earlier_state(self, slot: str = DEFAULT_SLOT) -> bool:
        """Whether ``previous`` is not simply the last run's state: a replay (``from_run``), or a
        rewind or ``set`` since. What the world did after that state (S3 events already
        consumed, for example) is then not in it."""
        self.previous(slot)
        return bool(self.bookmark.from_run) or slot in self._changed_by_hand

    def continue_from_commit(self, slot: str = DEFAULT_SLOT) -> None:
        """A batched run's next batch starts from the state this run just committed
        (``previous`` returns it); the summary still names the state the run started from."""
        assert self.state_name
        if self._started_from is None:
            self._started_from = dict(self._previous)
        state = self.store.get_watermark(self.state_name, slot)
        self._previous[slot] = state["watermarks"] if state else None
        self._changed_by_hand.discard(slot)

    def count_batches(self, batches: int) -> None:
        """A batched run's batch count, added to what ``record`` recorded (metric ``Batches``)."""
        self._counts = replace(self._counts or RunCounts(), batches=batches)

    @property
    def counts(self) -> RunCounts | None:
        """What ``record`` last recorded (None before)."""
        return self._counts

    def upper_bound(self, slot: str = DEFAULT_SLOT) -> StateValues | None:
        """For a paused replay with ``--job-bookmark-to``: the state after that run, else None."""
        if not self.bookmark.to_run:
            return None
        assert self.state_name
        return self.store.state_after_run(self.state_name, self.bookmark.to_run, slot)["watermarks"]

    def guard(self) -> None:
        """Raise LeaseLost if another run took this job over (call before writing)."""
        if self.lease is not None:
            self.lease.check()

    def commit(self, values_by_slot: Mapping[str, Mapping[str, object]]) -> bool:
        """Move the watermark(s) after the output is durable; all slots or none.

        Does nothing (and returns False) when bookmarks are paused or disabled,
        or on a dry run. Raises WatermarkConflict or LeaseLost; nothing moves then.
        """
        if self.dry_run or not self.bookmark.commits:
            self.details["commit_skipped"] = (
                "dry run" if self.dry_run else self.bookmark.option.value
            )
            return False
        assert self.state_name
        hooks.point("commit.before", run_id=self.run_id)
        items = []
        for slot, values in values_by_slot.items():
            if slot not in self._previous:
                self.previous(slot)
            item = self.store.create_watermark_item(
                self.state_name, self.run_id, slot=slot, **values
            )
            items.append(item)
        self.store.commit_many(items, lease=self.lease)
        self.committed = True
        hooks.point("commit.after", run_id=self.run_id)
        self.details["new_watermark"] = {
            item.slot: jsonable(state_digest(item.watermarks)) for item in items
        }
        return True

    def record(
        self,
        *,
        records_read: int,
        records_written: int,
        watermark_time: datetime | None = None,
        late_files_skipped: int = 0,
        null_watermark_rows: int = 0,
        records_new: int | None = None,
        future_watermark_rows: int = 0,
        state_bytes: int | None = None,
        records_deleted: int = 0,
        schema_changes: Sequence[str] = (),
        **details: object,
    ) -> None:
        """What the run did: feeds the metrics and the summary line.

        ``records_new`` (default: ``records_read``) counts rows not already
        loaded; the zero-record alarm watches it.
        """
        self._counts = RunCounts(
            records_read=int(records_read),
            records_new=int(records_read if records_new is None else records_new),
            records_written=int(records_written),
            watermark_time=watermark_time,
            late_files_skipped=int(late_files_skipped),
            null_watermark_rows=int(null_watermark_rows),
            future_watermark_rows=int(future_watermark_rows),
            state_bytes=state_bytes,
            records_deleted=int(records_deleted),
            schema_changes=tuple(schema_changes),
        )
        self.details.update({key: jsonable(value) for key, value in details.items()})

    # -- internals ------------------------------------------------------------------------------

    def _finish_successfully(self) -> None:
        """Post-commit steps: a failure here is logged and counted, never a FAILED run."""
        counts = self._counts or RunCounts()
        lag = None
        if counts.watermark_time is not None:
            lag = self.started_at - counts.watermark_time.timestamp()
        published = False
        if self.publish_metrics and not self.dry_run:
            published = self._publish_metrics(counts, lag)
        self.details["metrics_published"] = published
        self.details["watermark_lag_seconds"] = None if lag is None else round(lag, 3)
        if self.glue_job is not None:
            self._commit_glue_job(self.glue_job)
        try:
            self._log_summary("SUCCEEDED")
        except Exception:  # the run committed; a summary that cannot be written must not undo that
            log.exception("run %s committed but its summary could not be logged", self.run_id)

    def _commit_glue_job(self, glue_job: GlueBookmarkJob) -> None:
        """awsglue's ``Job.commit()``: Glue's own bookmark, which these scripts never read.

        It runs after the DynamoDB commit, so a failure is logged and named in the summary
        (``glue_job_commit_error``) and the run stays SUCCEEDED.
        """
        try:
            glue_job.commit()
        except Exception as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            log.error(
                "GLUE JOB COMMIT FAILED for run %s of job %s: %s; the run's data and "
                "watermark are committed (Glue's own bookmark is not used by this job)",
                self.run_id,
                self.job_name,
                reason,
            )
            self.details["glue_job_commit_error"] = f"{type(error).__name__}: {reason}"

    def _publish_metrics(self, counts: RunCounts, lag: float | None) -> bool:
        try:
            run_metrics.publish(
                replace(
                    counts.metrics(self.job_name, lag),
                    release=self.release,
                    versions_opened=run_metrics.version_count(self.details, "versions_opened"),
                    versions_closed=run_metrics.version_count(self.details, "versions_closed"),
                ),
                namespace=self.metrics_namespace,
            )
            return True
        except Exception as error:  # after the commit: report loudly, keep SUCCEEDED
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            log.error(
                "METRIC PUBLISH FAILED for run %s of job %s (namespace %s): %s; "
                "the run's data and watermark are committed",
                self.run_id,
                self.job_name,
                self.metrics_namespace,
                reason,
            )
            print(f"error: metric publish failed: {reason}", file=sys.stderr, flush=True)
            self.details["metric_publish_error"] = f"{type(error).__name__}: {reason}"
            run_metrics.publish_failure(self.job_name, namespace=self.metrics_namespace)
            return False

    def _log_summary(self, status: str, error: str | None = None) -> None:
        line = RunSummary(
            job_name=self.job_name,
            state_name=str(self.state_name),
            run_id=self.run_id,
            status=status,
            bookmark_option=self.bookmark.option.value,
            dry_run=self.dry_run,
            old_watermark={
                slot: jsonable(state_digest(values))
                for slot, values in (self._started_from or self._previous).items()
            },
            committed=self.committed,
            duration_seconds=round(self.clock() - self.started_at, 3),
            counts=self._counts,
            details=self.details,
            error=error,
            release=self.release,
        ).line()
        self._line = line
        run_metrics.log_summary(line)


def run_script(main: Callable[[Sequence[str]], object], argv: Sequence[str] | None = None) -> None:
    """Run a job's ``main`` as a script: a failure prints one clear line first, then exits 1.

    stderr's first line is what on-call reads in the Glue console: ``error: <message>`` for
    the library's own errors (``GlueIncrementalError``, already one line naming what is
    wrong; nothing follows it), ``error: <Type>: <message's first line> (in <function> at
    <file>:<line>)`` for any other exception, naming the innermost frame of the script's own
    code (``script_error_line``); Python's traceback follows that line for whoever debugs it.
    Glue marks the run FAILED.
    """
    try:
        main(list(argv if argv is not None else sys.argv))
    except Exception as error:  # the process boundary: one line for on-call, then the trace
        if isinstance(error, GlueIncrementalError):
            print(f"error: {first_line(error)}", file=sys.stderr, flush=True)
        else:
            print(script_error_line(error), file=sys.stderr, flush=True)
            traceback.print_exc()
        raise SystemExit(1) from None


def _not_the_scripts(path: str) -> bool:
    """Whether a frame's file is the library's, Spark's or Python's own (not installed packages):
    the line names the innermost frame outside them, where the script raised or called."""
    path = os.path.abspath(path)
    if path.startswith(_LIBRARIES):
        return True
    return path.startswith(_STDLIB) and not any(
        part in ("site-packages", "dist-packages") for part in path.split(os.sep)
    )


_LIBRARIES = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (__file__, pyspark.__file__, py4j.__file__)
)
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def script_error_line(error: BaseException) -> str:
    """``error: ValueError: <first line> (in check_tiers at tiers.py:12)``: the exception's
    type, its message's first line (a Spark error's deepest Java cause) and where the
    script's own code raised it or called what raised it."""
    where = ""
    frames = traceback.extract_tb(error.__traceback__)
    own = [frame for frame in frames if not _not_the_scripts(frame.filename)]
    frame = (own or frames)[-1] if frames else None
    if frame is not None:
        where = f" (in {frame.name} at {os.path.basename(frame.filename)}:{frame.lineno})"
    text = first_line(error)
    kind = type(error).__name__
    message = text if text == kind else f"{kind}: {text}"
    return f"error: {message}{where}"
