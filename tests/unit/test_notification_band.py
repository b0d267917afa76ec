"""The band a notification run keeps for files it did not list (pure: no emulator)."""

from __future__ import annotations

from glue_incremental.sources import discovery, files
from glue_incremental.sources.files import FileBookmark, FileReadPlan


def bookmark(high: int, start: int, fingerprints: list[str]) -> FileBookmark:
    return FileBookmark(
        high_mark_ms=high, band_start_ms=start, band_fingerprints=tuple(fingerprints)
    )


def test_the_previous_band_is_kept_while_the_band_can_still_hold_it():
    previous = bookmark(1_000, 500, ["a" * 16])
    plan = FileReadPlan((), bookmark(2_000, 900, ["b" * 16]))
    kept = discovery._keep_unlisted_band(plan, previous).next_bookmark.band_fingerprints
    assert kept == ("a" * 16, "b" * 16)


def test_the_previous_band_is_dropped_once_the_band_starts_after_its_high_mark():
    previous = bookmark(1_000, 500, ["a" * 16])
    plan = FileReadPlan((), bookmark(3_000, 1_000, ["b" * 16]))
    kept = discovery._keep_unlisted_band(plan, previous).next_bookmark.band_fingerprints
    assert kept == ("b" * 16,)


def test_the_kept_band_stays_within_the_band_bound(monkeypatch):
    monkeypatch.setattr(files, "DEFAULT_MAX_BAND_FILES", 2)
    previous = bookmark(1_000, 500, ["a" * 16, "c" * 16])
    plan = FileReadPlan((), bookmark(2_000, 900, ["b" * 16]))
    kept = discovery._keep_unlisted_band(plan, previous).next_bookmark.band_fingerprints
    assert len(kept) == 2 and "b" * 16 in kept
