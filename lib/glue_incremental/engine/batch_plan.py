"""Bounded batches: a backlog split into batches, each committed with its own watermark.

Pure planning, no Spark and no I/O. Files are cut in discovery order (modification
time, then URI) by count (``--max_batch_files``) or bytes (``--max_batch_bytes``);
JDBC rows by a watermark range holding at most ``--max_batch_rows`` rows after the
cursor. A cut never splits one modification time or one watermark value: all files
(rows) sharing the batch's last one are in the batch, so a batch may exceed its bound
by those ties, and every batch holds at least one. ``--max_batches_per_run`` ends a
run (SUCCEEDED) after that many batches; the next run continues the backlog.
Design: ``docs/bounded-batches.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from glue_incremental.args import ArgumentError, Option, parse_positive_int
from glue_incremental.sources.jdbc import JdbcSource, literal, quote_identifier, quote_table


def parse_optional_positive_int(name: str, value: str | None) -> int | None:
    """None when not given (no bound), else a whole number >= 1."""
    if value is None or not value.strip():
        return None
    return parse_positive_int(name, value)


BATCH_OPTIONS: tuple[Option, ...] = (
    Option(
        "max_batch_files",
        "Files: at most this many files per batch, in discovery order (files sharing one "
        "modification time stay together). Each batch is merged and committed before the next.",
        parse=parse_optional_positive_int,
    ),
    Option(
        "max_batch_bytes",
        "Files: at most this many bytes per batch (a larger file is a batch of its own).",
        parse=parse_optional_positive_int,
    ),
    Option(
        "max_batch_rows",
        "JDBC: at most this many rows after the cursor per batch, as a watermark range "
        "(rows sharing the last watermark stay together).",
        parse=parse_optional_positive_int,
    ),
    Option(
        "max_batches_per_run",
        "Batches one run commits at most; the run then ends SUCCEEDED and the next run "
        "continues the backlog. Needs a `--max_batch_*` bound.",
        parse=parse_optional_positive_int,
    ),
)


@dataclass(frozen=True)
class BatchLimits:
    """What bounds one batch and one run; all None: one unbounded batch (today's runs)."""

    max_files: int | None = None
    max_bytes: int | None = None
    max_rows: int | None = None
    max_batches: int | None = None

    def __post_init__(self) -> None:
        for name, value in (
            ("max_batch_files", self.max_files),
            ("max_batch_bytes", self.max_bytes),
            ("max_batch_rows", self.max_rows),
            ("max_batches_per_run", self.max_batches),
        ):
            if value is not None and (isinstance(value, bool) or int(value) < 1):
                raise ArgumentError(name, f"--{name} must be at least 1, got {value!r}")
        if self.max_batches is not None and not self.bounds_a_batch:
            raise ArgumentError(
                "max_batches_per_run",
                "--max_batches_per_run needs a batch bound: --max_batch_files or "
                "--max_batch_bytes (files), --max_batch_rows (JDBC)",
            )

    @property
    def bounds_a_batch(self) -> bool:
        return any(v is not None for v in (self.max_files, self.max_bytes, self.max_rows))

    def check_source(self, *, is_jdbc: bool, discovery: str) -> None:
        """A bound the source cannot honour is a one-line ArgumentError."""
        if is_jdbc and (self.max_files is not None or self.max_bytes is not None):
            name = "max_batch_files" if self.max_files is not None else "max_batch_bytes"
            raise ArgumentError(
                name, f"--{name} bounds file sources; a JDBC source is bounded by --max_batch_rows"
            )
        if not is_jdbc and self.max_rows is not None:
            raise ArgumentError(
                "max_batch_rows",
                "--max_batch_rows bounds JDBC sources; bound a file source by "
                "--max_batch_files or --max_batch_bytes",
            )
        if not is_jdbc and discovery == "notifications" and self.bounds_a_batch:
            raise ArgumentError(
                "discovery",
                "--discovery notifications cannot be batched (a batch's commit would delete "
                "the messages of files left for later batches): use listing or ordered discovery",
            )

    def allows_another(self, batches_done: int) -> bool:
        return self.max_batches is None or batches_done < self.max_batches


UNBOUNDED = BatchLimits()
# At most this many batches listed by a dry run without --max_batches_per_run.
PREVIEW_BATCHES = 100


class ListedFile(Protocol):
    """What a file cut needs (``sources.listing.SourceFile`` is one)."""

    @property
    def modified_ms(self) -> int: ...

    @property
    def size(self) -> int: ...


@dataclass(frozen=True)
class FileBatch:
    """One batch of files: how many, their bytes, and the modification time it ends at."""

    files: int
    bytes: int
    last_modified_ms: int


def file_batches(
    files: Sequence[ListedFile], limits: BatchLimits, *, after_ms: int | None = None
) -> list[FileBatch]:
    """``files`` (sorted by modification time, then URI) split into batches.

    A batch closes before the file that would take it past a bound, unless that file
    shares the batch's last modification time (never split), the batch is empty, or the
    batch ends at or before ``after_ms`` (the bookmark's high mark: files up to it are
    late ones of its band, read together so the band's fingerprints stay whole).
    Without a file bound: one batch (none when there are no files).
    """
    batches: list[FileBatch] = []
    count = size = 0
    last: int | None = None
    for source in files:
        over = (limits.max_files is not None and count + 1 > limits.max_files) or (
            limits.max_bytes is not None and size + source.size > limits.max_bytes
        )
        closes = count and over and source.modified_ms != last
        if closes and last is not None and (after_ms is None or source.modified_ms > after_ms):
            batches.append(FileBatch(count, size, last))
            count = size = 0
        count += 1
        size += source.size
        last = source.modified_ms
    if count:
        assert last is not None
        batches.append(FileBatch(count, size, last))
    return batches


def first_file_cut(files: Sequence[ListedFile], limits: BatchLimits) -> int | None:
    """The modification time the first batch ends at, or None when every file fits in it."""
    batches = file_batches(files, limits)
    return batches[0].last_modified_ms if len(batches) > 1 else None


def batch_end_query(
    source: JdbcSource, *, watermark_column: str, after: Any | None, max_rows: int
) -> str:
    """The SELECT returning the watermark the next row batch ends at (no row: no bound).

    It is the ``max_rows``-th smallest non-null watermark strictly after ``after`` (the
    committed cursor; None on a first run), sorted and cut by the database. The batch
    then reads up to and including it, so rows tied with it are never split and each
    batch moves the cursor forward.
    """
    column = quote_identifier(watermark_column)
    condition = f"{column} IS NOT NULL"
    if after is not None:
        condition = f"{column} > {literal(after, subprotocol=source.subprotocol)}"
    return (
        f'SELECT {column} AS "batch_end" FROM {quote_table(source.table)} '
        f"WHERE {condition} ORDER BY {column} LIMIT 1 OFFSET {int(max_rows) - 1}"
    )


def rows_after_query(source: JdbcSource, *, watermark_column: str, after: Any) -> str:
    """The SELECT returning one watermark strictly after ``after`` (a batch's end), or no
    row: whether another batch follows, so a run ends on its last batch, not one past it."""
    column = quote_identifier(watermark_column)
    return (
        f'SELECT {column} AS "next_watermark" FROM {quote_table(source.table)} '
        f"WHERE {column} > {literal(after, subprotocol=source.subprotocol)} LIMIT 1"
    )


def row_batch_ends(
    next_end: Callable[[Any | None], Any | None], cursor: Any | None, most: int
) -> list[Any]:
    """The watermarks successive row batches end at, from ``cursor``, at most ``most``.

    ``next_end(after)`` is one ``batch_end_query``; the last batch (no end) is not listed.
    """
    ends: list[Any] = []
    after = cursor
    while len(ends) < most:
        end = next_end(after)
        if end is None:
            break
        ends.append(end)
        after = end
    return ends
