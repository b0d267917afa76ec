"""A team's own ``DataFrame -> DataFrame`` applied to the increment before it is merged.

``--transform package.module:function`` names it; the generic load applies it to the rows it
read, the join to its output. The contract is checked before anything is written, each breach
a one-line ``TransformError`` naming the function: the result is a DataFrame; the protected
columns (primary key, watermark, partition columns, the delete marker and the load's delivery
columns) come out unchanged in name and type, and every result row's protected values are an
input row's (``transform_values``); the result does not read the job's own target. An exception
raised by the function is reported with its first line. A load's filter is a delete
(``Identity``): a key whose newest version in the increment the function drops leaves the
target as a delete marker would make it leave. Errors Spark raises lazily (a UDF
failing row by row) surface at the job's first action, still before anything is published.
Design: ``docs/transforms.md``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.sql.window import Window

from glue_incremental.args import ArgumentError, Option
from glue_incremental.deletes.markers import FILTERED
from glue_incremental.errors import INTERNAL_PREFIX, GlueIncrementalError, user_columns
from glue_incremental.transforms import values as transform_values

_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_SPEC = re.compile(rf"({_DOTTED}):({_DOTTED})")


class TransformError(GlueIncrementalError, ValueError):
    """A transform broke its contract or failed; ``function`` is its ``module:function``."""

    def __init__(self, function: str, message: str) -> None:
        self.function = function
        super().__init__(f"--transform {function}: {message}; nothing was written")


class TransformNotFound(TransformError):
    """The module does not import, or the name in it is missing or not callable."""


class TransformFailed(TransformError):
    """The function raised while building its result."""


class TransformContractError(TransformError):
    """The result is not a DataFrame, changed a protected column, or reads the target."""


@dataclass(frozen=True)
class TransformSpec:
    """``module:function`` as given; validated at construction, imported only by ``load``."""

    module: str
    function: str

    @classmethod
    def parse(cls, name: str, raw: str | None) -> TransformSpec | None:
        """The ``Option`` parser: ``None`` (no transform) or a syntactically valid spec."""
        if raw is None or not raw.strip():
            return None
        match = _SPEC.fullmatch(raw.strip())
        if match is None:
            raise ArgumentError(
                name,
                f"--{name} {raw!r} is not package.module:function (for example teams.orders:mask)",
            )
        return cls(match.group(1), match.group(2))

    def __str__(self) -> str:
        return f"{self.module}:{self.function}"

    def load(self) -> Callable[[DataFrame], object]:
        """Import the module and return the function (shipped with ``--extra-py-files`` on Glue)."""
        try:
            target: object = importlib.import_module(self.module)
        except Exception as error:
            raise TransformNotFound(
                str(self), f"module {self.module!r} does not import ({first_line(error)})"
            ) from None
        for part in self.function.split("."):
            if not hasattr(target, part):
                raise TransformNotFound(str(self), f"{self.module!r} has no {self.function!r}")
            target = getattr(target, part)
        if not callable(target):
            raise TransformNotFound(str(self), f"{self.function!r} is not callable")
        return target


TRANSFORM_OPTION = Option(
    "transform",
    "`package.module:function`, a `DataFrame -> DataFrame` applied to the increment before it is "
    "merged (ship it with `--extra-py-files`); it must keep the key, watermark and partition "
    "columns (`docs/transforms.md`).",
    parse=TransformSpec.parse,
)


@dataclass(frozen=True)
class Contract:
    """What a job's transform must keep: ``protected`` columns; never reading its target.

    ``target_path`` (a Parquet target's root) is matched against the result's input files,
    ``target_table`` (an Iceberg ``database.table``) against its analyzed plan's relations.
    """

    protected: Sequence[str]
    target_path: str = ""
    target_table: str | None = None


@dataclass(frozen=True)
class Identity:
    """How the load tells a key's versions apart across the transform: ``primary_key``, then
    the versions' order, ``watermark`` (null lowest) and the ``delivery`` columns (a file's
    modification time and name, later wins; the merge's own order, ``targets.latest.merge_latest``).
    The contract keeps these values unchanged, so a version the function kept is the output
    row with the same ones."""

    primary_key: Sequence[str]
    watermark: str
    delivery: Sequence[str] = ()


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    name = type(error).__name__
    return f"{name}: {text.splitlines()[0]}" if text else name


def check_schema(
    function: str, before: StructType, after: StructType, protected: Sequence[str]
) -> None:
    """Every protected column of ``before`` is in ``after`` with the same type (plain schemas)."""
    after_types = {field.name: field.dataType for field in after.fields}
    for name in protected:
        if name not in before.fieldNames():
            continue  # the job's own column checks name what the source lacks
        if name not in after_types:
            raise TransformContractError(
                function, f"the result drops column {name!r}, which the job needs"
            )
        was, now = before[name].dataType, after_types[name]
        if was != now:
            raise TransformContractError(
                function,
                f"the result changes column {name!r} from {was.simpleString()} to {now.simpleString()}",
            )


def apply(
    spec: TransformSpec | None,
    rows: DataFrame | None,
    contract: Contract,
    identity: Identity | None = None,
) -> DataFrame | None:
    """``rows`` through the transform, contract checked; unchanged without a transform or rows.

    With an ``identity`` (the load), a filter is a delete: for each key whose newest version in
    ``rows`` (every version tied at the top) has no output row, the result holds one more row
    with ``FILTERED`` true, that version's protected values and null elsewhere; the other rows
    have ``FILTERED`` false. When the function dropped no key's newest version (a map, or a
    filter of older versions only) the result is the function's own, without ``FILTERED``.
    Costs one more Spark job over the cached input (the dropped versions, checkpointed so the
    merge does not read the source again for them) and a look at that small checkpoint. The join passes no identity: it
    replaces whole partitions with what the function returns."""
    if spec is None or rows is None:
        return rows
    function = spec.load()
    name = str(spec)
    try:
        result = function(rows)
    except Exception as error:
        raise TransformFailed(name, f"raised {first_line(error)}") from error
    if not isinstance(result, DataFrame):
        raise TransformContractError(name, f"returned {type(result).__name__}, not a DataFrame")
    check_schema(name, rows.schema, result.schema, contract.protected)
    if reads_target(result, contract) and not reads_target(rows, contract):
        where = contract.target_table or contract.target_path
        raise TransformContractError(
            name, f"the result reads the job's own target {where} (the job merges into it itself)"
        )
    rows.persist()  # the value check's two sides and the filter's see the same read
    try:
        check_values(name, rows, result, contract.protected)
        if identity is None or not set(identity.primary_key) <= set(rows.columns):
            return result  # a source without the key: the job's own column check names it
        dropped = filtered_latest(rows, result, identity).localCheckpoint()
    finally:
        rows.unpersist()
    if dropped.isEmpty():
        return result
    return with_filtered(result, dropped, contract.protected)


def filtered_latest(rows: DataFrame, result: DataFrame, identity: Identity) -> DataFrame:
    """One input row per key whose newest version (key, watermark, delivery) no ``result`` row
    has: the keys the function filtered out. Lazy; null-safe on every identity column."""
    order = [c for c in (identity.watermark, *identity.delivery) if c in rows.columns]
    names = [*identity.primary_key, *order]
    ranking = [F.col(f"`{name}`").desc_nulls_last() for name in order]
    # Ties at the top share their identity: any one of them stands for the key.
    ranking.append(F.xxhash64(*[F.col(f"`{name}`") for name in rows.columns]).desc())
    window = Window.partitionBy(*[F.col(f"`{key}`") for key in identity.primary_key])
    rank = f"{INTERNAL_PREFIX}filter_rank"
    latest = (
        rows.withColumn(rank, F.row_number().over(window.orderBy(*ranking)))
        .where(F.col(rank) == 1)
        .drop(rank)
    )
    kept_names = [f"{INTERNAL_PREFIX}kept_{index}" for index in range(len(names))]
    kept = result.select(
        *(F.col(f"`{name}`").alias(alias) for name, alias in zip(names, kept_names, strict=True))
    ).distinct()
    same = [
        F.col(f"`{name}`").eqNullSafe(F.col(alias))
        for name, alias in zip(names, kept_names, strict=True)
    ]
    return latest.join(kept, same, "left_anti")


def with_filtered(result: DataFrame, dropped: DataFrame, protected: Sequence[str]) -> DataFrame:
    """``result`` with ``FILTERED`` false, and a ``FILTERED`` row per ``dropped`` version: its
    protected values, every other column of ``result`` null (a delete carries no values)."""
    columns = []
    for field in result.schema.fields:
        if field.name in protected and field.name in dropped.columns:
            columns.append(F.col(f"`{field.name}`").cast(field.dataType).alias(field.name))
        else:
            columns.append(F.lit(None).cast(field.dataType).alias(field.name))
    deletions = dropped.select(*columns, F.lit(True).alias(FILTERED))
    return result.withColumn(FILTERED, F.lit(False)).unionByName(deletions)


def check_values(
    function: str, before: DataFrame, after: DataFrame, protected: Sequence[str]
) -> None:
    """Every row of ``after`` has the protected values of a row of ``before`` (one Spark job)."""
    stray = transform_values.stray_row(before, after, protected)
    if stray is not None:
        shown = ", ".join(
            f"{column}={stray[column]!r}" for column in user_columns(stray) if column in stray
        )
        raise TransformContractError(
            function,
            f"the result holds a row ({shown}) that is no input row's: a transform may filter "
            "rows and change other columns, never the values of the key, watermark, partition "
            "or delete-marker columns",
        )


def reads_target(frame: DataFrame, contract: Contract) -> bool:
    """Whether ``frame``'s plan reads the target: a file under its path, or its table."""
    if contract.target_path:
        root = _location(contract.target_path)
        if any(
            _location(f) == root or _location(f).startswith(root + "/") for f in frame.inputFiles()
        ):
            return True
    if contract.target_table:
        plan = str(frame._jdf.queryExecution().analyzed().toString())
        table = re.escape(contract.target_table)
        return re.search(rf"(?<!\w){table}(?!\w)", plan) is not None
    return False


def _location(uri: str) -> str:
    """A path or URI without scheme or slashes around it: ``file:///t/x/`` and ``/t/x`` match."""
    return re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:", "", uri).strip("/")
