"""The base of every domain error of the library: what a user, an operator or the data got wrong.

A ``GlueIncrementalError`` is said in one line naming the offending value (each subclass
keeps it as an attribute); the CLI and ``run.context.run_script`` print that line. Anything
else that escapes is a bug and keeps its traceback. Subclasses keep their historical
second base (``ValueError``, ``LookupError``, ``RuntimeError``) so callers catching those
still do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class GlueIncrementalError(Exception):
    """Base class of the library's domain errors."""


def first_line(error: BaseException) -> str:
    """The line on-call reads of ``error``: the first line of its message. An error raised in
    the JVM (py4j's ``Py4JJavaError``) says only "An error occurred while calling
    o173.collectToPython." there: its deepest Java cause's first line names what failed
    instead (a source file gone since its read was planned, say)."""
    java = getattr(error, "java_exception", None)
    if java is not None:
        try:
            cause = java
            while cause.getCause() is not None:
                cause = cause.getCause()
            text = str(cause.toString()).strip()
        except Exception:  # the JVM gone: the Python message is all there is
            text = ""
        if text:
            return text.splitlines()[0]
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__


# The prefix of the columns the library adds to a read (delivery order, delete flags):
# never the user's, so never listed in an error.
INTERNAL_PREFIX = "__glue_incremental_"


def user_columns(names: Iterable[str]) -> list[str]:
    """``names`` sorted, without the library's internal ``__glue_incremental_*`` columns."""
    return sorted(name for name in names if not name.startswith(INTERNAL_PREFIX))


class InvalidName(GlueIncrementalError, ValueError):
    """A job, slot or table name the watermark store cannot use; ``value`` is the name."""

    def __init__(self, what: str, value: object, message: str) -> None:
        self.what, self.value = what, value
        super().__init__(message)


class UnreadableState(GlueIncrementalError, ValueError):
    """A stored watermark this library cannot decode; ``text`` is the start of it."""

    def __init__(self, text: str, message: str) -> None:
        self.text = text
        super().__init__(message)


class NoSnapshotOfRun(GlueIncrementalError, LookupError):
    """An Iceberg table has no snapshot written by run ``run_id``."""

    def __init__(self, table: str, run_id: str) -> None:
        self.table, self.run_id = table, run_id
        super().__init__(f"Iceberg table {table} has no snapshot of run {run_id!r}")


def _first_few(directories: Sequence[str]) -> str:
    """The first three directories, and how many more: a refusal stays one short line."""
    more = f" and {len(directories) - 3} more" if len(directories) > 3 else ""
    return ", ".join(directories[:3]) + more


class HiddenPartitionValues(GlueIncrementalError, ValueError):
    """Rows whose partition directory Spark's file index skips (``directories``): never read."""

    def __init__(self, directories: Sequence[str]) -> None:
        self.directories = list(directories)
        super().__init__(
            f"partition values no reader would see: {_first_few(directories)} (Spark "
            "skips a directory named like a file being copied, ending in ._COPYING_ or "
            "_$folder$); nothing was written"
        )


class RowsOutsidePartitions(GlueIncrementalError, ValueError):
    """Rows given to replace exactly some partitions fall in others (``directories``)."""

    def __init__(self, directories: Sequence[str]) -> None:
        self.directories = list(directories)
        super().__init__(
            f"rows outside the partitions named to replace: {_first_few(directories)}; "
            "nothing was written (a script's rows must stay within the partitions it names)"
        )
