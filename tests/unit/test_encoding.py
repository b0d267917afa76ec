"""How watermark values are stored: lossless, versioned JSON (no AWS involved)."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from glue_incremental.errors import UnreadableState
from glue_incremental.watermarks.encoding import (
    ENCODING_VERSION,
    InvalidWatermarkValue,
    decode,
    encode,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.harness.watermarks import VALUE_NAMES, same, watermark_values

# -- strategies (any value JSON can carry back, plus the tagged types) -----------------------

watermark_maps = st.dictionaries(
    VALUE_NAMES, watermark_values(max_size=4, max_leaves=12), max_size=5
)


# -- round trips -------------------------------------------------------------------------------


@given(watermark_maps)
def test_property_any_storable_value_round_trips_exactly(values_in):
    assert same(values_in, decode(encode(values_in)))


@given(st.integers(min_value=-(2**200), max_value=2**200))
def test_property_ints_beyond_2_pow_53_round_trip_exactly(number):
    assert decode(encode({"id": number}))["id"] == number


@pytest.mark.parametrize("number", [0.1, 1e-300, 5e-324, -0.0, 1.7976931348623157e308, 2.0**53 + 2])
def test_floats_round_trip_bit_for_bit(number):
    back = decode(encode({"x": number}))["x"]
    assert isinstance(back, float) and back.hex() == number.hex()


def test_decimal_keeps_its_exponent_and_trailing_zeros():
    back = decode(encode({"price": Decimal("1.10"), "big": Decimal("1E+5")}))
    assert str(back["price"]) == "1.10" and back["price"].as_tuple().exponent == -2
    assert str(back["big"]) == "1E+5"


def test_aware_datetime_is_normalised_to_utc_and_keeps_microseconds():
    local = datetime(2024, 5, 1, 14, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    back = decode(encode({"last_modified": local}))["last_modified"]
    assert back == local  # the same instant
    assert back.tzinfo == UTC and back.hour == 12 and back.microsecond == 123456


def test_date_round_trips_as_a_date_not_a_datetime():
    back = decode(encode({"day": date(2024, 2, 29)}))["day"]
    assert type(back) is date and back == date(2024, 2, 29)


def test_nested_lists_and_dicts_round_trip():
    values_in = {"cursor": {"ids": [1, 2, [3, {"a": None}]], "flags": {"x": True}}}
    assert decode(encode(values_in)) == values_in


# -- rejected values: the message names the attribute ----------------------------------------


def test_naive_datetime_is_rejected_naming_the_attribute():
    with pytest.raises(InvalidWatermarkValue, match=r"naive datetime") as caught:
        encode({"cursor": {"since": [datetime(2024, 1, 1)]}})
    assert caught.value.path == "watermarks.cursor.since[0]"
    assert "watermarks.cursor.since[0]" in str(caught.value)


def test_tuple_is_rejected_because_json_would_return_a_list():
    with pytest.raises(InvalidWatermarkValue, match=r"lists") as caught:
        encode({"key": (1, "a")})
    assert caught.value.path == "watermarks.key"
    assert "use a list" in str(caught.value)


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("Infinity")]
)
def test_nan_and_infinity_are_rejected(bad):
    with pytest.raises(InvalidWatermarkValue, match=r"NaN and infinity"):
        encode({"x": bad})


@pytest.mark.parametrize("values_in", [{"$datetime": "x"}, {"a": {"$date": "2024-01-01"}}])
def test_keys_starting_with_dollar_are_reserved(values_in):
    with pytest.raises(InvalidWatermarkValue, match=r"reserved"):
        encode(values_in)


def test_non_string_keys_and_unknown_types_are_rejected():
    with pytest.raises(InvalidWatermarkValue, match=r"keys must be strings"):
        encode({"a": {1: "x"}})
    with pytest.raises(InvalidWatermarkValue, match=r"type set is not JSON-encodable"):
        encode({"a": {1, 2}})
    with pytest.raises(InvalidWatermarkValue, match=r"mapping"):
        encode([("a", 1)])  # type: ignore[arg-type]


def test_datetime_whose_utc_instant_is_out_of_range_is_rejected_cleanly():
    east_of_utc = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))
    with pytest.raises(InvalidWatermarkValue, match=r"outside the years"):
        encode({"since": east_of_utc})


# -- the stored format ---------------------------------------------------------------------------


def test_stored_encoding_carries_its_version():
    payload = json.loads(encode({"n": 1}))
    assert payload == {"v": ENCODING_VERSION, "values": {"n": 1}}
    assert ENCODING_VERSION == 1


def test_a_future_encoding_version_asks_for_an_upgrade():
    with pytest.raises(ValueError, match=r"v=2 is newer.*upgrade glue_incremental"):
        decode(json.dumps({"v": 2, "values": {"n": 1}}))


@pytest.mark.parametrize("text", ['{"values": {}}', "[1]", '{"v": true, "values": {}}'])
def test_a_payload_that_is_not_this_encoding_is_reported_as_such(text):
    with pytest.raises(ValueError, match=r"not a glue_incremental encoding"):
        decode(text)


def test_none_and_null_mean_a_reset_state():
    assert decode(None) is None
    assert decode("null") is None


@pytest.mark.parametrize("values", ["[1, 2]", '"text"', "7"])
def test_a_payload_whose_values_are_not_a_mapping_is_unreadable(values):
    with pytest.raises(UnreadableState, match=r"values are not a mapping"):
        decode(f'{{"v": 1, "values": {values}}}')
