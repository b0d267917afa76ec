"""The transform's contract on plain schemas and names: no Spark session needed."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.errors import GlueIncrementalError
from glue_incremental.transforms.function import (
    Contract,
    TransformContractError,
    TransformFailed,
    TransformNotFound,
    TransformSpec,
    apply,
    check_schema,
    reads_target,
)
from pyspark.sql.types import LongType, StringType, StructField, StructType

BEFORE = StructType(
    [
        StructField("id", LongType()),
        StructField("part", StringType()),
        StructField("updated", LongType()),
        StructField("value", StringType()),
    ]
)
PROTECTED = ("id", "updated", "part")
HARNESS = "tests.harness.user_transforms"


def schema(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, kind) for name, kind in fields])  # type: ignore[arg-type]


def test_a_spec_is_module_colon_function_and_says_itself_back():
    spec = TransformSpec.parse("transform", " teams.orders.masks:mask_pii ")
    assert spec == TransformSpec("teams.orders.masks", "mask_pii")
    assert str(spec) == "teams.orders.masks:mask_pii"
    assert TransformSpec.parse("transform", None) is None
    assert TransformSpec.parse("transform", "") is None


@pytest.mark.parametrize(
    "raw", ["teams.orders", "teams.orders:", ":mask", "teams/orders:mask", "a:b:c"]
)
def test_a_malformed_spec_is_refused_at_construction_naming_the_argument(raw):
    with pytest.raises(
        ArgumentError, match=r"^--transform .* is not package\.module:function"
    ) as raised:
        TransformSpec.parse("transform", raw)
    assert raised.value.name == "transform"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "teams_missing.orders:mask",
            "module 'teams_missing.orders' does not import (ModuleNotFoundError",
        ),
        (f"{HARNESS}:no_such_function", f"{HARNESS!r} has no 'no_such_function'"),
        (f"{HARNESS}:not_callable", "'not_callable' is not callable"),
    ],
    ids=["module_missing", "function_missing", "not_callable"],
)
def test_a_transform_that_cannot_be_loaded_is_one_line_naming_it(spec, message):
    with pytest.raises(TransformNotFound) as raised:
        TransformSpec.parse("transform", spec).load()  # type: ignore[union-attr]
    text = str(raised.value)
    assert text.startswith(f"--transform {spec}: {message}")
    assert text.endswith("nothing was written") and "\n" not in text
    assert raised.value.function == spec
    assert isinstance(raised.value, GlueIncrementalError)


def test_added_and_dropped_other_columns_pass_the_contract():
    after = schema(
        ("id", LongType()), ("part", StringType()), ("updated", LongType()), ("tier", StringType())
    )
    check_schema("m:f", BEFORE, after, PROTECTED)


@pytest.mark.parametrize(
    ("after", "message"),
    [
        (
            schema(("part", StringType()), ("updated", LongType())),
            "the result drops column 'id', which the job needs",
        ),
        (
            schema(("id", LongType()), ("part", StringType()), ("updated", StringType())),
            "the result changes column 'updated' from bigint to string",
        ),
        (
            schema(("id", LongType()), ("PART", StringType()), ("updated", LongType())),
            "the result drops column 'part'",
        ),
    ],
    ids=["key_dropped", "watermark_retyped", "partition_renamed"],
)
def test_a_protected_column_dropped_renamed_or_retyped_breaks_the_contract(after, message):
    with pytest.raises(TransformContractError, match=f"^--transform m:f: {message}") as raised:
        check_schema("m:f", BEFORE, after, PROTECTED)
    assert raised.value.function == "m:f"


def test_a_protected_column_the_source_lacks_is_left_to_the_jobs_own_check():
    check_schema("m:f", BEFORE, BEFORE, (*PROTECTED, "_delivery_file"))


def test_without_a_transform_or_rows_nothing_is_applied():
    rows = object()
    assert apply(None, rows, Contract(PROTECTED)) is rows  # type: ignore[arg-type]
    assert apply(TransformSpec(HARNESS, "raises"), None, Contract(PROTECTED)) is None


def test_an_exception_in_the_function_is_its_first_line_and_a_non_dataframe_is_refused():
    with pytest.raises(TransformFailed) as raised:
        apply(TransformSpec(HARNESS, "raises"), object(), Contract(PROTECTED))  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"--transform {HARNESS}:raises: raised ValueError: unknown customer tier 'gold'; nothing was written"
    )
    with pytest.raises(TransformContractError, match="returned NoneType, not a DataFrame"):
        apply(TransformSpec(HARNESS, "returns_none"), _Counted(), Contract(PROTECTED))  # type: ignore[arg-type]


class _Counted:
    def count(self) -> int:
        return 0


class _Files:
    def __init__(self, *files: str) -> None:
        self.files = list(files)

    def inputFiles(self) -> list[str]:
        return self.files


@pytest.mark.parametrize(
    ("target", "files", "reads"),
    [
        ("/data/orders", ["file:///data/orders/part=a/x.parquet"], True),
        ("file:///data/orders/", ["file:/data/orders/_index/k.parquet"], True),
        ("s3://bucket/orders", ["s3://bucket/orders/part=a/x.parquet"], True),
        ("s3://bucket/orders", ["s3://bucket/orders_raw/x.json"], False),
        ("s3://bucket/orders", [], False),
    ],
)
def test_a_file_under_the_target_path_is_reading_the_target(target, files, reads):
    assert reads_target(_Files(*files), Contract(PROTECTED, target_path=target)) is reads  # type: ignore[arg-type]
