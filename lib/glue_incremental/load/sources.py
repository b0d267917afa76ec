"""What a load reads: the ``Source`` interface, a JDBC table or a file dataset, by registry.

A source plans what is new since the stored state (``LoadState``), reads it, and says
which state it leaves (``SourcePlan.carried``); ``load/job.py`` merges the rows into the
target and commits. Planning writes nothing, so a dry run or a failed run leaves no
trace. Invariants: ``docs/targets-and-sources.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType, _parse_datatype_string

from glue_incremental.args import ArgumentError
from glue_incremental.engine import batch_plan
from glue_incremental.engine.jdbc_table import JdbcTableOptions, JdbcTableSource, jdbc_source
from glue_incremental.engine.source_plan import Source, SourcePlan
from glue_incremental.load.config import LoadConfig
from glue_incremental.run.context import IncrementalRun
from glue_incremental.run.state import LoadState
from glue_incremental.sources import (
    bulk,
    file_dataset,
    files,
    jdbc,
    partition_types,
    reading,
    snapshots,
)

# Delivery order of file rows, for ties (``targets.latest.merge_latest``); never written.
FILE_MODIFIED = "__glue_incremental_file_modified"
FILE_NAME = "__glue_incremental_file_name"
FILE_DELIVERY = (FILE_MODIFIED, FILE_NAME)
# Their types (Spark's ``_metadata`` columns), for a run that reads no file but merges.
DELIVERY_TYPES = {FILE_MODIFIED: "timestamp", FILE_NAME: "string"}
DELIVERY_SOURCES = {
    FILE_MODIFIED: "_metadata.file_modification_time",
    FILE_NAME: "_metadata.file_name",
}


def jdbc_table_options(config: LoadConfig) -> JdbcTableOptions:
    """The load's JDBC source options (``--source``, ``--source_table``, ...)."""
    return JdbcTableOptions(
        url=config.source,
        table=str(config.source_table),
        watermark_column=config.watermark_column,
        primary_key=tuple(config.primary_key),
        partition_by=tuple(config.partition_by),
        secret_id=config.source_secret_id,
        connection_name=config.connection_name,
        user=config.source_user,
        password=config.source_password,
        num_partitions=config.jdbc_num_partitions,
        partition_column=config.jdbc_partition_column,
        lookback=config.lookback,
        null_watermarks=config.null_watermarks,
    )


def source_keys(run: IncrementalRun, config: LoadConfig) -> DataFrame:
    """The source's primary keys and nothing else, the reconcile's read: the JDBC table's
    (``jdbc.key_query``), or the latest snapshot's (``--file_snapshots``, ``snapshots``)."""
    if not config.is_jdbc:
        previous = LoadState.from_state(run.previous())
        return snapshots.keys_of_latest(
            run.spark,
            config.source,
            config.primary_key,
            source_format=config.source_format,
            schema=declared_schema(config),
            partition_types=previous.partition_types if previous else None,
            delivery=DELIVERY_SOURCES,
        )
    return jdbc.read_keys(run.spark, jdbc_source(jdbc_table_options(config)), config.primary_key)


@dataclass(frozen=True)
class FileDatasetSource:
    """``--source`` a directory of files: new files by the file bookmark, found by listing,
    ordered S3 listing or S3 notifications (``--discovery``), as ``sources.file_dataset``
    plans them; this adds bounded batches, the delivery columns and the kept partition types."""

    config: LoadConfig

    @property
    def dataset(self) -> file_dataset.FileDataset:
        config = self.config
        return file_dataset.FileDataset(
            config.source, config.file_discovery, file_dataset.band_seconds(config.lookback)
        )

    def plan(
        self, run: IncrementalRun, limits: batch_plan.BatchLimits = batch_plan.UNBOUNDED
    ) -> SourcePlan:
        """The files new since the state; bounded, the first batch of them (``batches``)."""
        found = self._discover(run, None)
        cut: list[batch_plan.FileBatch] = []
        if limits.bounds_a_batch:
            previous = LoadState.from_state(run.previous())
            cut = batch_plan.file_batches(
                found.files, limits, after_ms=_file_bookmark(previous).high_mark_ms
            )
            if len(cut) > 1:
                # Planned again up to the batch's end: the bookmark then says exactly that.
                found.release()
                found = self._discover(run, cut[0].last_modified_ms)
        return self._plan(run, found, cut, limits)

    def _discover(self, run: IncrementalRun, end_ms: int | None) -> file_dataset.FileDatasetPlan:
        previous = LoadState.from_state(run.previous())
        upper_state = LoadState.from_state(run.upper_bound())
        upper_ms = _file_bookmark(upper_state).high_mark_ms if upper_state else None
        if end_ms is not None:
            upper_ms = end_ms if upper_ms is None else min(upper_ms, end_ms)
        return self.dataset.plan(
            run.spark,
            _file_bookmark(previous),
            previous.discovery if previous else None,
            run_start_ms=int(run.started_at * 1000),
            upper_bound_ms=upper_ms,
            force_full_listing=run.starts_from_an_earlier_state(),
        )

    def _plan(
        self,
        run: IncrementalRun,
        found: file_dataset.FileDatasetPlan,
        cut: list[batch_plan.FileBatch],
        limits: batch_plan.BatchLimits,
    ) -> SourcePlan:
        config = self.config
        declared = declared_schema(config)
        previous = LoadState.from_state(run.previous())
        plan = found.file_plan
        kept_types = previous.partition_types if previous else None
        types: dict[str, str] = dict(kept_types or {})

        def read() -> DataFrame | None:
            rows = bulk.read_listed_files(
                run.spark,
                plan.files,
                root_uri=config.source,
                source_format=config.source_format,
                schema=declared,
                partition_types=kept_types,
                columns=DELIVERY_SOURCES,
            )
            # Fixed on the first run (declared, or as inferred then) and never re-inferred.
            types.clear()
            if not declared:
                types.update(partition_types.kept_types(rows, plan.files, kept_types))
            if rows is None:
                return None
            return rows

        def misfit(schema: StructType | None) -> tuple[str | None, str] | None:
            against = schema or declared  # a stored type, else the declared schema
            if against is None:
                return None
            return reading.first_misfit(
                run.spark,
                plan.files,
                root_uri=config.source,
                source_format=config.source_format,
                schema=against,
            )

        preview = cut[: limits.max_batches or batch_plan.PREVIEW_BATCHES]
        return SourcePlan(
            summary={
                "source": "files",
                **found.summary(),
                **({"batches": [vars(batch) for batch in preview]} if cut else {}),
            },
            read=read,
            carried=LoadState(
                cursor=previous.cursor if previous else None,
                published_at_ms=0,
                files=plan.next_bookmark,
                discovery=found.next_state,
            ),
            details={"files_read": len(plan.files), "file_plan": found.summary()},
            delivery=FILE_DELIVERY,
            late_files=plan.late_file_count,
            file_high_mark_ms=plan.next_bookmark.high_mark_ms,
            # Notifications are deleted only once the state that makes them no-ops is committed.
            after_commit=lambda run: found.after_commit(run.bookmark.commits),
            release=found.release,
            partition_types=lambda: dict(types),
            more=len(cut) > 1,
            misfit=misfit,
        )


def _file_bookmark(state: LoadState | None) -> files.FileBookmark:
    """The state's file bookmark; the initial one without a state or before any file."""
    if state is None or state.files is None:
        return files.FileBookmark.initial()
    return state.files


def declared_schema(config: LoadConfig) -> StructType | None:
    """``--source_schema`` parsed (None when not given); bad DDL stops the run before any read."""
    if config.source_schema is None:
        return None
    try:
        schema = _parse_datatype_string(config.source_schema)
    except Exception as error:  # Spark's ParseException: its first line says where
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise ArgumentError(
            "source_schema", f"--source_schema is not a column list in Spark DDL: {first_line}"
        ) from None
    if not isinstance(schema, StructType):
        raise ArgumentError(
            "source_schema",
            f"--source_schema {config.source_schema!r} is one type, not columns "
            "(`name TYPE, name TYPE`)",
        )
    return schema


SOURCES: dict[str, Callable[[LoadConfig], Source]] = {
    "jdbc": lambda config: JdbcTableSource(jdbc_table_options(config)),
    "files": FileDatasetSource,
}


def build(config: LoadConfig) -> Source:
    """The source ``--source`` names: a ``jdbc:`` URL is a table, anything else files."""
    return SOURCES["jdbc" if config.is_jdbc else "files"](config)
