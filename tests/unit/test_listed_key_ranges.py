"""A listed-key filter's integers as ranges plus the rest: exactly the keys, few terms."""

from glue_incremental.keys.index import MAX_KEY_RANGES, MIN_RUN, integer_runs
from hypothesis import given
from hypothesis import strategies as st


def _covered(ranges: list[tuple[int, int]], singles: list[int]) -> list[int]:
    return sorted([v for low, high in ranges for v in range(low, high + 1)] + singles)


def test_consecutive_keys_become_one_range():
    assert integer_runs(range(500, 10_500)) == ([(500, 10_499)], [])


def test_scattered_keys_stay_a_list():
    assert integer_runs([9, 3, 7, 3, 1]) == ([], [1, 3, 7, 9])


def test_a_short_run_stays_in_the_list_beside_a_long_one():
    ranges, singles = integer_runs([*range(100, 100 + MIN_RUN), 1, 2, 3])
    assert (ranges, singles) == ([(100, 100 + MIN_RUN - 1)], [1, 2, 3])


def test_only_the_longest_runs_become_ranges_when_there_are_many():
    values = [v for start in range(0, 100 * 1_000, 1_000) for v in range(start, start + 10)]
    values += list(range(500_000, 500_050))  # the longest run
    ranges, singles = integer_runs(values)
    assert len(ranges) == MAX_KEY_RANGES and (500_000, 500_049) in ranges
    assert _covered(ranges, singles) == sorted(values)


@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-50, 50), max_size=300))
def test_property_ranges_and_the_rest_are_exactly_the_distinct_keys(values):
    ranges, singles = integer_runs(values)
    assert _covered(ranges, singles) == sorted(set(values))
    assert len(ranges) <= MAX_KEY_RANGES
    assert all(high - low + 1 >= MIN_RUN for low, high in ranges)
    assert ranges == sorted(ranges) and singles == sorted(singles)
