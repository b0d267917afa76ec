"""``History``, the custom-job API's declaration of ``job.write(..., history=...)``: checked
at construction and bound to the write's keys and ``order_by``, each refusal one line."""

from __future__ import annotations

import pytest
from glue_incremental.custom import DeclarationError, History
from glue_incremental.engine.history import bind
from glue_incremental.history.options import HistoryOptions


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"valid_to": "valid_from"}, "History(valid_from='valid_from'): names two of the added"),
        ({"is_current": " "}, "History(is_current=' '): must be a column name"),
        ({"columns": ()}, "History(columns=''): is empty: name at least one column"),
        ({"columns": ("segment", "valid_to")}, "History(columns='valid_to'): is an added"),
    ],
)
def test_a_history_declaration_that_cannot_work_is_refused_in_one_line(arguments, line):
    with pytest.raises(DeclarationError) as refused:
        History(**arguments)

    assert str(refused.value).startswith(line)
    assert "\n" not in str(refused.value)


def test_a_history_declaration_is_bound_to_the_writes_keys_and_order_by():
    options = bind("dim", History(columns="segment"), ["id"], "updated")

    assert options == HistoryOptions("updated", ("segment",), primary_key=("id",))


def test_versions_are_bounded_by_order_by_so_another_watermark_is_refused():
    with pytest.raises(
        DeclarationError, match=r"^write\('dim', history=\.\.\.\): watermark_column"
    ):
        bind("dim", HistoryOptions("changed_at"), ["id"], "updated")


def test_a_key_or_order_by_named_like_an_added_column_is_refused_at_the_write():
    with pytest.raises(DeclarationError) as refused:
        bind("dim", History(valid_from="updated"), ["id"], "updated")

    assert str(refused.value) == (
        "write('dim', history=...): valid_from 'updated' is also a key or watermark column"
    )
