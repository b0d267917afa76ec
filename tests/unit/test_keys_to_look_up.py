"""Which keys a Parquet merge asks the key index about (``targets.parquet.moves``)."""

from __future__ import annotations

from glue_incremental.keys.incoming import IncomingKeys
from glue_incremental.keys.ranges import KeyRange
from glue_incremental.targets.parquet.moves import keys_to_look_up

INCOMING, READ = object(), object()  # frames these paths never touch
SURVEYED = IncomingKeys(partitions=(("a",),), keys=(1, 2))


def test_every_incoming_key_is_looked_up_unless_the_caller_names_the_rows_read():
    asked = keys_to_look_up(INCOMING, SURVEYED, None, None, ["id"], ["part"])  # type: ignore[arg-type]

    assert asked == (INCOMING, SURVEYED)


def test_a_run_that_read_no_row_asks_about_no_key_whatever_else_it_merges():
    nothing = KeyRange(low=None, high=None, nulls=0, rows=0)

    asked = keys_to_look_up(INCOMING, SURVEYED, READ, nothing, ["id"], ["part"])  # type: ignore[arg-type]

    assert asked == (READ, IncomingKeys(partitions=(), keys=()))
