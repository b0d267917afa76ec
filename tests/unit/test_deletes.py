"""Soft-delete markers and the delete decision, on plain Python data (no Spark)."""

from __future__ import annotations

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.deletes import markers as delete_markers
from glue_incremental.deletes.markers import DeleteMarker, latest_is_delete, parse_marker
from glue_incremental.load.config import OPTIONAL_ARGS, LoadConfig
from glue_incremental.targets.iceberg import writer as iceberg_writer


def config(**overrides) -> LoadConfig:
    options = {
        "source": "file:///tmp/source",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "target_path": "file:///tmp/target",
        "partition_by": ("part",),
    }
    return LoadConfig(**{**options, **overrides})


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("is_deleted", DeleteMarker("is_deleted")),
        ("op=D", DeleteMarker("op", ("D",))),
        (" op = 'D' ", DeleteMarker("op", ("D",))),
        ("op in (D,X)", DeleteMarker("op", ("D", "X"))),
        ('op IN ("D", "X")', DeleteMarker("op", ("D", "X"))),
        ("", None),
    ],
)
def test_a_marker_is_a_boolean_column_or_a_column_and_its_values(text, marker):
    assert parse_marker("delete_marker", text) == marker


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("op D", "--delete_marker 'op D' is not"),
        ("op in ()", "has an empty value"),
        ("op in (D,D)", "must be distinct"),
        ("1op", "is not a boolean column"),
        ("op=", "has an empty value"),
    ],
)
def test_a_malformed_marker_is_one_line_naming_the_option(text, message):
    with pytest.raises(ArgumentError, match=message) as raised:
        parse_marker("delete_marker", text)
    assert raised.value.name == "delete_marker"
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("marker", "value", "deleted"),
    [
        (DeleteMarker("is_deleted"), True, True),
        (DeleteMarker("is_deleted"), False, False),
        (DeleteMarker("is_deleted"), None, False),
        (DeleteMarker("op", ("D", "X")), "X", True),
        (DeleteMarker("op", ("D", "X")), "U", False),
        (DeleteMarker("op", ("D",)), None, False),
        (DeleteMarker("code", ("1",)), 1, True),
    ],
)
def test_only_a_marker_value_that_means_deleted_is_a_delete(marker, value, deleted):
    assert marker.is_delete(value) is deleted


@pytest.mark.parametrize(
    "option", [{"primary_key": ("op",)}, {"watermark_column": "op"}, {"partition_by": ("op",)}]
)
def test_the_marker_cannot_be_the_key_the_watermark_or_a_partition(option):
    with pytest.raises(ArgumentError, match="--delete_marker column 'op' is also a --"):
        config(delete_marker=DeleteMarker("op", ("D",)), **option)


def test_dropping_a_marker_needs_a_marker():
    with pytest.raises(ArgumentError, match="--keep_delete_marker false needs --delete_marker"):
        config(keep_delete_marker=False)


def test_the_options_parse_from_job_arguments():
    loaded = LoadConfig.from_args(
        {
            **OPTIONAL_ARGS,
            "source": "file:///tmp/source",
            "watermark_column": "updated",
            "primary_key": "id",
            "target_path": "file:///tmp/target",
            "delete_marker": "op in (D,X)",
            "keep_delete_marker": "false",
        }
    )
    assert loaded.delete_marker == DeleteMarker("op", ("D", "X"))
    assert loaded.keep_delete_marker is False


@pytest.mark.parametrize(
    ("versions", "deleted"),
    [
        ([(10, None, False), (20, None, True)], True),  # a later delete removes the key
        ([(30, None, False), (20, None, True)], False),  # an older delete loses
        ([(10, None, False), (20, None, True), (25, None, False)], False),  # re-insert
        ([(20, 1, True), (20, 2, False)], False),  # a tie goes to the later delivery
        ([(20, 2, True), (20, 1, False)], True),
        ([(None, None, True), (5, None, False)], False),  # a null watermark ranks lowest
        ([], False),
    ],
)
def test_a_key_is_deleted_when_its_latest_version_is_a_delete(versions, deleted):
    assert latest_is_delete(versions) is deleted


def test_the_iceberg_merge_deletes_a_matched_delete_and_never_inserts_one():
    statement = iceberg_writer.merge_statement(
        "t.orders", "view", ["id", "value", delete_markers.DELETED], ["id"], delete_markers.DELETED
    )
    assert f"WHEN MATCHED AND s.`{delete_markers.DELETED}` THEN DELETE" in statement
    assert (
        f"WHEN NOT MATCHED AND NOT s.`{delete_markers.DELETED}` THEN INSERT (`id`, `value`)"
        in statement
    )
    assert f"t.`{delete_markers.DELETED}`" not in statement
    assert statement.index("THEN DELETE") < statement.index("THEN UPDATE")
