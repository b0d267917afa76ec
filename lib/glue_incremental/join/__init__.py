"""The incremental join: recompute only the output partitions either side changed.

Rows join only within the same partition, so recomputing output partition P from both
sides' full P equals a full recompute restricted to P. Both sides' bookmarks commit in
one transaction; a side written by an upstream job of this platform is read only as far
as that job committed. Modules: ``spec`` (pure: spec, checks, partition arithmetic, the
per-partition join), ``config`` (options), ``upstream`` (the upstream rule), ``sides``
(reading each side), ``job`` (one run). Design: ``docs/incremental-join.md``.
"""

from glue_incremental.engine.upstream import UpstreamChanged, UpstreamContractError
from glue_incremental.join.config import (
    JOIN_OPTIONS,
    OPTIONAL_ARGS,
    PARTITION_TYPES,
    REQUIRED_ARGS,
    SOURCE_FORMATS,
    TARGET_FORMATS,
    JoinJobConfig,
)
from glue_incremental.join.job import main, run_join
from glue_incremental.join.spec import (
    JOIN_TYPES,
    SIDES,
    JoinInputError,
    JoinLayout,
    JoinSpec,
    JoinSpecError,
    JoinType,
    join_partitions,
    validate_sides,
)

__all__ = [
    "JOIN_OPTIONS",
    "JOIN_TYPES",
    "OPTIONAL_ARGS",
    "PARTITION_TYPES",
    "REQUIRED_ARGS",
    "SIDES",
    "SOURCE_FORMATS",
    "TARGET_FORMATS",
    "JoinInputError",
    "JoinJobConfig",
    "JoinLayout",
    "JoinSpec",
    "JoinSpecError",
    "JoinType",
    "UpstreamChanged",
    "UpstreamContractError",
    "join_partitions",
    "main",
    "run_join",
    "validate_sides",
]
