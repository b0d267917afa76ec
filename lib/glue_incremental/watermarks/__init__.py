"""The watermark store: per-job state in the DynamoDB table ``glue-watermarks``.

The latest committed state is one consistent read (``None`` on the first run); commits
are optimistic (``WatermarkConflict``, nothing written) and write state, history and run
pointer in one transaction; a run lease with a fencing token keeps a second or zombie run
from committing (``LeaseHeld``, ``LeaseLost``). Modules: ``keys`` (item layout),
``items`` (stored form), ``leases``, ``store`` (``Watermarks``), ``errors``.
Design: ``docs/watermarks-and-leases.md``.
"""

from glue_incremental.watermarks.encoding import InvalidWatermarkValue
from glue_incremental.watermarks.errors import (
    LeaseHeld,
    LeaseLost,
    UnknownJob,
    UnknownRun,
    WatermarkConflict,
    WatermarkError,
    WatermarkItemTooLarge,
    WatermarkStoreUnavailable,
    WatermarkTableMissing,
    WatermarkTableSchemaMismatch,
)
from glue_incremental.watermarks.items import ChangeKind, CommittedState, HistoryPage, WatermarkItem
from glue_incremental.watermarks.keys import (
    DEFAULT_SLOT,
    DEFAULT_TABLE,
    EXPIRES_ATTRIBUTE,
    HASH_KEY,
    HISTORY_RETENTION_DAYS,
    MAX_ITEM_BYTES,
    RANGE_KEY,
)
from glue_incremental.watermarks.leases import Lease
from glue_incremental.watermarks.store import Watermarks, create_table

__all__ = [
    "DEFAULT_SLOT",
    "DEFAULT_TABLE",
    "EXPIRES_ATTRIBUTE",
    "HASH_KEY",
    "HISTORY_RETENTION_DAYS",
    "MAX_ITEM_BYTES",
    "RANGE_KEY",
    "ChangeKind",
    "CommittedState",
    "HistoryPage",
    "InvalidWatermarkValue",
    "Lease",
    "LeaseHeld",
    "LeaseLost",
    "UnknownJob",
    "UnknownRun",
    "WatermarkConflict",
    "WatermarkError",
    "WatermarkItem",
    "WatermarkItemTooLarge",
    "WatermarkStoreUnavailable",
    "WatermarkTableMissing",
    "WatermarkTableSchemaMismatch",
    "Watermarks",
    "create_table",
]
