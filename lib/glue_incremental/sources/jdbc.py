"""Incremental reads from a relational table over JDBC, with the predicate pushed down.

Rows are read by an explicit watermark column: ``lower_bound`` None is a full load,
otherwise ``watermark_column >= lower_bound`` (inclusive: the caller merges by key)
and ``< upper_bound`` (exclusive, so replayed ranges tile; ``<=`` with
``upper_inclusive``, for a bound that is itself a watermark value read). Null watermarks are
re-read every run or excluded (``include_null_watermarks``). The database filters
(a ``dbtable`` subquery); bounds are typed SQL literals, identifiers double-quoted.
Sessions run in UTC. A source that cannot be reached raises ``SourceUnavailable``
with no password in it. Design: ``docs/jdbc-source.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal

from py4j.java_gateway import JavaObject
from pyspark.sql import DataFrame, SparkSession

from glue_incremental.errors import GlueIncrementalError
from glue_incremental.io.spark_steps import named
from glue_incremental.sources import credentials
from glue_incremental.sources.jdbc_urls import redact_url

__all__ = [
    "JdbcSource",
    "SourceUnavailable",
    "column_names",
    "incremental_query",
    "literal",
    "quote_identifier",
    "quote_table",
    "read_incremental",
    "read_table",
    "redact_url",
]

SUBQUERY_ALIAS = "src"

# Drivers inferred from the URL's subprotocol when ``JdbcSource.driver`` is None.
_DRIVERS = {"postgresql": "org.postgresql.Driver"}

# Statements run on every JDBC session Spark opens for a read, per subprotocol.
_SESSION_INIT = {"postgresql": "SET TIME ZONE 'UTC'"}

_URL = re.compile(r"^jdbc:([A-Za-z0-9][A-Za-z0-9_+.-]*):", re.ASCII)
_BARE_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*", re.ASCII)
# SQLSTATEs that mean "this table is not there" (PostgreSQL, ODBC/SQL standard).
_MISSING_TABLE_STATES = {"42P01", "42S02"}


class SourceUnavailable(GlueIncrementalError, RuntimeError):
    """The JDBC source could not be read: unreachable, bad credentials, or no such table.

    ``url`` never contains a password; ``reason`` is the root cause, on one line.
    """

    def __init__(
        self,
        url: str,
        reason: str,
        *,
        table: str | None = None,
        sqlstate: str | None = None,
    ) -> None:
        self.url = url
        self.reason = reason
        self.table = table
        self.sqlstate = sqlstate
        where = f"{url} (table {table})" if table else url
        super().__init__(f"JDBC source {where} unavailable: {reason}")


@dataclass(frozen=True)
class JdbcSource:
    """Where to read: a JDBC URL and a (optionally schema-qualified) table.

    ``table`` is ``name``, ``schema.name`` or ``catalog.schema.name``; each part
    is a plain identifier (letters, digits, ``_``, ``$``) or a double-quoted one
    (``"My Table"``, ``""`` for an embedded quote). ``num_partitions > 1``
    requires ``partition_column`` (numeric, date or timestamp).
    """

    url: str
    table: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    driver: str | None = None
    fetch_size: int = 10_000
    num_partitions: int = 1
    partition_column: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not _URL.match(self.url):
            raise ValueError(
                f"JDBC url must look like 'jdbc:<subprotocol>:...' "
                f"(e.g. jdbc:postgresql://host:5432/db), got {redact_url(str(self.url))!r}"
            )
        table_parts(self.table)  # validates
        if isinstance(self.fetch_size, bool) or not isinstance(self.fetch_size, int):
            raise TypeError(f"fetch_size must be an int, got {self.fetch_size!r}")
        if self.fetch_size < 1:
            raise ValueError(f"fetch_size must be >= 1, got {self.fetch_size}")
        if isinstance(self.num_partitions, bool) or not isinstance(self.num_partitions, int):
            raise TypeError(f"num_partitions must be an int, got {self.num_partitions!r}")
        if self.num_partitions < 1:
            raise ValueError(f"num_partitions must be >= 1, got {self.num_partitions}")
        if self.num_partitions > 1 and not self.partition_column:
            raise ValueError("num_partitions > 1 needs partition_column for parallel reads")
        if self.partition_column is not None:
            quote_identifier(self.partition_column)  # validates

    def __repr__(self) -> str:
        return (
            f"JdbcSource(url={redact_url(self.url)!r}, table={self.table!r}, user={self.user!r}, "
            f"driver={self.driver!r}, fetch_size={self.fetch_size}, "
            f"num_partitions={self.num_partitions}, partition_column={self.partition_column!r})"
        )

    @property
    def subprotocol(self) -> str:
        match = _URL.match(self.url)
        assert match is not None  # validated in __post_init__
        return match.group(1).lower()

    @property
    def driver_class(self) -> str | None:
        """``driver`` if given, else the one inferred from the URL (None: let JDBC find it)."""
        return self.driver or _DRIVERS.get(self.subprotocol)

    @property
    def safe_url(self) -> str:
        """The URL without any password in it (for messages and logs)."""
        return redact_url(self.url)


# ---------------------------------------------------------------------------
# SQL rendering


def quote_identifier(name: str) -> str:
    """``name`` as one double-quoted SQL identifier (embedded quotes doubled)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"SQL identifier must be a non-empty string, got {name!r}")
    if "\x00" in name:
        raise ValueError(f"SQL identifier must not contain NUL characters: {name!r}")
    return '"' + name.replace('"', '""') + '"'


def table_parts(table: str) -> list[str]:
    """Split ``schema.table`` into unquoted parts; parts may be double-quoted."""
    if not isinstance(table, str) or not table.strip():
        raise ValueError(f"table must be a non-empty string, got {table!r}")
    parts: list[str] = []
    position, length = 0, len(table)
    while True:
        if position < length and table[position] == '"':
            end = position + 1
            chars: list[str] = []
            while True:
                quote = table.find('"', end)
                if quote < 0:
                    raise ValueError(f"table {table!r}: unterminated quoted identifier")
                chars.append(table[end:quote])
                if quote + 1 < length and table[quote + 1] == '"':
                    chars.append('"')
                    end = quote + 2
                    continue
                position = quote + 1
                break
            part = "".join(chars)
            if not part or "\x00" in part:
                raise ValueError(f"table {table!r}: empty or invalid quoted identifier")
        else:
            match = _BARE_IDENTIFIER.match(table, position)
            if not match:
                raise ValueError(
                    f"table {table!r} is not a valid [catalog.][schema.]table name: parts must "
                    'be identifiers (letters, digits, _, $) or double-quoted ("My Table")'
                )
            part, position = match.group(0), match.end()
        parts.append(part)
        if position == length:
            break
        if table[position] != ".":
            raise ValueError(f"table {table!r}: unexpected {table[position]!r} at {position}")
        position += 1
    if len(parts) > 3:
        raise ValueError(f"table {table!r} has more than 3 dotted parts")
    return parts


def quote_table(table: str) -> str:
    """The validated table name with every part double-quoted."""
    return ".".join(quote_identifier(part) for part in table_parts(table))


def literal(value: object, *, subprotocol: str = "postgresql") -> str:
    """``value`` as a typed SQL literal; raises TypeError for unsupported types."""
    if isinstance(value, bool) or value is None:
        raise TypeError(f"cannot use {value!r} as a watermark bound")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"watermark bound must be finite, got {value!r}")
        return repr(value)  # shortest repr that round-trips exactly
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"watermark bound must be finite, got {value!r}")
        return format(value, "f")
    if isinstance(value, datetime):  # before date: datetime is a date
        if value.tzinfo is not None and value.tzinfo.utcoffset(value) is not None:
            return f"TIMESTAMP WITH TIME ZONE '{_timestamp_text(value.astimezone(UTC))}+00:00'"
        return f"TIMESTAMP '{_timestamp_text(value)}'"
    if isinstance(value, date):
        return f"DATE '{value.year:04d}-{value.month:02d}-{value.day:02d}'"
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("string watermark bound must not contain NUL characters")
        quoted = value.replace("'", "''")
        if "\\" in value:
            if subprotocol != "postgresql":
                raise ValueError(
                    "string watermark bounds containing a backslash are only supported "
                    "for PostgreSQL"
                )
            # E'' strings treat backslashes as escapes whatever standard_conforming_strings
            # says, so doubling them keeps the value literal in every server configuration.
            return "E'" + quoted.replace("\\", "\\\\") + "'"
        return "'" + quoted + "'"
    raise TypeError(
        f"unsupported watermark bound type {type(value).__name__} ({value!r}): use int, "
        "float, Decimal, date, datetime or str"
    )


def _timestamp_text(value: datetime) -> str:
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def watermark_predicate(
    source: JdbcSource,
    *,
    watermark_column: str,
    lower_bound: object,
    upper_bound: object = None,
    include_null_watermarks: bool = True,
    upper_inclusive: bool = False,
) -> str | None:
    """The WHERE condition (without ``WHERE``), or None when every row is wanted."""
    column = quote_identifier(watermark_column)
    conditions = []
    if lower_bound is not None:
        conditions.append(f"{column} >= {literal(lower_bound, subprotocol=source.subprotocol)}")
    if upper_bound is not None:
        below = "<=" if upper_inclusive else "<"
        conditions.append(
            f"{column} {below} {literal(upper_bound, subprotocol=source.subprotocol)}"
        )
    if not conditions:
        return None if include_null_watermarks else f"{column} IS NOT NULL"
    bounded = " AND ".join(conditions)
    if include_null_watermarks:
        return f"(({bounded}) OR {column} IS NULL)"
    return f"({bounded})"


def incremental_query(
    source: JdbcSource,
    *,
    watermark_column: str,
    lower_bound: object,
    upper_bound: object = None,
    include_null_watermarks: bool = True,
    upper_inclusive: bool = False,
    columns: Sequence[str] | None = None,
) -> str:
    """The SELECT the database runs for one incremental read (no alias, no parentheses).

    ``lower_bound`` is inclusive, ``upper_bound`` exclusive unless ``upper_inclusive``;
    see the module docstring.
    """
    if isinstance(columns, str):
        raise TypeError("columns must be a sequence of column names, not one string")
    select = "*" if columns is None else ", ".join(quote_identifier(c) for c in columns)
    if columns is not None and not columns:
        raise ValueError("columns must name at least one column (or be None for all)")
    sql = f"SELECT {select} FROM {quote_table(source.table)}"
    predicate = watermark_predicate(
        source,
        watermark_column=watermark_column,
        lower_bound=lower_bound,
        upper_bound=upper_bound,
        include_null_watermarks=include_null_watermarks,
        upper_inclusive=upper_inclusive,
    )
    return sql if predicate is None else f"{sql} WHERE {predicate}"


def _subquery(sql: str, alias: str = SUBQUERY_ALIAS) -> str:
    return f"({sql}) AS {alias}"


# ---------------------------------------------------------------------------
# Reading with Spark


def read_incremental(
    spark: SparkSession,
    source: JdbcSource,
    *,
    watermark_column: str,
    lower_bound: object,
    upper_bound: object = None,
    include_null_watermarks: bool = True,
    upper_inclusive: bool = False,
) -> DataFrame:
    """A DataFrame of the rows in the watermark range, filtered by the database.

    With ``num_partitions > 1`` the rows are read in parallel ranges of
    ``partition_column`` whose bounds come from a ``SELECT MIN, MAX`` over the
    same predicate (also run by the database). Raises ``SourceUnavailable``
    when the database, the credentials or the table are not usable.
    """
    query = incremental_query(
        source,
        watermark_column=watermark_column,
        lower_bound=lower_bound,
        upper_bound=upper_bound,
        include_null_watermarks=include_null_watermarks,
        upper_inclusive=upper_inclusive,
    )
    options = _options(source, dbtable=_subquery(query))
    if source.num_partitions > 1 and source.partition_column:
        bounds = _partition_bounds(
            spark,
            source,
            watermark_column=watermark_column,
            lower_bound=lower_bound,
            upper_bound=upper_bound,
            include_null_watermarks=include_null_watermarks,
            upper_inclusive=upper_inclusive,
        )
        if bounds is not None:
            options.update(
                partitionColumn=source.partition_column,
                lowerBound=bounds[0],
                upperBound=bounds[1],
                numPartitions=str(source.num_partitions),
            )
    return _load(spark, source, options)


def key_query(source: JdbcSource, key_columns: Sequence[str]) -> str:
    """``SELECT "k1", "k2" FROM "schema"."table"``: the reconcile reads only the keys."""
    columns = ", ".join(quote_identifier(name) for name in key_columns)
    return f"SELECT {columns} FROM {quote_table(source.table)}"


def read_keys(spark: SparkSession, source: JdbcSource, key_columns: Sequence[str]) -> DataFrame:
    """The table's primary keys, selected by the database (no other column crosses the wire)."""
    query = key_query(source, key_columns)
    return _load(spark, source, _options(source, dbtable=_subquery(query, "source_keys")))


def read_table(spark: SparkSession, source: JdbcSource) -> DataFrame:
    """The whole table (a small reference table read on every run)."""
    return _load(spark, source, _options(source, dbtable=quote_table(source.table)))


def column_names(spark: SparkSession, source: JdbcSource) -> list[str]:
    """The table's column names, from Spark's schema probe (``... WHERE 1=0``): no rows read."""
    frame = _load(spark, source, _options(source, dbtable=quote_table(source.table)))
    return list(frame.columns)


def _partition_bounds(
    spark: SparkSession,
    source: JdbcSource,
    *,
    watermark_column: str,
    lower_bound: object,
    upper_bound: object,
    include_null_watermarks: bool,
    upper_inclusive: bool = False,
) -> tuple[str, str] | None:
    """Spark's ``lowerBound``/``upperBound`` strings, or None when no row has a value.

    Spark only uses the bounds to compute strides (the first and last ranges are
    open-ended), so rows committed after this query are still read.
    """
    column = quote_identifier(source.partition_column or "")
    predicate = watermark_predicate(
        source,
        watermark_column=watermark_column,
        lower_bound=lower_bound,
        upper_bound=upper_bound,
        include_null_watermarks=include_null_watermarks,
        upper_inclusive=upper_inclusive,
    )
    sql = f'SELECT MIN({column}) AS "lo", MAX({column}) AS "hi" FROM {quote_table(source.table)}'
    if predicate is not None:
        sql = f"{sql} WHERE {predicate}"
    frame = _load(spark, source, _options(source, dbtable=_subquery(sql, "bounds")))
    kind = frame.schema["lo"].dataType.typeName()
    if kind in ("date", "timestamp", "timestamp_ntz") or kind in (
        "byte",
        "short",
        "integer",
        "long",
    ):
        # Cast to text inside Spark: session time zone (UTC), full microseconds.
        expressions = ["CAST(lo AS STRING) AS lo", "CAST(hi AS STRING) AS hi"]
    elif kind in ("float", "double") or kind.startswith("decimal"):
        # Spark parses numeric bounds as longs: widen to whole numbers.
        expressions = [
            "CAST(CAST(FLOOR(lo) AS BIGINT) AS STRING) AS lo",
            "CAST(CAST(CEIL(hi) AS BIGINT) AS STRING) AS hi",
        ]
    else:
        raise ValueError(
            f"partition_column {source.partition_column!r} has type {kind}; "
            "parallel reads need a numeric, date or timestamp column"
        )
    try:
        with named(frame.sparkSession, "read the bounds of --jdbc_partition_column"):
            row = frame.selectExpr(*expressions).collect()[0]
    except Exception as error:
        translated = _translate(error, source)
        if translated is None:
            raise
        raise translated from None
    if row["lo"] is None or row["hi"] is None:
        return None
    return row["lo"], row["hi"]


def _options(source: JdbcSource, *, dbtable: str) -> dict[str, str]:
    options = {"url": source.url, "dbtable": dbtable, "fetchsize": str(source.fetch_size)}
    if source.user is not None:
        options["user"] = source.user
    if source.password is not None:
        options["password"] = source.password
    if source.driver_class:
        options["driver"] = source.driver_class
    init = _SESSION_INIT.get(source.subprotocol)
    if init:
        options["sessionInitStatement"] = init
    return options


def _load(spark: SparkSession, source: JdbcSource, options: dict[str, str]) -> DataFrame:
    """``spark.read.jdbc`` with Java failures turned into ``SourceUnavailable``."""
    try:
        with credentials.quiet_logs(credentials.JVM_LOGGERS):
            return spark.read.format("jdbc").options(**options).load()
    except Exception as error:
        translated = _translate(error, source)
        if translated is None:
            raise
        raise translated from None


# ---------------------------------------------------------------------------
# Errors


def _java_exception(error: BaseException) -> JavaObject | None:
    java = getattr(error, "java_exception", None)  # py4j.protocol.Py4JJavaError
    if java is None:
        java = getattr(error, "_origin", None)  # pyspark CapturedException
    return java


def _translate(error: BaseException, source: JdbcSource) -> SourceUnavailable | None:
    java = _java_exception(error)
    if java is None:
        return None
    chain = []
    seen = 0
    current = java
    while current is not None and seen < 20:
        chain.append(current)
        seen += 1
        try:
            cause = current.getCause()
        except Exception:
            break
        if cause is None or cause.equals(current):
            break
        current = cause
    sqlstate = None
    for link in chain:
        try:
            state = link.getSQLState()
        except Exception:
            continue
        if state:
            sqlstate = str(state)
            break
    reason = _one_line(_message(chain[-1]))
    if sqlstate in _MISSING_TABLE_STATES:
        reason = f"table {source.table} not found ({reason})"
    if source.password:
        reason = reason.replace(source.password, "***")
    return SourceUnavailable(source.safe_url, reason, table=source.table, sqlstate=sqlstate)


def _message(java: JavaObject) -> str:
    try:
        message = java.getMessage()
    except Exception:
        message = None
    if message:
        return str(message)
    try:
        return str(java.getClass().getName())
    except Exception:
        return "unknown error"


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return " ".join(first.split()) or "unknown error"


def first_value(spark: SparkSession, source: JdbcSource, sql: str) -> object:
    """The first column of the first row ``sql`` returns (run by the database), or None."""
    frame = _load(spark, source, _options(source, dbtable=_subquery(sql, "first_value")))
    try:
        rows = frame.limit(1).collect()
    except Exception as error:
        translated = _translate(error, source)
        if translated is None:
            raise
        raise translated from None
    return rows[0][0] if rows else None
