"""Job arguments the Glue way: ``--NAME value`` pairs, like ``getResolvedOptions``.

Each job declares its options once (``Option``: name, parser, default, help);
the same declarations give the parser, the typed config values and the docs'
argument table. Declared arguments are validated strictly. Glue's documented special
parameters (``--conf``, ``--scriptLocation``, ``--TempDir``, ``--enable-metrics``,
...; ``GLUE_SPECIAL_PARAMETERS``) reach the script too and are ignored. Any other
name that is close to a declared one (same letters up to case and ``-``/``_``,
or a small edit distance) is a typo and fails naming the intended argument:
``--dry-run true`` must never run for real. Other unknown snake_case names fail;
other unknown Glue-shaped names (upper case or hyphenated) are ignored, since
Glue adds its own.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from glue_incremental.errors import GlueIncrementalError

# How an S3 file source finds new files (sources/discovery.py), declared with the options.
DISCOVERY_MODES = ("listing", "notifications")
DEFAULT_FULL_LISTING_EVERY = 24


class ArgumentError(GlueIncrementalError, ValueError):
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


# Glue's legacy name of the bookmark option; awsglue's getResolvedOptions translates it
# position by position, and ``--job-bookmark-option`` wins when both are given.
CONTINUATION_OPTION = "continuation-option"
CONTINUATION_VALUES = {
    "continuation-enabled": BookmarkOption.ENABLE,
    "continuation-readonly": BookmarkOption.PAUSE,
    "continuation-ignore": BookmarkOption.DISABLE,
}


def legacy_bookmark_option(value: str) -> BookmarkOption:
    """The ``--job-bookmark-option`` a ``--continuation-option`` value means, as in Glue."""
    try:
        return CONTINUATION_VALUES[value]
    except KeyError:
        raise ArgumentError(
            CONTINUATION_OPTION,
            f"--{CONTINUATION_OPTION} {value!r} is not one of {', '.join(CONTINUATION_VALUES)}",
        ) from None


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
    continuation: str | None = None
    tokens = list(argv[1:])
    if "--help" in tokens or "-h" in tokens:
        print(usage(argv[0] if argv else "job.py", {*wanted, *declared}))
        raise SystemExit(0)
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
        elif name == CONTINUATION_OPTION:
            continuation = value
        elif name in GLUE_SPECIAL_PARAMETERS:
            continue
        else:
            intended = _intended(name, [*wanted, *declared])
            if intended is not None:
                raise ArgumentError(
                    intended, f"unknown argument --{name} (did you mean --{intended}?)"
                )
            if not _is_glue_shaped(name):
                raise ArgumentError(name, f"unknown argument --{name}")
    missing = [name for name in wanted if not values.get(name)]
    if missing:
        raise ArgumentError(
            missing[0],
            "missing required argument"
            + ("s " if len(missing) > 1 else " ")
            + ", ".join(f"--{name}" for name in missing),
        )
    if continuation is not None:
        legacy = legacy_bookmark_option(continuation)
        values.setdefault("job-bookmark-option", legacy.value)
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
    text = (value or "").strip()
    if not re.fullmatch(r"[0-9]{1,18}", text):
        raise ArgumentError(name, f"--{name} {value!r} is not a whole number")
    number = int(text)
    if number < 1:
        raise ArgumentError(name, f"--{name} must be at least 1, got {number}")
    return number


# Glue's documented job parameters ("Using job parameters in AWS Glue jobs"), and the
# ones Glue adds to every run. They reach the script and are not the job's business.
GLUE_SPECIAL_PARAMETERS = frozenset(
    {
        "JOB_ID",
        "SECURITY_CONFIGURATION",
        "TempDir",
        "RedshiftTempDir",
        "additional-python-modules",
        "python-modules-installer-option",
        "auto-scale-within-microbatch",
        "class",
        "conf",
        "continuous-log-conversionPattern",
        "continuous-log-logGroup",
        "continuous-log-logStreamPrefix",
        "custom-logGroup-prefix",
        "customer-driver-env-vars",
        "customer-executor-env-vars",
        "datalake-formats",
        "disable-proxy-v2",
        "enable-auto-scaling",
        "enable-continuous-cloudwatch-log",
        "enable-continuous-log-filter",
        "enable-glue-datacatalog",
        "enable-job-insights",
        "enable-lakeformation-fine-grained-access",
        "enable-metrics",
        "enable-observability-metrics",
        "enable-rename-algorithm-v2",
        "enable-s3-parquet-optimized-committer",
        "enable-spark-ui",
        "encryption-type",
        "executor-cores",
        "extra-files",
        "extra-jars",
        "extra-py-files",
        "job-language",
        "scriptLocation",
        "spark-event-logs-path",
        "use-postgres-driver",
        "user-jars-first",
    }
)


def _normalised(name: str) -> str:
    return name.lower().replace("-", "_")


def _intended(name: str, declared: Iterable[str]) -> str | None:
    """The declared name ``name`` is a misspelling of, or None when it is not close to any."""
    names = list(dict.fromkeys(declared))
    for candidate in names:
        if _normalised(candidate) == _normalised(name):
            return candidate
    by_normal = {_normalised(candidate): candidate for candidate in names}
    close = difflib.get_close_matches(_normalised(name), list(by_normal), n=1, cutoff=0.8)
    if close:
        return by_normal[close[0]]
    for candidate in names:
        if _edit_distance(_normalised(name), _normalised(candidate)) <= 2:
            return candidate
    return None


def _edit_distance(left: str, right: str) -> int:
    if abs(len(left) - len(right)) > 2:
        return 3
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, 1):
        current = [i]
        for j, b in enumerate(right, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def _is_glue_shaped(name: str) -> bool:
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


MAX_DURATION = timedelta(days=3650)


def parse_duration(name: str, value: str | None) -> timedelta:
    """``"2 hours"``, ``"90 minutes"``, ``"15m"``, ``"3600"`` (bare seconds), ``"0"``.

    A non-negative duration of at most ``MAX_DURATION``; anything else raises
    ArgumentError naming the argument.
    """
    text = (value or "0").strip().lower()
    if text in {"0", "none", ""}:
        return timedelta(0)
    match = re.fullmatch(r"(\d{1,15}(?:\.\d{1,9})?)\s*([a-z]*)", text)
    if not match or (match.group(2) and match.group(2) not in _UNITS):
        raise ArgumentError(
            name,
            f"--{name} {value!r} is not a duration such as '2 hours', '30 minutes' or '900' (seconds)",
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds > MAX_DURATION.total_seconds():
        raise ArgumentError(
            name, f"--{name} {value!r} is longer than {MAX_DURATION.days} days: not a lookback"
        )
    return timedelta(seconds=seconds)


def parse_text(name: str, value: str | None) -> str | None:
    """The value as given; an empty string is no value."""
    return value if value else None


def parse_optional_path(name: str, value: str | None) -> str:
    """A path that only some configurations need: the value as given, or ``""``."""
    return value or ""


def choice(*allowed: str) -> Callable[[str, str | None], str]:
    """A parser accepting one of ``allowed`` (case-insensitive)."""

    def parse(name: str, value: str | None) -> str:
        lowered = (value or "").strip().lower()
        if lowered not in allowed:
            raise ArgumentError(name, f"--{name} {value!r} is not one of {', '.join(allowed)}")
        return lowered

    return parse


def list_of_names(name: str, value: str | None) -> tuple[str, ...]:
    return parse_list(name, value)


def required_list(name: str, value: str | None) -> tuple[str, ...]:
    return parse_list(name, value, required=True)


@dataclass(frozen=True)
class Option:
    """One job argument, declared once: parser, default and help for the docs' table.

    ``attribute`` is the config field it fills (default: the name with ``-`` as
    ``_``); ``parse(name, raw)`` returns the typed value or raises ArgumentError.
    """

    name: str
    help: str
    default: str | None = None
    parse: Callable[[str, str | None], object] = parse_text
    required: bool = False
    attribute: str | None = None

    @property
    def field(self) -> str:
        return self.attribute or self.name.replace("-", "_")


COMMON_OPTIONS: tuple[Option, ...] = (
    Option("JOB_RUN_ID", "Set by Glue; generated (`local_<hex>`) when running locally."),
    Option(
        "job-bookmark-option",
        "As in Glue: `job-bookmark-enable` (default), `-disable` (full reload, no commit) "
        "or `-pause` (no commit).",
        BookmarkOption.ENABLE.value,
    ),
    Option(
        "job-bookmark-from",
        "With `-pause`, together with `--job-bookmark-to`: replay from this run's state.",
    ),
    Option(
        "job-bookmark-to",
        "With `-pause`, together with `--job-bookmark-from`: replay up to this run's state.",
    ),
    Option("watermarks_table", "The watermark store (non-overridable on Glue).", "glue-watermarks"),
    Option(
        "watermark_name",
        "The logical state name (default: the job name); it survives renaming or recreating the job.",
    ),
    Option(
        "lease_seconds",
        "The run lease in seconds (non-overridable), renewed in the background.",
        "900",
        parse_positive_int,
    ),
    Option(
        "metrics_namespace",
        "CloudWatch namespace of the run metrics (non-overridable; default `GlueIncremental`).",
    ),
    Option(
        "release",
        "The release the job runs (set by Terraform or `deploy switch`); named by the summary "
        "line and the `Runs` metric.",
    ),
    Option(
        "dry_run",
        "`true`: print what the run would read and write nothing.",
        "false",
        parse_bool,
    ),
)

# File sources on S3 (load and join): how a run finds its files (``sources.discovery``).
DISCOVERY_OPTIONS: tuple[Option, ...] = (
    Option(
        "discovery",
        "Files on S3: `listing` (only partitions from the newest ones on, for `key=value` layouts "
        "sorting in time order) or `notifications` (S3 events from `--notification_queue_url`).",
        "listing",
        choice(*DISCOVERY_MODES),
    ),
    Option(
        "notification_queue_url",
        "With `--discovery notifications`: the SQS queue receiving the source's S3 events "
        "(Terraform: `notifications = true`). Messages are deleted after the commit.",
    ),
    Option(
        "full_listing_every",
        "Files on S3: every Nth run lists the whole source, finding files that landed in old "
        "partitions (`files_found_by_full_listing`); `1`: always.",
        str(DEFAULT_FULL_LISTING_EVERY),
        parse_positive_int,
    ),
)

COMMON_OPTIONAL: Mapping[str, str | None] = {
    option.name: option.default for option in COMMON_OPTIONS
}


# Every job's declared options, as split_options saw them: --help prints the job's table.
_JOB_OPTIONS: list[tuple[Option, ...]] = []


def usage(script: str, names: Iterable[str]) -> str:
    """``--help``: the argument table of the job declaring ``names`` (the docs' table)."""
    names = set(names)
    declared = [opts for opts in _JOB_OPTIONS if {o.name for o in opts} <= names]
    options = max(declared, key=len, default=())
    return f"usage: {script} --JOB_NAME NAME --argument value ...\n\n" + markdown_table(
        [*options, *COMMON_OPTIONS]
    )


def split_options(options: Sequence[Option]) -> tuple[tuple[str, ...], dict[str, str | None]]:
    """``(required names, optional name -> default)`` for ``resolve_options``."""
    _JOB_OPTIONS.append(tuple(options))
    required = tuple(option.name for option in options if option.required)
    optional = {option.name: option.default for option in options if not option.required}
    return required, optional


def typed_values(options: Sequence[Option], args: Mapping[str, str | None]) -> dict[str, Any]:
    """Each option's parsed value, keyed by its config field."""
    return {option.field: option.parse(option.name, args.get(option.name)) for option in options}


def markdown_table(options: Sequence[Option]) -> str:
    """The docs' argument table for ``options`` (generated, never edited by hand)."""
    lines = ["| argument | default | meaning |", "|---|---|---|"]
    for option in options:
        default = (
            "required"
            if option.required
            else (f"`{option.default}`" if option.default not in (None, "") else "")
        )
        text = option.help.replace("|", "\\|")
        lines.append(f"| `--{option.name}` | {default} | {text} |")
    return "\n".join(lines) + "\n"


# Run ids go into staging paths: one safe path segment, never ``..`` or a separator.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")


def validate_run_id(run_id: str) -> str:
    """``run_id`` if it is one safe path segment, else ArgumentError naming it."""
    if not _RUN_ID.fullmatch(run_id or "") or ".." in run_id:
        raise ArgumentError(
            "JOB_RUN_ID",
            f"--JOB_RUN_ID {run_id!r} is not a valid run id "
            "(letters, digits, '_', '-', '.'; no '..' or '/')",
        )
    return run_id
