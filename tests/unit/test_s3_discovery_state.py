"""S3 event parsing and the discovery state of loads and join sides (pure: no emulator)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from glue_incremental.args import ArgumentError
from glue_incremental.engine.s3_side import unlisted
from glue_incremental.join import OPTIONAL_ARGS, JoinJobConfig
from glue_incremental.load.job import LoadConfig
from glue_incremental.run.state import JoinSideState
from glue_incremental.sources.discovery import DiscoveryState
from glue_incremental.sources.files import FileBookmark, InvalidBookmarkState
from glue_incremental.sources.notifications import keys_in


def s3_event(*records: tuple[str, str]) -> str:
    return json.dumps(
        {
            "Records": [
                {"eventName": name, "s3": {"bucket": {"name": "lake"}, "object": {"key": key}}}
                for name, key in records
            ]
        }
    )


def test_created_objects_are_candidates_with_their_keys_decoded():
    body = s3_event(("ObjectCreated:Put", "raw/dt%3D2024-01-01/a+b.json"))
    assert keys_in(body) == [("lake", "raw/dt=2024-01-01/a b.json")]


def test_removals_are_not_candidates_and_the_test_event_is_an_empty_event():
    assert keys_in(s3_event(("ObjectRemoved:Delete", "raw/x.json"))) == []
    assert keys_in(json.dumps({"Event": "s3:TestEvent", "Bucket": "lake"})) == []


def test_an_event_delivered_through_sns_is_unwrapped():
    inner = s3_event(("ObjectCreated:CompleteMultipartUpload", "raw/x.json"))
    body = json.dumps({"Type": "Notification", "Message": inner})
    assert keys_in(body) == [("lake", "raw/x.json")]


@pytest.mark.parametrize("body", ["not json", "[]", '{"Records": [{"eventName": "x"}]}', "{}"])
def test_a_message_that_is_no_s3_event_is_recognised_as_such(body):
    assert keys_in(body) is None


def test_the_state_survives_a_dynamodb_round_trip():
    state = DiscoveryState(3, "dt=2024-01-05", 1_700_000_100_000)
    stored = {
        key: Decimal(value) if isinstance(value, int) else value
        for key, value in state.to_state().items()
    }
    assert DiscoveryState.from_state(stored) == state
    assert DiscoveryState.from_state(None) == DiscoveryState()


def test_a_malformed_state_names_the_field():
    with pytest.raises(InvalidBookmarkState, match="ordered_start"):
        DiscoveryState.from_state(
            {"runs_since_full_listing": 0, "ordered_start": 5, "full_listing_high_mark_ms": None}
        )


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"discovery": "notifications"}, "notification_queue_url"),
        ({"notification_queue_url": "http://sqs/q"}, "discovery"),
        ({"full_listing_every": 0}, "full_listing_every"),
        (
            {
                "discovery": "notifications",
                "notification_queue_url": "http://sqs/q",
                "source": "/data/raw/",
            },
            "discovery",
        ),
    ],
)
def test_the_load_refuses_discovery_options_that_cannot_work_naming_the_argument(options, argument):
    base = {
        "source": "s3://lake/raw/",
        "watermark_column": "updated",
        "primary_key": ("id",),
        "target_path": "s3://lake/out/",
    }
    with pytest.raises(ArgumentError) as raised:
        LoadConfig(**{**base, **options})
    assert raised.value.name == argument


@pytest.mark.parametrize(
    ("args", "argument", "message"),
    [
        ({"discovery": "notifications"}, "discovery", "join sides support only `listing`"),
        ({"full_listing_every": "0"}, "full_listing_every", "at least 1"),
    ],
)
def test_the_join_refuses_discovery_it_cannot_do_naming_the_argument(args, argument, message):
    base = {
        "left_path": "s3://lake/left/",
        "right_path": "s3://lake/right/",
        "join_keys": "id",
        "partition_by": "date",
        "target_path": "s3://lake/out/",
    }
    with pytest.raises(ArgumentError, match=message) as raised:
        JoinJobConfig.from_args({**OPTIONAL_ARGS, **base, **args})
    assert raised.value.name == argument
    assert str(raised.value).startswith(f"--{argument} ")


def test_a_join_side_keeps_its_discovery_state_and_an_older_state_without_one_still_loads():
    discovery = DiscoveryState(3, "date=2024-01-05", 1_700_000_000_000)
    side = JoinSideState(published_at_ms=9, files=FileBookmark(), discovery=discovery)
    stored = side.to_state()
    assert stored["discovery"] == discovery.to_state()
    assert JoinSideState.from_state(stored) == side
    older = {key: value for key, value in stored.items() if key != "discovery"}
    loaded = JoinSideState.from_state(older)
    assert loaded is not None and loaded.discovery is None  # the next run lists the whole side


def test_a_join_side_lists_again_exactly_the_partitions_an_ordered_listing_left_out():
    partitions = [
        ("2024-01-04", "23"),
        ("2024-01-05", "02"),
        ("2024-01-05", "03"),
        ("2024-01-06", "00"),
    ]
    left_out = unlisted("date=2024-01-05/hour=03", partitions, ("date", "hour"))
    # Keys of hour=03 sort after "date=2024-01-05/hour=03": that partition was listed.
    assert left_out == {
        "date=2024-01-04/hour=23": ("2024-01-04", "23"),
        "date=2024-01-05/hour=02": ("2024-01-05", "02"),
    }
    assert unlisted(None, partitions, ("date", "hour")) == {}  # a full listing left nothing out
