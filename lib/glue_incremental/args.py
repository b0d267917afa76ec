"""Job arguments the Glue way: ``--NAME value`` pairs, like ``getResolvedOptions``.

Glue passes its own arguments to every script (``--JOB_ID``, ``--TempDir``,
``--enable-metrics``, ...). Those are recognised by their shape (upper case or
containing a hyphen) and ignored; a lower-case ``--snake_case`` argument the job
does not declare is a typo and fails with a suggestion.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from enum import StrEnum


class ArgumentError(ValueError):
    """A missing, unknown or invalid job argument; ``name`` is the argument."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class BookmarkOption(StrEnum):
    """Glue's ``--job-bookmark-option`` values, mirrored by the watermark store."""

    ENABLE = "job-bookmark-enable"
    DISABLE = "job-bookmark-disable"
    PAUSE = "job-bookmark-pause"

    @classmethod
    def parse(cls, value: str) -> BookmarkOption:
        try:
            return cls(value)
        except ValueError:
            raise ArgumentError(
                "job-bookmark-option",
                f"--job-bookmark-option {value!r} is not one of "
                + ", ".join(option.value for option in cls),
            ) from None


COMMON_OPTIONAL: Mapping[str, str | None] = {
    "JOB_RUN_ID": None,
    "job-bookmark-option": BookmarkOption.ENABLE.value,
    "job-bookmark-from": None,
    "job-bookmark-to": None,
    "watermarks_table": "glue-watermarks",
    "watermark_name": None,
    "lease_seconds": "900",
    "metrics_namespace": None,
    "dry_run": "false",
}


def resolve_options(
    argv: Sequence[str],
    required: Sequence[str],
    optional: Mapping[str, str | None] | None = None,
) -> dict[str, str | None]:
    """Parse ``argv`` (``sys.argv``; element 0 is the script) into a dict.

    ``required`` names must be present; ``optional`` maps names to defaults.
    ``JOB_NAME`` is always required and ``JOB_RUN_ID`` generated when absent
    (``local_<hex>``), so every script runs locally unchanged.
    """
    declared = {**COMMON_OPTIONAL, **(optional or {})}
    wanted = ["JOB_NAME", *[name for name in required if name != "JOB_NAME"]]
    values: dict[str, str | None] = {}
    tokens = list(argv[1:])
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--"):
            raise ArgumentError(
                token, f"unexpected argument {token!r}: arguments come as --name value"
            )
        name, has_equals, inline = token[2:].partition("=")
        if has_equals:
            value = inline
            index += 1
        elif index + 1 < len(tokens) and not tokens[index + 1].startswith("--"):
            value = tokens[index + 1]
            index += 2
        else:
            value = "true"  # a bare flag, as Glue passes some
            index += 1
        if name in declared or name in wanted:
            values[name] = value
        elif _is_glue_reserved(name):
            continue
        else:
            close = difflib.get_close_matches(name, [*wanted, *declared], n=1)
            hint = f" (did you mean --{close[0]}?)" if close else ""
            raise ArgumentError(name, f"unknown argument --{name}{hint}")
    missing = [name for name in wanted if not values.get(name)]
    if missing:
        raise ArgumentError(
            missing[0],
            "missing required argument"
            + ("s " if len(missing) > 1 else " ")
            + ", ".join(f"--{name}" for name in missing),
        )
    for name, default in declared.items():
        values.setdefault(name, default)
    if not values.get("JOB_RUN_ID"):
        values["JOB_RUN_ID"] = f"local_{uuid.uuid4().hex}"
    return values


def parse_bool(name: str, value: str | None) -> bool:
    lowered = (value or "false").strip().lower()
    if lowered in {"true", "1", "yes"}:
        return True
    if lowered in {"false", "0", "no", ""}:
        return False
    raise ArgumentError(name, f"--{name} {value!r} is not a boolean (true or false)")


def parse_list(name: str, value: str | None, *, required: bool = False) -> tuple[str, ...]:
    items = tuple(item.strip() for item in (value or "").split(",") if item.strip())
    if required and not items:
        raise ArgumentError(name, f"--{name} needs at least one comma-separated name")
    if len(set(items)) != len(items):
        raise ArgumentError(name, f"--{name} names a column twice: {value!r}")
    return items


def parse_positive_int(name: str, value: str | None) -> int:
    try:
        number = int(value or "")
    except ValueError:
        raise ArgumentError(name, f"--{name} {value!r} is not a whole number") from None
    if number < 1:
        raise ArgumentError(name, f"--{name} must be at least 1, got {number}")
    return number


def _is_glue_reserved(name: str) -> bool:
    return "-" in name or name[:1].isupper()


_UNITS = {
    "second": 1,
    "seconds": 1,
    "sec": 1,
    "secs": 1,
    "s": 1,
    "minute": 60,
    "minutes": 60,
    "min": 60,
    "mins": 60,
    "m": 60,
    "hour": 3600,
    "hours": 3600,
    "h": 3600,
    "day": 86400,
    "days": 86400,
    "d": 86400,
}


def parse_duration(name: str, value: str | None) -> timedelta:
    """``"2 hours"``, ``"90 minutes"``, ``"15m"``, ``"0"``: a non-negative duration."""
    text = (value or "0").strip().lower()
    if text in {"0", "none", ""}:
        return timedelta(0)
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
    if not match or match.group(2) not in _UNITS:
        raise ArgumentError(
            name,
            f"--{name} {value!r} is not a duration such as '2 hours', '30 minutes' or '900 seconds'",
        )
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])
