"""The session's local AWS for tests: LocalStack, DynamoDB Local and moto for Glue.

The starter lives in ``glue_incremental_tools.localendpoint`` because ``make demo``
starts the same trio and tools import nothing from ``tests/``.
"""

from glue_incremental_tools.localendpoint import (
    DUMMY_ENV,
    LocalAws,
    LocalAwsError,
    free_port,
    localstack_health,
    running_local_aws,
    use_dummy_credentials,
)

__all__ = [
    "DUMMY_ENV",
    "LocalAws",
    "LocalAwsError",
    "free_port",
    "localstack_health",
    "running_local_aws",
    "use_dummy_credentials",
]
