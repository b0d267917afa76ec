"""A custom job script's run: ``with incremental_job(sys.argv, ...) as job``.

The script's arguments are parsed and its declarations checked before the lease is taken;
the block is the engine's (``engine.job.CustomJob``). Guide: ``docs/custom-jobs.md``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from glue_incremental.custom.arguments import JobArguments
from glue_incremental.engine.declarations import Output, Source
from glue_incremental.engine.job import CustomJob
from glue_incremental.run.context import GlueJob


@contextlib.contextmanager
def incremental_job(
    argv: Sequence[str],
    arguments: JobArguments | None = None,
    *,
    sources: Mapping[str, Source],
    targets: Mapping[str, Output],
    spark: Any = None,
) -> Iterator[CustomJob]:
    """The run of a custom job: ``with incremental_job(sys.argv, ...) as job: ...``.

    Everything is validated before the lease is taken; ``job.summary`` is the summary
    line once the block has ended (also when it failed)."""
    arguments = arguments or JobArguments(())
    values = arguments.parse(argv)
    required, optional = arguments.split
    glue = GlueJob.from_argv(list(argv), required=required, optional=optional, spark=spark)
    job = CustomJob(values, dict(sources), dict(targets))
    with glue.run() as run, job.running(run):
        yield job
