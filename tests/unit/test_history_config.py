"""The load's history options (`--history scd2`, `--history_columns`): declared once in
``HISTORY_OPTIONS``, validated when ``LoadConfig`` is built, each refusal one line naming
the argument."""

from __future__ import annotations

from typing import Any

import pytest
from glue_incremental.args import ArgumentError, typed_values
from glue_incremental.history.options import HistoryOptions
from glue_incremental.load.config import HISTORY_OPTIONS, LoadConfig

BASE: dict[str, Any] = {
    "source": "/data/customers",
    "watermark_column": "updated",
    "primary_key": ("id",),
    "target_path": "/lake/customers",
}


def test_history_arguments_parse_into_the_core_options():
    values = typed_values(HISTORY_OPTIONS, {"history": "SCD2", "history_columns": "segment,tier"})
    config = LoadConfig(**BASE, **values)
    assert config.history_options == HistoryOptions(
        "updated", ("segment", "tier"), primary_key=("id",)
    )


def test_without_history_the_load_keeps_the_latest_version():
    assert LoadConfig(**BASE, **typed_values(HISTORY_OPTIONS, {})).history_options is None


def test_empty_history_columns_track_every_column_but_the_watermark():
    config = LoadConfig(**BASE, **typed_values(HISTORY_OPTIONS, {"history": "scd2"}))
    assert config.history_options is not None
    assert config.history_options.history_columns is None


@pytest.mark.parametrize(
    ("options", "named", "says"),
    [
        ({"history": "scd3"}, "history", "--history 'scd3' is not one of scd2"),
        ({"history_columns": ("segment",)}, "history_columns", "needs --history scd2"),
        (
            {"history": "scd2", "history_columns": ("updated",)},
            "history_columns",
            "--history_columns: 'updated' is the watermark column",
        ),
        ({"history": "scd2", "reconcile_every": 3}, "history", "cannot reconcile yet"),
        (
            {"history": "scd2", "primary_key": ("is_current",)},
            "history",
            "the is_current column 'is_current' is also a key or watermark column",
        ),
    ],
)
def test_a_history_option_that_cannot_work_is_one_line_naming_it(
    options: dict[str, Any], named: str, says: str
):
    with pytest.raises(ArgumentError) as raised:
        LoadConfig(**{**BASE, **options})
    assert raised.value.name == named
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)
