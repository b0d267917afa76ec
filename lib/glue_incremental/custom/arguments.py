"""A custom script's own arguments, declared once as ``Option``s (as the generic jobs do).

``JobArguments.parse`` is the script's parser: it needs no Spark and no AWS, so the
environment contract test and Terraform's checks parse a pipeline's arguments with it.
The common arguments (``--JOB_NAME``, ``--dry_run``, ``--job-bookmark-option``,
``--watermark_name``, ...) are accepted by every script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from glue_incremental.args import (
    COMMON_OPTIONS,
    Option,
    markdown_table,
    resolve_options,
    split_options,
    typed_values,
    validate_run_id,
)


@dataclass(frozen=True)
class JobArguments:
    """The script's declared options; ``parse(argv)`` validates them all before a run."""

    options: tuple[Option, ...]
    split: tuple[tuple[str, ...], dict[str, str | None]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # split_options also registers the table ``--help`` prints
        object.__setattr__(self, "split", split_options(self.options))

    def parse(self, argv: Sequence[str]) -> dict[str, Any]:
        """Typed values by field name, the common ones included (``JOB_NAME``, ``dry_run``...).

        Raises ``ArgumentError`` naming the first bad argument."""
        required, optional = self.split
        raw = resolve_options(list(argv), required, optional)
        validate_run_id(str(raw["JOB_RUN_ID"]))
        values: dict[str, Any] = {"JOB_NAME": raw["JOB_NAME"]}
        values.update(typed_values(COMMON_OPTIONS, raw))
        values.update(typed_values(self.options, raw))
        return values

    def table(self) -> str:
        """The Markdown argument table (script options first, then the common ones)."""
        return markdown_table([*self.options, *COMMON_OPTIONS])
