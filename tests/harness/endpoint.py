"""The local AWS endpoint for tests: re-exported from ``glue_incremental_tools.localendpoint``.

The logic lives in the library so ``python -m glue_incremental demo`` can start
the same endpoint without importing from ``tests/``.
"""

from glue_incremental_tools.localendpoint import (
    DUMMY_ENV,
    MOTO_GAPS,
    Endpoint,
    fill_moto_gaps,
    free_port,
    localstack_answers,
    running_endpoint,
    use_dummy_credentials,
)

__all__ = [
    "DUMMY_ENV",
    "MOTO_GAPS",
    "Endpoint",
    "fill_moto_gaps",
    "free_port",
    "localstack_answers",
    "running_endpoint",
    "use_dummy_credentials",
]
