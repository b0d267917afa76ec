"""``python -m glue_incremental target PIPELINE --env ENV``: a target's schema, rows and partitions.

Reads without a JVM and writes nothing. A Parquet target is read with pyarrow from its
published files only: no path component hidden (``partitions.paths.is_hidden``: not
``_staging/``, ``_index/``, ``_delivery/``, ``_schema.json``), what Spark and Athena read;
partition columns are strings, Hive escaping undone, file schemas unified. An Iceberg
target is its current snapshot, through pyiceberg from the environment's Glue Data
Catalog (a local run's table: its current metadata in the warehouse its job names).
``--key`` and ``--where`` are ``column=value`` (repeatable, ANDed), the value cast to the
column's type; ``null`` matches a null. Design: ``docs/local-tools.md``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from glue_incremental.partitions.paths import HIVE_NULL, is_hidden

from glue_incremental_tools.errors import CommandError

DEFAULT_LIMIT = 10
NULL = "null"


@dataclass(frozen=True)
class Filter:
    """``column = value`` (value as typed; None for ``null``)."""

    column: str
    text: str | None
    option: str = "--where"


@dataclass
class TargetView:
    """What the command prints."""

    target: str
    format: str
    schema: list[tuple[str, str]]
    row_count: int
    partitions: list[tuple[str, int, int]] = field(default_factory=list)  # (path, files, rows)
    rows: list[dict[str, Any]] = field(default_factory=list)
    matched: int | None = None  # rows matching the filters, when there are filters
    snapshot: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "format": self.format,
            "schema": [{"name": name, "type": kind} for name, kind in self.schema],
            "row_count": self.row_count,
            "partitions": [
                {"partition": path, "files": files, "rows": rows}
                for path, files, rows in self.partitions
            ],
            "matched": self.matched,
            "snapshot": self.snapshot,
            "rows": self.rows,
        }


# -- filters ------------------------------------------------------------------------------------


def parse_filters(keys: Sequence[str], wheres: Sequence[str]) -> list[Filter]:
    """``--key id=101 --where region=eu`` as filters; CommandError naming a malformed one."""
    filters = []
    for option, pairs in (("--key", keys), ("--where", wheres)):
        for pair in pairs:
            column, sep, text = pair.partition("=")
            if not sep or not column.strip():
                raise CommandError(f"{option} {pair!r}: expected COLUMN=VALUE, e.g. id=101")
            filters.append(Filter(column.strip(), None if text == NULL else text, option))
    return filters


def arrow_expression(filters: Sequence[Filter], schema: Any) -> Any:
    """The pyarrow expression of ``filters`` on ``schema``; CommandError for a column or
    value that does not fit (one line naming the option, column and value)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    expression = None
    for item in filters:
        if item.column not in schema.names:
            raise CommandError(
                f"{item.option} {item.column}=...: the target has no column {item.column!r} "
                f"(columns: {', '.join(schema.names)})"
            )
        column_type = schema.field(item.column).type
        if item.text is None:
            term = ds.field(item.column).is_null()
        else:
            try:
                value = pc.cast(pa.scalar(item.text), column_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                raise CommandError(
                    f"{item.option} {item.column}={item.text}: not a {column_type} value "
                    f"({' '.join(str(error).split())})"
                ) from None
            term = ds.field(item.column) == value
        expression = term if expression is None else expression & term
    return expression


# -- Parquet ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """A target path: ``s3://bucket/prefix`` or a local directory (``file://`` or a path)."""

    scheme: str
    bucket: str
    prefix: str  # no trailing slash; for a local path, the directory

    @classmethod
    def parse(cls, uri: str) -> Location:
        parsed = urlparse(uri)
        if parsed.scheme in ("s3", "s3a", "s3n"):
            return cls("s3", parsed.netloc, parsed.path.strip("/"))
        if parsed.scheme in ("", "file"):
            return cls("file", "", unquote(parsed.path).rstrip("/") or "/")
        raise CommandError(f"target path {uri!r}: only s3:// and file:// targets can be read")

    def base(self) -> str:
        """The base directory as the pyarrow filesystem names it."""
        return f"{self.bucket}/{self.prefix}" if self.scheme == "s3" else self.prefix


def published_files(location: Location) -> list[str]:
    """Paths (relative to the target) of the files readers read, sorted."""
    if location.scheme == "s3":
        from glue_incremental import aws

        paginator = aws.client("s3").get_paginator("list_objects_v2")
        keys = [
            item["Key"]
            for page in paginator.paginate(Bucket=location.bucket, Prefix=f"{location.prefix}/")
            for item in page.get("Contents", [])
        ]
        relative = [key[len(location.prefix) + 1 :] for key in keys]
    else:
        root = Path(location.prefix)
        if not root.is_dir():
            return []
        relative = []
        for directory, dirs, files in os.walk(root):
            dirs[:] = [name for name in dirs if not is_hidden(name)]
            here = Path(directory).relative_to(root)
            relative += [str(here / name) if str(here) != "." else name for name in files]
    return sorted(path for path in relative if path and is_published(path))


def is_published(relative: str) -> bool:
    """Whether a reader reads the file at ``relative`` (no hidden component, not a folder)."""
    parts = relative.split("/")
    return bool(parts[-1]) and not any(is_hidden(part) for part in parts)


def partition_columns(files: Iterable[str]) -> list[str]:
    """The ``name=value`` directory names of the first file (every file has the same)."""
    for path in files:
        return [unquote(part.partition("=")[0]) for part in path.split("/")[:-1] if "=" in part]
    return []


def _filesystem(location: Location) -> Any:
    import pyarrow.fs as pafs

    if location.scheme == "file":
        return pafs.LocalFileSystem()
    import boto3
    from glue_incremental import aws

    options: dict[str, Any] = {"region": aws.region()}
    credentials = boto3.session.Session().get_credentials()
    if credentials is not None:
        # pyarrow resolves credentials on its own; boto3's keep one identity (profile, role).
        frozen = credentials.get_frozen_credentials()
        options |= {"access_key": frozen.access_key, "secret_key": frozen.secret_key}
        if frozen.token:
            options["session_token"] = frozen.token
    endpoint = aws.endpoint_url("s3")
    if endpoint:
        parsed = urlparse(endpoint)
        options |= {
            "endpoint_override": parsed.netloc or endpoint,
            "scheme": parsed.scheme or "http",
        }
    return pafs.S3FileSystem(**options)


def read_parquet(
    uri: str, filters: Sequence[Filter], limit: int, filesystem: Any | None = None
) -> TargetView:
    """The published content of the Parquet target at ``uri`` (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    location = Location.parse(uri)
    files = published_files(location)
    if not files:
        if filters:
            raise CommandError(f"target {uri} has no published files: nothing to filter")
        return TargetView(uri, "parquet", [], 0)
    names = partition_columns(files)
    fs = filesystem or _filesystem(location)
    partitioning = ds.HivePartitioning(
        pa.schema([(name, pa.string()) for name in names]),
        null_fallback=HIVE_NULL,
        segment_encoding="uri",
    )
    paths = [f"{location.base()}/{path}" for path in files]
    discovered = ds.dataset(
        paths,
        filesystem=fs,
        format="parquet",
        partitioning=partitioning,
        partition_base_dir=location.base(),
    )
    fragments = list(discovered.get_fragments())
    data_schema = pa.unify_schemas(
        [fragment.physical_schema for fragment in fragments], promote_options="permissive"
    )
    schema = pa.unify_schemas(
        [
            pa.schema([f for f in data_schema if f.name not in names]),
            pa.schema([(name, pa.string()) for name in names]),
        ]
    )
    dataset = ds.dataset(
        paths,
        schema=schema,
        filesystem=fs,
        format="parquet",
        partitioning=partitioning,
        partition_base_dir=location.base(),
    )
    by_partition: dict[str, list[int]] = {}
    total = 0
    for fragment in dataset.get_fragments():
        rows = fragment.count_rows()
        total += rows
        relative = fragment.path[len(location.base()) + 1 :]
        directory = relative.rsplit("/", 1)[0] if "/" in relative else ""
        counts = by_partition.setdefault(directory, [0, 0])
        counts[0] += 1
        counts[1] += rows
    expression = arrow_expression(filters, schema) if filters else None
    matched = dataset.count_rows(filter=expression) if expression is not None else None
    sample = dataset.head(limit, filter=expression) if limit else schema.empty_table()
    return TargetView(
        target=uri,
        format="parquet",
        schema=[(f.name, str(f.type)) for f in schema],
        row_count=total,
        partitions=[(path, files_, rows) for path, (files_, rows) in sorted(by_partition.items())]
        if names
        else [],
        rows=sample.to_pylist(),
        matched=matched,
    )


# -- Iceberg ------------------------------------------------------------------------------------


def read_iceberg(
    table_name: str, filters: Sequence[Filter], limit: int, *, local: bool, job: str
) -> TargetView:
    """The current snapshot of the Iceberg target ``table_name`` (see the module docstring)."""
    try:
        import pyiceberg  # noqa: F401
    except ImportError as error:
        raise CommandError(
            f"Iceberg table {table_name} needs pyiceberg ({error.name} is missing): "
            "pip install 'glue_incremental[tools]'"
        ) from None
    table = _iceberg_table(table_name, local=local, job=job)
    arrow_schema = table.schema().as_arrow()
    row_filter = iceberg_expression(filters, arrow_schema) if filters else None
    scan = table.scan()
    tasks = list(scan.plan_files())
    # Record counts of the data files are the rows unless delete files remove some.
    if any(task.delete_files for task in tasks):
        total = scan.to_arrow().num_rows
    else:
        total = sum(task.file.record_count for task in tasks)
    if row_filter is not None:
        try:
            matching = table.scan(row_filter=row_filter).to_arrow()
        except ValueError as error:
            raise CommandError(
                f"{' and '.join(f'{f.option} {f.column}={f.text}' for f in filters)}: "
                f"{' '.join(str(error).split())}"
            ) from None
        rows, matched = matching.slice(0, limit).to_pylist(), matching.num_rows
    else:
        rows, matched = (table.scan(limit=limit).to_arrow().to_pylist() if limit else []), None
    partitions: dict[str, list[int]] = {}
    spec = table.spec()
    if spec.fields:
        for task in tasks:
            key = spec.partition_to_path(task.file.partition, table.schema())
            counts = partitions.setdefault(key, [0, 0])
            counts[0] += 1
            counts[1] += task.file.record_count
    current = table.current_snapshot()
    return TargetView(
        target=table_name,
        format="iceberg",
        schema=[(f.name, str(f.type)) for f in arrow_schema],
        row_count=total,
        partitions=[(path, files, rows) for path, (files, rows) in sorted(partitions.items())],
        rows=rows[:limit],
        matched=matched,
        snapshot=None if current is None else str(current.snapshot_id),
    )


def iceberg_expression(filters: Sequence[Filter], schema: Any) -> Any:
    """``filters`` as a pyiceberg row filter (values converted to the column's type at bind)."""
    from pyiceberg import expressions

    # pyiceberg's constructors take (term, value) at run time; its stubs say otherwise.
    equal_to: Any = expressions.EqualTo
    is_null: Any = expressions.IsNull
    expression: Any = None
    for item in filters:
        if item.column not in schema.names:
            raise CommandError(
                f"{item.option} {item.column}=...: the target has no column {item.column!r} "
                f"(columns: {', '.join(schema.names)})"
            )
        term = is_null(item.column) if item.text is None else equal_to(item.column, item.text)
        expression = term if expression is None else expressions.And(expression, term)
    return expression


def _iceberg_table(table_name: str, *, local: bool, job: str) -> Any:
    """The pyiceberg table: the Glue Data Catalog's, or (``local``) the one a local run of
    ``job`` wrote to its warehouse (``iceberg_catalog.open_target``)."""
    from glue_incremental_tools import iceberg_catalog

    try:
        return iceberg_catalog.open_target(table_name, local=local, job=job).table
    except (iceberg_catalog.TableNotFound, ValueError) as error:
        raise CommandError(str(error)) from None


# -- output -------------------------------------------------------------------------------------


def render(view: TargetView, filters: Sequence[Filter], limit: int) -> str:
    """Schema, row count, partitions and the sample rows as plain text."""
    lines = [f"target {view.target} ({view.format})"]
    if view.snapshot:
        lines.append(f"snapshot {view.snapshot}")
    lines.append(f"rows: {view.row_count}")
    if not view.schema:
        lines.append("no published files yet")
        return "\n".join(lines)
    lines.append("schema:")
    width = max(len(name) for name, _ in view.schema)
    lines += [f"  {name.ljust(width)}  {kind}" for name, kind in view.schema]
    if view.partitions:
        lines.append(f"partitions: {len(view.partitions)}")
        lines += [
            f"  {path}  {files} file(s), {rows} row(s)" for path, files, rows in view.partitions
        ]
    if filters:
        where = " and ".join(
            f"{f.column}={f.text if f.text is not None else NULL}" for f in filters
        )
        lines.append(f"rows where {where}: {view.matched}")
    shown = f"first {len(view.rows)}" if view.rows else "none"
    lines.append(f"sample ({shown}, --limit {limit}):")
    lines += table([name for name, _ in view.schema], view.rows)
    return "\n".join(lines)


def table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Rows as an aligned text table (``-`` for null)."""
    cells = [[cell(row.get(name)) for name in columns] for row in rows]
    if not cells:
        return []
    widths = [max(len(c) for c in column) for column in zip(columns, *cells, strict=True)]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [list(columns), *cells]
    ]


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, separators=(",", ":"))
    return str(value)


# -- command line -------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "target",
        help="a pipeline's target: schema, row count, partitions, sample rows, key lookup",
        description=__doc__.split("\n\n", 1)[0].replace("``", ""),
    )
    parser.add_argument("pipeline", metavar="PIPELINE", help="pipeline, job or state name")
    parser.add_argument("--env", required=True, help="environment (local, dev, prod)")
    parser.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"sample rows ({DEFAULT_LIMIT}; 0: none)",
    )
    parser.add_argument(
        "--key", action="append", default=[], metavar="COLUMN=VALUE", help="key lookup (repeatable)"
    )
    parser.add_argument(
        "--where", action="append", default=[], metavar="COLUMN=VALUE", help="filter (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=_cmd_target)


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _cmd_target(args: argparse.Namespace, out: Callable[[str], Any] = print) -> int:
    from glue_incremental_tools.pipelines import open_pipeline

    filters = parse_filters(args.key, args.where)
    pipeline = open_pipeline(args.env, args.pipeline)
    arguments = pipeline.run_arguments
    if arguments.get("--target_format") == "iceberg":
        name = arguments.get("--target_table") or pipeline.outputs.get("table")
        if not name:
            raise CommandError(f"pipeline {pipeline.name}: no --target_table in its arguments")
        view = read_iceberg(
            str(name), filters, args.limit, local=args.env == "local", job=pipeline.job_name
        )
    else:
        uri = pipeline.outputs.get("target_path") or arguments.get("--target_path")
        if not uri:
            raise CommandError(f"pipeline {pipeline.name}: no target_path in its outputs")
        view = read_parquet(str(uri), filters, args.limit)
    if args.json:
        out(json.dumps(view.as_json(), indent=2, default=cell))
    else:
        out(render(view, filters, args.limit))
    return 0
