"""The public API for custom job scripts: the generic jobs' guarantees around your own logic.

Declare the datasets read incrementally (``Dataset``, or ``JdbcTable`` by watermark column:
one state slot each), the small tables read whole (``Reference``, ``JdbcReference``) and the targets (``parquet``/``iceberg``); inside
``with incremental_job(...) as job`` read ``job.increment``/``job.affected_partitions``/
``job.read_partitions`` and write each target once (``job.write`` by key, every version
with ``history=History(...)``; ``job.replace_partitions`` by partitions). A clean exit
commits every slot in one transaction; an exception commits nothing. Guide: ``docs/custom-jobs.md``.
"""

from glue_incremental.args import Option, choice
from glue_incremental.custom.arguments import JobArguments
from glue_incremental.custom.jdbc_arguments import jdbc_options, jdbc_reference, jdbc_table
from glue_incremental.custom.script import incremental_job
from glue_incremental.custom.tables import JdbcReference, JdbcTable
from glue_incremental.engine.declarations import Dataset, Output, Reference, iceberg, parquet
from glue_incremental.engine.errors import (
    DeclarationError,
    NoSchemaYet,
    NothingWritten,
    ScriptExited,
    UndeclaredName,
    WrittenTwice,
)
from glue_incremental.engine.history import History
from glue_incremental.engine.job import CustomJob
from glue_incremental.run.context import run_script

__all__ = [
    "CustomJob",
    "Dataset",
    "DeclarationError",
    "History",
    "JdbcReference",
    "JdbcTable",
    "JobArguments",
    "NoSchemaYet",
    "NothingWritten",
    "Option",
    "Output",
    "Reference",
    "ScriptExited",
    "UndeclaredName",
    "WrittenTwice",
    "choice",
    "iceberg",
    "incremental_job",
    "jdbc_options",
    "jdbc_reference",
    "jdbc_table",
    "parquet",
    "run_script",
]
