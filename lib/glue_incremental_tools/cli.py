"""Command line: ``python -m glue_incremental <group> <command> ...``.

Command groups are registered in ``COMMAND_GROUPS`` as ``(name, register)``
pairs. ``register`` is a function ``register(subparsers)`` that adds the
group's parser to the top-level subparsers, or a string
``"package.module:function"`` imported when the parser is built (the group
modules import this one, so they cannot be imported at its top). Register
modules should keep their top-level imports light: every group is registered
on every invocation.

Each command's parser sets ``handler``, a function ``handler(args) -> int |
None`` (None means exit code 0). Expected failures (``CommandError``, watermark
store errors, bad values, AWS errors) print one line ``error: ...`` on stderr
and exit with code 2, without a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from glue_incremental_tools.errors import CommandError

PROG = "python -m glue_incremental"
TABLE_ENV = "GLUE_WATERMARKS_TABLE"
EXIT_ERROR = 2

RegisterFn = Callable[[Any], None]

# Groups in the order they appear in --help. Append ("name", "module:function").
COMMAND_GROUPS: list[tuple[str, RegisterFn | str]] = [
    ("watermarks", "glue_incremental_tools.cli:register_watermarks"),
    ("deploy", "glue_incremental_tools.deploy:register"),
    ("run", "glue_incremental_tools.runner:register"),
    ("demo", "glue_incremental_tools.demo:register"),
    ("status", "glue_incremental_tools.status:register"),
    ("up", "glue_incremental_tools.stack:register"),
    ("apply", "glue_incremental_tools.stack_process:register"),
    ("target", "glue_incremental_tools.target_view:register"),
    ("runs", "glue_incremental_tools.run_history:register_runs"),
    ("logs", "glue_incremental_tools.run_history:register_logs"),
    ("pages", "glue_incremental_tools.pages:register_pages"),
    ("env", "glue_incremental_tools.pages:register_env"),
]


# -- parser and dispatch ---------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """argparse, with every usage error one line naming the wrong thing, and a did-you-mean."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        # The innermost parser returns first: it is the command the options belong to.
        if getattr(parsed, "command_parser", None) is None:
            parsed.command_parser = self
        return parsed, extras

    def error(self, message: str) -> Any:
        choices = [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]
        if "invalid choice" in message and choices:
            wrong = message.split("invalid choice: ", 1)[1].split(" (choose", 1)[0].strip("'")
            message = f"unknown command {wrong!r}{_did_you_mean(wrong, choices)}: " + (
                f"commands are {', '.join(choices)}"
            )
        print(f"error: {self.prog}: {message}", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)

    def unknown_options(self, extras: Sequence[str]) -> str:
        """The one-line error for arguments this command does not take."""
        first = extras[0]
        known = sorted(self._option_string_actions)
        what = "option" if first.startswith("-") else "argument"
        return (
            f"{self.prog}: unknown {what} {first.split('=', 1)[0]!r}"
            f"{_did_you_mean(first.split('=', 1)[0], known)}"
            f" (see {self.prog} --help)"
        )


def _did_you_mean(wrong: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(wrong, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Safe incremental loading for AWS Glue jobs.",
    )
    subparsers = parser.add_subparsers(dest="group", metavar="COMMAND")
    for name, register in COMMAND_GROUPS:
        _register_group(subparsers, name, register)
    parser.set_defaults(handler=None, group_parser=parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 2 error)."""
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exit_:  # usage errors and --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    if extras:
        command = getattr(args, "command_parser", None)
        if not isinstance(command, Parser):
            command = parser
        print(f"error: {command.unknown_options(extras)}", file=sys.stderr)
        return EXIT_ERROR
    if args.handler is None:
        args.group_parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return args.handler(args) or 0
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except _expected_errors() as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return EXIT_ERROR


def _expected_errors() -> tuple[type[BaseException], ...]:
    from glue_incremental.errors import GlueIncrementalError

    # The library's domain errors (watermark store, bad names and values, unreadable stored
    # state, arguments) share one base; any other exception is a bug and keeps its traceback.
    return (CommandError, GlueIncrementalError, ClientError, BotoCoreError)


def _one_line(error: BaseException) -> str:
    if isinstance(error, EndpointConnectionError):
        return _unreachable(str(error.kwargs.get("endpoint_url") or ""))
    return " ".join(str(error).split()) or type(error).__name__


# The services the tools call, with the variable that routes each to an endpoint.
_SERVICES = {
    "glue": "the Glue API",
    "dynamodb": "DynamoDB (the watermarks table)",
    "s3": "S3",
    "cloudwatch": "CloudWatch",
    "events": "EventBridge",
    "sts": "STS",
}


def _unreachable(url: str) -> str:
    """Which service could not be reached, at which endpoint, and what routes it there."""
    from glue_incremental import aws

    for service, what in _SERVICES.items():
        routed = aws.endpoint_url(service)
        if routed and url.rstrip("/").startswith(routed.rstrip("/")):
            specific = f"AWS_ENDPOINT_URL_{service.upper()}"
            variable = specific if os.environ.get(specific) else "AWS_ENDPOINT_URL"
            return (
                f"cannot reach {what} at {url} ({variable}): start the local stack with "
                "`make up`, or unset the AWS_ENDPOINT_URL variables to use AWS"
            )
    return f"cannot reach {url or 'the AWS endpoint'}: check the network, region and credentials"


def _register_group(subparsers: Any, name: str, register: RegisterFn | str) -> None:
    if callable(register):
        register(subparsers)
        return
    module_name, _, function_name = register.partition(":")
    getattr(importlib.import_module(module_name), function_name or "register")(subparsers)


# -- watermarks -------------------------------------------------------------------------------


def register_watermarks(subparsers: Any) -> None:
    """Add ``watermarks`` (show, history, set, reset, rewind, create-table)."""
    group = subparsers.add_parser(
        "watermarks",
        help="inspect and control job watermarks (the bookmark store)",
        description=(
            "Inspect and control the watermarks table. Every change is recorded in the "
            "job's history with who and why. With --env ENV, the table, region and names come "
            "from that environment (JOB: its job name, e.g. gi-prod-orders, or its pipeline)."
        ),
    )
    _add_common_options(group, suppress=False)
    group.set_defaults(handler=None, group_parser=group)
    commands = group.add_subparsers(dest="command", metavar="COMMAND")

    # Common options are accepted before and after the command:
    # `watermarks --json show J` and `watermarks show J --json`.
    common = Parser(add_help=False)
    _add_common_options(common, suppress=True)

    show = commands.add_parser(
        "show", parents=[common], help="current state of a job (every slot by default)"
    )
    show.add_argument("job")
    show.add_argument("--slot", help="only this slot")
    show.set_defaults(handler=_cmd_show)

    history = commands.add_parser(
        "history", parents=[common], help="committed changes, newest first"
    )
    history.add_argument("job")
    history.add_argument("--slot", help="slot (default: the job's only slot, or 'default')")
    history.add_argument("--limit", type=_positive_int, default=20, help="rows per page (20)")
    history.add_argument("--next-token", help="continue after the page that printed this token")
    history.set_defaults(handler=_cmd_history)

    set_ = commands.add_parser(
        "set",
        parents=[common],
        help="set watermark values by hand (merged onto the current ones)",
        description=(
            "Set values by hand, e.g. to skip ahead or to backfill from a precise point. "
            "Values are JSON: --value last_id=42 --value region='\"eu\"'. "
            "Timestamps: --datetime last_modified=2024-05-01T12:00:00Z."
        ),
    )
    set_.add_argument("job")
    set_.add_argument("--slot", default=None, help="slot (default 'default')")
    set_.add_argument(
        "--value",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a value as JSON (repeatable)",
    )
    set_.add_argument(
        "--datetime",
        action="append",
        default=[],
        metavar="NAME=ISO",
        help="a timezone-aware ISO 8601 timestamp (repeatable)",
    )
    set_.add_argument(
        "--date", action="append", default=[], metavar="NAME=YYYY-MM-DD", help="a date"
    )
    _add_audit_options(set_)
    set_.add_argument(
        "--create",
        action="store_true",
        help="allow a job with no state yet (its first run then starts from these values)",
    )
    set_.set_defaults(handler=_cmd_set)

    reset = commands.add_parser(
        "reset", parents=[common], help="make the next run start from nothing (a full load)"
    )
    reset.add_argument("job")
    reset.add_argument("--slot", help="only this slot (default: every slot of the job)")
    _add_audit_options(reset)
    reset.set_defaults(handler=_cmd_reset)

    rewind = commands.add_parser(
        "rewind",
        parents=[common],
        help="make the state committed by RUN_ID current again",
    )
    rewind.add_argument("job")
    rewind.add_argument("run_id", metavar="RUN_ID")
    rewind.add_argument("--slot", help="slot (default: the job's only slot, or 'default')")
    _add_audit_options(rewind)
    rewind.add_argument(
        "--keep-output",
        action="store_true",
        help=(
            "leave the output as it is (default: an Iceberg table rolls back to RUN_ID's "
            "snapshot, a Parquet target's files are restored from the retained ones)"
        ),
    )
    rewind.set_defaults(handler=_cmd_rewind)

    create = commands.add_parser(
        "create-table",
        parents=[common],
        help="create the watermarks table (local endpoints; production uses terraform)",
    )
    create.set_defaults(handler=_cmd_create_table)


def _add_audit_options(parser: argparse.ArgumentParser) -> None:
    """``--why`` and ``--who``: every hand change is recorded in the history with both."""
    parser.add_argument("--why", required=True, help="reason, kept in the history")
    parser.add_argument("--who", help="who made the change (default: the current user)")


def _add_common_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppress else {}
    parser.add_argument(
        "--env",
        help="environment (local, dev, prod): its table, region and job names",
        **({"default": None} | default),
    )
    parser.add_argument(
        "--table",
        help=f"watermarks table (default: the environment's, else ${TABLE_ENV}, else glue-watermarks)",
        **({"default": None} | default),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON instead of a table",
        **({"default": False} | default),
    )


def _store(args: argparse.Namespace) -> Any:
    """The watermark store, and ``args.job`` turned into its state name under ``--env``."""
    from glue_incremental.watermarks import DEFAULT_TABLE, Watermarks

    if args.env:
        from glue_incremental_tools import deploy, environments

        try:
            environment = environments.open_environment(args.env)
            if getattr(args, "job", None):
                args.job = environment.state_name(args.job)
        except (deploy.DeployError, environments.UnknownName) as error:
            raise CommandError(str(error)) from None
        return Watermarks(args.table or environment.watermarks_table)
    table = args.table or os.environ.get(TABLE_ENV) or DEFAULT_TABLE
    return Watermarks(table)


def _resolve_slot(store: Any, job: str, slot: str | None) -> str:
    """The slot to use: the given one, else 'default' or the job's only slot."""
    from glue_incremental.watermarks import DEFAULT_SLOT, UnknownJob

    if slot:
        return slot
    slots = store.slots(job)
    if not slots:
        raise UnknownJob(job)
    if DEFAULT_SLOT in slots:
        return DEFAULT_SLOT
    if len(slots) == 1:
        return slots[0]
    raise CommandError(f"job {job!r} has slots {', '.join(sorted(slots))}: choose one with --slot")


def _cmd_show(args: argparse.Namespace) -> int:
    from glue_incremental.watermarks import UnknownJob

    store = _store(args)
    slots = [args.slot] if args.slot else sorted(store.slots(args.job))
    states = [store.current_state(args.job, slot) for slot in slots]
    if not slots or any(state is None for state in states):
        raise UnknownJob(args.job, args.slot or "default")
    _print_states(args, states, with_slot=True)
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    from glue_incremental.watermarks import UnknownJob

    store = _store(args)
    slot = _resolve_slot(store, args.job, args.slot)
    page = store.history(args.job, slot, limit=args.limit, next_token=args.next_token)
    if not page.items and not args.next_token:
        raise UnknownJob(args.job, slot)
    if args.json:
        _print_json({"items": page.items, "next_token": page.next_token})
        return 0
    print(f"job {args.job}, slot {slot}: newest first")
    _print_table(page.items, with_slot=False)
    if page.next_token:
        print(f"more: --next-token {page.next_token}")
    return 0


def _cmd_set(args: argparse.Namespace) -> int:
    from glue_incremental.watermarks import DEFAULT_SLOT, UnknownJob

    values = _parse_values(args.value, args.datetime, args.date)
    if not values:
        raise CommandError("set needs at least one --value, --datetime or --date")
    why = _require_why(args.why)
    store = _store(args)
    slot = args.slot or DEFAULT_SLOT
    if not args.create and store.current_state(args.job, slot) is None:
        raise CommandError(
            f"{UnknownJob(args.job, slot)}: check the name, or pass --create to give a job "
            "its first state"
        )
    state = store.set(args.job, slot, who=args.who, why=why, **values)
    _print_states(args, [state], with_slot=True)
    return 0


def _cmd_reset(args: argparse.Namespace) -> int:
    from glue_incremental.watermarks import UnknownJob

    why = _require_why(args.why)
    store = _store(args)
    slots = [args.slot] if args.slot else sorted(store.slots(args.job))
    if not slots:
        raise UnknownJob(args.job)
    tables = {
        ((store.current_state(args.job, slot) or {}).get("watermarks") or {}).get("iceberg_table")
        for slot in slots
    } - {None}
    # An Iceberg target is not emptied: the next run's full reload replaces it in one snapshot,
    # so readers never see it empty in between. The table is looked up first: a wrong
    # environment or a missing table is reported before any state changes.
    kept = {str(name): _iceberg_target(args, str(name)).current() for name in tables}
    note = {"output": "kept until the next run's full reload replaces it"} if tables else None
    if len(kept) == 1:
        (current,) = kept.values()
        if current is not None:
            note = (note or {}) | {"iceberg_snapshot": str(current.snapshot_id)}
    store.reset(args.job, args.slot, who=args.who, why=why, note=note)
    states = [store.current_state(args.job, slot) for slot in slots]
    _print_states(args, [state for state in states if state], with_slot=True)
    if not args.json:
        print("the next run starts from nothing (a full load)")
        for table, current in sorted(kept.items()):
            at = f" at snapshot {current.snapshot_id}" if current is not None else ""
            print(f"table {table} stays{at} until that run replaces it in one snapshot")
    return 0


def _iceberg_target(args: argparse.Namespace, table: str) -> Any:
    """The job's Iceberg target in the environment's Glue Data Catalog (see ``iceberg_catalog``)."""
    from glue_incremental_tools import iceberg_catalog

    try:
        import pyiceberg  # noqa: F401
    except ImportError as error:
        raise CommandError(
            f"Iceberg table {table} needs pyiceberg ({error.name} is missing): "
            "pip install 'glue_incremental[tools]'"
        ) from None
    try:
        return iceberg_catalog.open_target(table, local=args.env in (None, "local"), job=args.job)
    except (iceberg_catalog.TableNotFound, ValueError) as error:
        raise CommandError(str(error)) from None


def _recorded_snapshot(state: dict[str, Any], table: str, run_id: str) -> Any:
    """For a run that wrote no snapshot (it read nothing): the one it left current, as its
    state recorded it; CommandError when the state names none."""
    from glue_incremental.targets.iceberg.summary import RESTORE_SNAPSHOT, Snapshot

    recorded = state.get(RESTORE_SNAPSHOT)
    if recorded is None:
        raise CommandError(
            f"Iceberg table {table} has no snapshot of run {run_id!r} and its state names "
            "none (the table was empty, or the run predates that record): rewind with "
            "--keep-output, or to another run"
        )
    return Snapshot(int(recorded), None, None, None, None, None, commits=False)


def _cmd_rewind(args: argparse.Namespace) -> int:
    why = _require_why(args.why)
    store = _store(args)
    slot = _resolve_slot(store, args.job, args.slot)
    target = store.state_after_run(args.job, args.run_id, slot)["watermarks"] or {}
    table = target.get("iceberg_table")
    path = (target.get("layout") or {}).get("target_path") if not table else None
    if path and not args.keep_output:
        return _rewind_parquet(args, store, slot, target, str(path), why)
    if not table or args.keep_output:
        note = {"output": "kept"} if table else {}
        state = store.rewind(args.job, args.run_id, slot, who=args.who, why=why, note=note)
        _print_states(args, [state], with_slot=True)
        return 0
    # The state moves first: if the rollback then fails, the next run re-reads and merges
    # again (idempotent), where a table rolled back alone would leave rows never reloaded.
    iceberg_table = _iceberg_target(args, str(table))
    snapshot = iceberg_table.snapshot_of_run(args.run_id) or _recorded_snapshot(
        target, str(table), args.run_id
    )
    note = {"output": "rolled back", "iceberg_snapshot": str(snapshot.snapshot_id)}
    state = store.rewind(args.job, args.run_id, slot, who=args.who, why=why, note=note)
    from glue_incremental_tools.iceberg_catalog import RollbackRefused

    try:
        iceberg_table.rollback_to(snapshot)
    except RollbackRefused as error:
        raise CommandError(f"{error}; the watermark is rewound: run the rewind again") from None
    _print_states(args, [state], with_slot=True)
    if not args.json:
        print(f"table {table} is back at snapshot {snapshot.snapshot_id} (run {args.run_id})")
    return 0


def _rewind_parquet(
    args: argparse.Namespace, store: Any, slot: str, target: dict[str, Any], path: str, why: str
) -> int:
    """Rewind a Parquet target's state and restore its files to what that run left
    (``glue_incremental.targets.parquet.restore``). Checked before the state moves: files no longer retained
    refuse the rewind in one line; a run written before retention rewinds the state alone."""
    from glue_incremental.targets.parquet import restore

    from glue_incremental_tools import output_files

    recorded = target.get(restore.STATE_KEY)
    if recorded is None:
        state = store.rewind(args.job, args.run_id, slot, who=args.who, why=why, note={})
        _print_states(args, [state], with_slot=True)
        print(
            f"notice: run {args.run_id} was written before {path} kept replaced files: "
            "its files stay as they are (the next run merges onto them)",
            file=sys.stderr,
        )
        return 0
    undone = _restored_below(store, args.job, slot, args.run_id, int(recorded))
    if undone is not None:
        raise CommandError(
            f"the files run {args.run_id} left are gone: rewind {undone['version']} "
            f"(to run {undone.get('rewound_to_run')}) restored {path} to an earlier publish "
            "and later publishes took their place; nothing was changed: rewind to a run "
            "after that rewind, or reset (a full reload)"
        )
    try:
        fs = output_files.open_store(path)
        planned = restore.plan(fs, path, int(recorded))
    except (restore.OutputNotRetained, ValueError) as error:
        raise CommandError(str(error)) from None
    partitions = restore.restored_partitions(planned)
    note = {
        "output": restore.RESTORED,
        restore.STATE_KEY: str(recorded),
        "restored_partitions": json.dumps(partitions),
    }
    # The state moves first and names the restore: a restore cut short after it is finished
    # by the next run (``ParquetTarget.recover``) or by this rewind run again.
    state = store.rewind(args.job, args.run_id, slot, who=args.who, why=why, note=note)
    rewind_id = f"rewind-{state['version']}"
    restore.restore(fs, path, int(recorded), run_id=rewind_id)
    _print_states(args, [state], with_slot=True)
    if not args.json:
        writer = _publish_writer(store, args.job, slot, args.run_id, int(recorded))
        which = "run" if writer == args.run_id else f"written by {writer}, the state of"
        print(
            f"target {path} is back at publish {recorded} ({which} {args.run_id}): "
            f"{len(partitions)} partitions restored"
        )
    return 0


def _publish_writer(store: Any, job: str, slot: str, run_id: str, recorded: int) -> str:
    """The run that wrote publish ``recorded``, kept by run ``run_id``'s state: the oldest of
    the runs just before it that kept the same publish (a run that wrote nothing keeps its
    predecessor's); ``run_id`` itself if not found."""
    from glue_incremental.targets.parquet import restore

    since, writer = store.state_after_run(job, run_id, slot)["version"], run_id
    for entry in store.iter_history(job, slot):
        if entry["version"] > since:
            continue
        kept = (entry["watermarks"] or {}).get(restore.STATE_KEY)
        if entry["kind"] != "run" or kept is None or int(kept) != recorded:
            return writer
        writer = entry["job_run_id"]
    return writer


def _restored_below(
    store: Any, job: str, slot: str, run_id: str, recorded: int
) -> dict[str, Any] | None:
    """The rewind committed after run ``run_id`` that restored the files to a publish before
    ``recorded`` (None: none). That restore dropped the records of the publishes after it,
    the run's included, and the next publishes reuse their numbers: restoring "to publish
    ``recorded``" would then bring back another run's files under this run's state."""
    from glue_incremental.targets.parquet import restore

    since = store.state_after_run(job, run_id, slot)["version"]
    for entry in store.iter_history(job, slot):
        if entry["version"] <= since:
            return None
        kept = (entry["watermarks"] or {}).get(restore.STATE_KEY)
        if (
            entry["kind"] == "rewind"
            and entry.get("output") == restore.RESTORED
            and kept is not None
            and int(kept) < recorded
        ):
            return dict(entry)
    return None


def _cmd_create_table(args: argparse.Namespace) -> int:
    from glue_incremental.watermarks import create_table

    store = _store(args)
    create_table(store.table_name)
    if args.json:
        _print_json({"table": store.table_name, "status": "ACTIVE"})
    else:
        print(f"table {store.table_name} is ready")
    return 0


# -- values -------------------------------------------------------------------------------------

_RESERVED_NAMES = {"job_name", "slot", "who", "why"}


def _parse_values(raw_values: list[str], datetimes: list[str], dates: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}

    def put(option: str, pair: str, parse: Callable[[str], Any], hint: str) -> None:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise CommandError(f"{option} {pair!r}: expected NAME={hint}")
        if name in _RESERVED_NAMES:
            raise CommandError(f"{option} {pair!r}: {name!r} is reserved, choose another name")
        if name in values:
            raise CommandError(f"{option} {pair!r}: {name!r} is given twice")
        try:
            values[name] = parse(text)
        except RecursionError:
            raise CommandError(
                f"{option} {name}=...: the value is nested too deeply to be a watermark"
            ) from None
        except ValueError as error:
            raise CommandError(f"{option} {pair!r}: not {hint} ({error})") from None

    for pair in raw_values:
        put("--value", pair, json.loads, "JSON (quote strings: name='\"text\"')")
    for pair in datetimes:
        put("--datetime", pair, _aware_datetime, "an ISO 8601 timestamp with a timezone")
    for pair in dates:
        put("--date", pair, date.fromisoformat, "a date YYYY-MM-DD")
    return values


def _aware_datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError("no timezone: add Z or an offset such as +00:00")
    return value


def _require_why(why: str) -> str:
    if not why or not why.strip():
        raise CommandError("--why must say why (it is kept in the history)")
    return why.strip()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# -- output -------------------------------------------------------------------------------------


def _print_states(args: argparse.Namespace, states: list[dict[str, Any]], with_slot: bool) -> None:
    if args.json:
        _print_json(states if len(states) != 1 else states[0])
    else:
        _print_table(states, with_slot=with_slot)


def _print_json(data: Any) -> None:
    print(json.dumps(data, default=_json_default, indent=2, sort_keys=True))


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _print_table(states: list[dict[str, Any]], *, with_slot: bool) -> None:
    headers = ["VERSION", "COMMITTED_AT", "KIND", "RUN ID", "WATERMARKS", "WHO/WHY"]
    if with_slot:
        headers.insert(0, "SLOT")
    rows = []
    for state in states:
        row = [
            str(state["version"]),
            _short_time(state["committed_at"]),
            state.get("kind", "run"),
            state.get("job_run_id", ""),
            _summary(state.get("watermarks")),
            _who_why(state),
        ]
        if with_slot:
            row.insert(0, state.get("slot", ""))
        rows.append(row)
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    for line in [headers, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=True)]
        print("  ".join(cells).rstrip())


def _short_time(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%SZ")
    except ValueError:
        return iso


def _summary(values: dict[str, Any] | None, width: int = 160) -> str:
    """The values in human units (``watermark_text``), shortened to ``width``."""
    from glue_incremental_tools.watermark_text import summary as human_summary

    text = human_summary(values)
    return text if len(text) <= width else text[: width - 3] + "..."


def _who_why(state: dict[str, Any]) -> str:
    who, why = state.get("who"), state.get("why")
    if not who and not why:
        return ""
    text = f"{who or '?'}: {why or ''}".rstrip()
    if state.get("rewound_to_run"):
        text += f" (to run {state['rewound_to_run']})"
    return text
