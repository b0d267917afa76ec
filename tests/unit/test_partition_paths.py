"""One reading of partition directory names, the one Spark uses (Hive's unescaping)."""

from __future__ import annotations

from glue_incremental.partitions.paths import (
    HIVE_NULL,
    dir_to_values,
    directory_name,
    is_hidden,
    literal,
    parse_name,
)
from hypothesis import given
from hypothesis import strategies as st


@given(name=st.text(min_size=1), value=st.text(min_size=1))
def test_a_directory_name_reads_back_as_the_values_it_was_written_from(name, value):
    assert parse_name(directory_name(name, value)) == ((name, value),)


def test_percent_sequences_decode_byte_by_byte_as_spark_reads_them_not_as_utf8_urls():
    # Spark's partition discovery turns %C3 and %A3 into two characters; a URL
    # decoder would give one ("São"), and the listing would name a partition
    # that the data read by Spark does not have.
    assert parse_name("city=S%C3%A3o") == (("city", "S\u00c3\u00a3o"),)


def test_null_and_empty_values_share_hive_s_default_partition():
    assert directory_name("p", None) == directory_name("p", "") == f"p={HIVE_NULL}"
    assert dir_to_values(f"p={HIVE_NULL}/q=a%2Fb", ["p", "q"]) == {"p": None, "q": "a/b"}


def test_names_without_a_key_are_not_partitions():
    assert parse_name("_temporary") == parse_name("=x") == ()


def test_hidden_names_are_the_ones_spark_skips_and_an_underscore_partition_is_not_one():
    hidden = ["_SUCCESS", "_staging", "_index", ".part-0.crc", "x._COPYING_", "a_$folder$"]
    visible = ["_ingest_date=2024-01-01", "_p=a", "part=a", "part-0.parquet"]
    assert [name for name in hidden + visible if is_hidden(name)] == hidden


def test_a_literal_path_escapes_every_glob_character_and_nothing_else():
    assert literal("file:/out[1]/{t}/a*b?c\\d") == "file:/out\\[1\\]/\\{t\\}/a\\*b\\?c\\\\d"
    assert literal("s3a://b/k=v%2F/x.json") == "s3a://b/k=v%2F/x.json"
