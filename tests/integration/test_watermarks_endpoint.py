"""The watermark store over real HTTP against DynamoDB Local (AWS's own implementation).

Every test gets a clean endpoint from the ``aws`` fixture (tests/conftest.py),
which also exports ``AWS_ENDPOINT_URL_DYNAMODB``; the table is created with the
library's own ``create_table``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError
from glue_incremental.watermarks import (
    LeaseHeld,
    LeaseLost,
    UnknownJob,
    UnknownRun,
    WatermarkConflict,
    WatermarkItemTooLarge,
    Watermarks,
    WatermarkTableMissing,
    WatermarkTableSchemaMismatch,
    create_table,
)
from glue_incremental.watermarks.encoding import InvalidWatermarkValue
from hypothesis import given
from hypothesis import strategies as st

from tests.harness.watermarks import VALUE_NAMES, Requests, same, watermark_values

TABLE = "glue-watermarks"
JOB = "orders_incremental"


def run_id() -> str:
    return "jr_" + uuid.uuid4().hex + uuid.uuid4().hex


def new_client():
    """An independent client (its own connection pool) on the exported endpoint."""
    return boto3.client("dynamodb")


@pytest.fixture
def table(aws):
    create_table(TABLE)
    return TABLE


@pytest.fixture
def store(table, clock):
    return Watermarks(table, client=new_client(), clock=clock.time)


def partition(job: str) -> list[dict]:
    """Every stored item of ``job`` (state, history, run pointers, lease)."""
    response = new_client().query(
        TableName=TABLE,
        KeyConditionExpression="job_name = :j",
        ExpressionAttributeValues={":j": {"S": job}},
        ConsistentRead=True,
    )
    return sorted(response["Items"], key=lambda item: item["sk"]["S"])


def commit(store: Watermarks, job: str = JOB, run: str | None = None, **values) -> dict:
    store.get_watermark(job)
    return store.add_watermark(store.create_watermark_item(job, run or run_id(), **values))


class Clock:
    """The stores' clock, which a test moves (lease expiry is judged on the client's clock)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


# -- seed 000: the playbook's usage, end to end ------------------------------------------------


def test_get_watermark_returns_none_on_the_first_run(store):
    requests = Requests(store.client)
    assert store.get_watermark(JOB) is None
    assert requests.operations == ["GetItem"]


def test_seed_usage_commits_and_the_next_run_reads_it_back(store):
    job_run_id = run_id()
    assert store.get_watermark(JOB) is None
    max_modified_date = datetime(2024, 5, 1, 12, 30, 0, 123456, tzinfo=UTC)
    watermark = store.create_watermark_item(
        JOB, job_run_id, last_modified=max_modified_date, rows_extracted=1234
    )
    assert watermark["watermarks"]["last_modified"] == max_modified_date  # dict-like, as in seed
    store.add_watermark(watermark)

    next_run = Watermarks(TABLE, client=new_client())
    watermark_from_previous_run = next_run.get_watermark(JOB)

    assert watermark_from_previous_run["watermarks"]["last_modified"] == max_modified_date
    assert watermark_from_previous_run["watermarks"]["rows_extracted"] == 1234
    assert watermark_from_previous_run["job_run_id"] == job_run_id
    assert watermark_from_previous_run["version"] == 1
    assert watermark_from_previous_run["kind"] == "run"


def test_latest_is_the_most_recently_committed_not_the_highest_run_id(store):
    first, second = "jr_" + "f" * 64, "jr_" + "0" * 64  # lexical order opposite to commit order
    commit(store, run=first, n=1)
    commit(store, run=second, n=2)

    latest = Watermarks(TABLE, client=new_client()).get_watermark(JOB)

    assert latest["job_run_id"] == second
    assert latest["watermarks"] == {"n": 2}
    assert [entry["job_run_id"] for entry in store.history(JOB).items] == [second, first]


def test_get_watermark_is_one_request_over_http(store):
    for n in range(3):
        commit(store, n=n)
    reader = Watermarks(TABLE, client=new_client())
    requests = Requests(reader.client)
    assert reader.get_watermark(JOB)["watermarks"] == {"n": 2}
    assert requests.operations == ["GetItem"]


def test_stored_encoding_carries_its_version(store):
    commit(store, n=1)
    raw = new_client().get_item(
        TableName=TABLE, Key={"job_name": {"S": JOB}, "sk": {"S": "STATE#default"}}
    )["Item"]
    assert json.loads(raw["watermarks"]["S"]) == {"v": 1, "values": {"n": 1}}


def test_a_state_stored_by_a_newer_encoding_asks_for_an_upgrade(store):
    commit(store, n=1)
    new_client().update_item(
        TableName=TABLE,
        Key={"job_name": {"S": JOB}, "sk": {"S": "STATE#default"}},
        UpdateExpression="SET watermarks = :w",
        ExpressionAttributeValues={":w": {"S": json.dumps({"v": 2, "values": {"n": 1}})}},
    )
    with pytest.raises(ValueError, match=r"v=2 is newer.*upgrade glue_incremental"):
        store.get_watermark(JOB)


# -- optimistic concurrency -----------------------------------------------------------------------


def test_a_commit_after_another_run_committed_raises_conflict_and_writes_nothing(store):
    commit(store, n=1)
    run_a = Watermarks(TABLE, client=new_client())
    run_b = Watermarks(TABLE, client=new_client())
    run_a.get_watermark(JOB)
    run_b.get_watermark(JOB)
    item_a = run_a.create_watermark_item(JOB, "jr_a", n=2)
    run_b.add_watermark(run_b.create_watermark_item(JOB, "jr_b", n=3))
    before = partition(JOB)

    with pytest.raises(WatermarkConflict, match=r"nothing was written") as caught:
        run_a.add_watermark(item_a)

    assert (caught.value.expected_version, caught.value.actual_version) == (1, 2)
    assert partition(JOB) == before  # no state, history or run pointer written
    assert store.get_watermark(JOB)["job_run_id"] == "jr_b"
    with pytest.raises(UnknownRun):
        store.state_after_run(JOB, "jr_a")


def test_two_first_runs_conflict_too(store):
    run_a = Watermarks(TABLE, client=new_client())
    run_b = Watermarks(TABLE, client=new_client())
    assert run_a.get_watermark(JOB) is None and run_b.get_watermark(JOB) is None
    run_a.add_watermark(run_a.create_watermark_item(JOB, "jr_a", n=1))
    with pytest.raises(WatermarkConflict) as caught:
        run_b.add_watermark(run_b.create_watermark_item(JOB, "jr_b", n=1))
    assert (caught.value.expected_version, caught.value.actual_version) == (0, 1)
    assert [entry["job_run_id"] for entry in store.history(JOB).items] == ["jr_a"]


def test_a_run_that_retries_after_a_conflict_commits_on_the_new_state(store):
    run_a = Watermarks(TABLE, client=new_client())
    run_a.get_watermark(JOB)
    commit(store, n=1)
    with pytest.raises(WatermarkConflict):
        run_a.add_watermark(run_a.create_watermark_item(JOB, "jr_a", n=2))
    assert run_a.get_watermark(JOB)["watermarks"] == {"n": 1}
    run_a.add_watermark(run_a.create_watermark_item(JOB, "jr_a", n=2))
    assert store.get_watermark(JOB)["version"] == 2


@pytest.mark.parametrize("racers", [2, 6])
def test_racing_runs_in_threads_exactly_one_commit_wins_each_round(table, racers):
    rounds = 3
    clients = [new_client() for _ in range(racers)]
    winners = []
    for round_number in range(1, rounds + 1):
        stores = [Watermarks(TABLE, client=client) for client in clients]
        all_read = threading.Barrier(racers, timeout=30)
        results: list[object] = [None] * racers

        def race(
            index: int, stores=stores, all_read=all_read, results=results, round_number=round_number
        ) -> None:
            store = stores[index]
            store.get_watermark(JOB)
            all_read.wait()
            item = store.create_watermark_item(JOB, f"jr_{round_number}_{index}", racer=index)
            try:
                results[index] = store.add_watermark(item)
            except WatermarkConflict as conflict:
                results[index] = conflict

        threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

        won = [i for i, result in enumerate(results) if isinstance(result, dict)]
        assert len(won) == 1, results
        assert all(
            isinstance(result, WatermarkConflict) for i, result in enumerate(results) if i != won[0]
        )
        assert results[won[0]]["version"] == round_number
        winners.append(f"jr_{round_number}_{won[0]}")

    history = list(Watermarks(TABLE, client=new_client()).iter_history(JOB))
    assert [entry["version"] for entry in history] == list(range(rounds, 0, -1))
    assert [entry["job_run_id"] for entry in reversed(history)] == winners


# -- leases ----------------------------------------------------------------------------------------


def test_a_second_run_fails_at_start_with_lease_held_naming_the_holder(store):
    holder = run_id()
    store.acquire_lease(JOB, holder)
    second = Watermarks(TABLE, client=new_client())
    with pytest.raises(LeaseHeld, match=r"already running") as caught:
        second.acquire_lease(JOB, run_id())
    assert caught.value.holder == holder
    assert holder in str(caught.value)
    assert caught.value.expires_at > time.time()


def test_an_expired_lease_is_taken_over_and_the_token_rises(store):
    crashed = store.acquire_lease(JOB, "jr_crashed", seconds=1)
    time.sleep(1.1)
    second = Watermarks(TABLE, client=new_client())
    taken = second.acquire_lease(JOB, "jr_second")
    assert taken.token > crashed.token
    with pytest.raises(LeaseLost, match=r"jr_second"):
        crashed.check()


def test_the_heartbeat_survives_transient_errors_and_keeps_the_lease_past_its_length(
    store, monkeypatch, caplog
):
    client = store.client
    real_update = client.update_item
    failures = {"left": 4}

    def flaky_update(**request):
        if "SET expires_at = :exp" in request.get("UpdateExpression", "") and failures["left"]:
            failures["left"] -= 1
            raise ClientError(
                {"Error": {"Code": "InternalServerError", "Message": "try again"}}, "UpdateItem"
            )
        return real_update(**request)

    monkeypatch.setattr(client, "update_item", flaky_update)
    lease = store.acquire_lease(JOB, "jr_long", seconds=2)
    with caplog.at_level("WARNING", logger="glue_incremental.watermarks"):
        lease.start_heartbeat(interval=0.6)
        time.sleep(5)  # well past the 2-second lease
        lease.check()  # still ours
        with pytest.raises(LeaseHeld):
            Watermarks(TABLE, client=new_client()).acquire_lease(JOB, "jr_next")
        lease.release()

    assert failures["left"] == 0
    logged = [record.getMessage() for record in caplog.records if "renewal" in record.getMessage()]
    assert len(logged) == 4 and all("InternalServerError" in line for line in logged)


def test_the_old_holder_cannot_commit_after_a_takeover(store, clock):
    old = store.acquire_lease(JOB, "jr_old", seconds=60)
    store.get_watermark(JOB)
    item = store.create_watermark_item(JOB, "jr_old", n=1)
    clock.advance(61)  # the old run stalled past its lease
    Watermarks(TABLE, client=new_client(), clock=clock.time).acquire_lease(JOB, "jr_new")
    before = partition(JOB)

    with pytest.raises(LeaseLost, match=r"must not write") as caught:
        store.add_watermark(item, lease=old)

    assert caught.value.holder == "jr_new"
    assert partition(JOB) == before
    assert store.get_watermark(JOB) is None


def test_lease_check_raises_lease_lost_after_a_takeover(store, clock):
    old = store.acquire_lease(JOB, "jr_old", seconds=60)
    old.check()  # held: no error
    clock.advance(61)
    Watermarks(TABLE, client=new_client(), clock=clock.time).acquire_lease(JOB, "jr_new")
    with pytest.raises(LeaseLost, match=r"now held by 'jr_new'"):
        old.check()
    with pytest.raises(LeaseLost):
        old.renew()


def test_a_commit_under_a_held_lease_succeeds(store):
    lease = store.acquire_lease(JOB, "jr_run")
    store.get_watermark(JOB)
    store.add_watermark(store.create_watermark_item(JOB, "jr_run", n=1), lease=lease)
    assert store.get_watermark(JOB)["watermarks"] == {"n": 1}


def test_release_lets_the_next_run_in_immediately(store):
    with store.acquire_lease(JOB, "jr_first", seconds=900):
        pass  # released on exit
    lease = Watermarks(TABLE, client=new_client()).acquire_lease(JOB, "jr_second")
    assert lease.run_id == "jr_second"


def test_heartbeat_renews_the_lease(store):
    lease = store.acquire_lease(JOB, "jr_run", seconds=2)
    first_expiry = lease.expires_at
    lease.start_heartbeat(interval=0.1)
    try:
        time.sleep(0.4)
    finally:
        lease.stop_heartbeat()
    stored = new_client().get_item(
        TableName=TABLE, Key={"job_name": {"S": JOB}, "sk": {"S": "LEASE"}}, ConsistentRead=True
    )["Item"]
    assert lease.expires_at > first_expiry
    assert float(stored["expires_at"]["N"]) == pytest.approx(lease.expires_at)
    lease.check()


# -- values: anything JSON can carry, exactly ---------------------------------------------------

# create_watermark_item(job_name, job_run_id, *, slot, **values): those three names are taken.
RESERVED = {"job_name", "job_run_id", "slot"}
top_names = VALUE_NAMES.filter(lambda n: n not in RESERVED)


@given(
    stored=st.dictionaries(
        top_names, watermark_values(max_size=3, max_leaves=8), min_size=1, max_size=4
    )
)
def test_property_values_round_trip_exactly_through_the_endpoint(store, stored):
    job = f"values-{uuid.uuid4().hex[:8]}"
    store.get_watermark(job)
    store.add_watermark(store.create_watermark_item(job, run_id(), **stored))
    back = Watermarks(TABLE, client=store.client).get_watermark(job)["watermarks"]
    assert same(stored, back), (stored, back)


def test_examples_round_trip_through_the_endpoint(store):
    stored = {
        "big": 2**64 + 1,
        "floats": [0.1, 1e-300, 5e-324],
        "price": Decimal("1.10"),
        "since": datetime(2024, 5, 1, 14, 0, 0, 1, tzinfo=timezone(timedelta(hours=2))),
        "day": date(2024, 2, 29),
        "nested": {"ids": [1, [2, {"x": None}]]},
    }
    commit(store, **stored)
    back = store.get_watermark(JOB)["watermarks"]
    assert same(stored, back)
    assert str(back["price"]) == "1.10"
    assert back["since"].tzinfo == UTC and back["since"].hour == 12
    assert back["since"].microsecond == 1


@pytest.mark.parametrize(
    ("values_in", "message"),
    [
        ({"last_modified": datetime(2024, 1, 1)}, r"watermarks\.last_modified .*naive datetime"),
        ({"key": (1, 2)}, r"watermarks\.key .*JSON as lists"),
        ({"ratio": float("nan")}, r"watermarks\.ratio .*NaN"),
        ({"cursor": {"$date": "2024-01-01"}}, r"reserved"),
    ],
    ids=["naive-datetime", "tuple", "nan", "dollar-key"],
)
def test_invalid_values_are_rejected_and_nothing_is_stored(store, values_in, message):
    store.get_watermark(JOB)
    with pytest.raises(InvalidWatermarkValue, match=message):
        store.add_watermark(store.create_watermark_item(JOB, run_id(), **values_in))
    assert partition(JOB) == []


def test_an_item_near_400_kb_is_rejected_before_any_write(store):
    store.get_watermark(JOB)
    requests = Requests(store.client)
    with pytest.raises(WatermarkItemTooLarge, match=r"over the \d+-byte budget"):
        store.add_watermark(store.create_watermark_item(JOB, run_id(), blob="x" * 400 * 1024))
    assert requests.operations == []
    assert partition(JOB) == []


# -- bad tables and arguments ---------------------------------------------------------------------


def test_a_missing_table_names_the_table_and_how_to_create_it(aws):
    store = Watermarks("no-such-table", client=new_client())
    with pytest.raises(WatermarkTableMissing) as caught:
        store.get_watermark(JOB)
    message = str(caught.value)
    assert "'no-such-table'" in message
    assert "create-table --table no-such-table" in message and "terraform" in message
    with pytest.raises(WatermarkTableMissing):
        store.create_watermark_item(JOB, run_id(), n=1)


def test_a_table_with_another_key_schema_is_reported_as_a_mismatch(aws):
    client = new_client()
    client.create_table(
        TableName="not-watermarks",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    store = Watermarks("not-watermarks", client=client)
    with pytest.raises(WatermarkTableSchemaMismatch) as caught:
        store.get_watermark(JOB)
    assert "job_name (S, HASH) + sk (S, RANGE)" in str(caught.value)
    assert "'not-watermarks'" in str(caught.value)


def test_rewinding_to_an_unknown_run_raises_unknown_run_and_changes_nothing(store):
    commit(store, n=1)
    before = partition(JOB)
    with pytest.raises(UnknownRun, match=r"jr_nope"):
        store.rewind(JOB, "jr_nope", why="typo")
    assert partition(JOB) == before


def test_resetting_an_unknown_job_raises_unknown_job(store):
    with pytest.raises(UnknownJob, match=r"'nobody'"):
        store.reset("nobody", why="typo")


# -- bookmark control: reset, rewind, set, history, replays ---------------------------------------


def test_reset_makes_the_next_run_start_from_none_and_keeps_history(store):
    first = run_id()
    commit(store, run=first, n=1)
    store.reset(JOB, who="alice", why="source was reloaded")

    assert store.get_watermark(JOB) is None
    history = store.history(JOB).items
    assert [(entry["version"], entry["kind"]) for entry in history] == [(2, "reset"), (1, "run")]
    assert history[0]["watermarks"] is None
    assert (history[0]["who"], history[0]["why"]) == ("alice", "source was reloaded")
    assert store.state_after_run(JOB, first)["watermarks"] == {"n": 1}

    commit(store, n=10)  # the full load after the reset commits normally
    assert store.get_watermark(JOB)["version"] == 3


def test_reset_without_a_slot_resets_every_slot(store):
    for slot in ("left", "right"):
        store.get_watermark(JOB, slot)
        store.add_watermark(store.create_watermark_item(JOB, run_id(), slot=slot, n=1))
    store.reset(JOB, why="both sides reloaded")
    assert store.get_watermark(JOB, "left") is None
    assert store.get_watermark(JOB, "right") is None


def test_rewind_makes_the_state_after_a_run_current_again_as_a_new_version(store):
    runs = [run_id() for _ in range(3)]
    for n, run in enumerate(runs, start=1):
        commit(store, run=run, n=n)

    rewound = store.rewind(JOB, runs[0], who="bob", why="runs 2 and 3 read a bad snapshot")

    latest = store.get_watermark(JOB)
    assert latest == rewound
    assert latest["watermarks"] == {"n": 1}
    assert (latest["version"], latest["kind"]) == (4, "rewind")
    assert latest["rewound_to_run"] == runs[0]
    assert (latest["who"], latest["why"]) == ("bob", "runs 2 and 3 read a bad snapshot")
    assert [entry["version"] for entry in store.history(JOB).items] == [4, 3, 2, 1]
    assert store.state_after_run(JOB, runs[2])["watermarks"] == {"n": 3}  # still replayable


def test_set_records_a_manual_change_with_who_and_why(store):
    commit(store, last_id=10, rows_extracted=5)
    changed = store.set(JOB, who="carol", why="skip the corrupt range", last_id=1000)

    latest = store.get_watermark(JOB)
    assert latest == changed
    assert latest["watermarks"] == {"last_id": 1000, "rows_extracted": 5}  # merged
    assert (latest["kind"], latest["who"], latest["why"]) == (
        "set",
        "carol",
        "skip the corrupt range",
    )
    assert [entry["kind"] for entry in store.history(JOB).items] == ["set", "run"]


def test_set_defaults_who_to_the_current_actor(store, monkeypatch):
    monkeypatch.setenv("GLUE_INCREMENTAL_ACTOR", "ci-bot")
    store.set(JOB, why="first state by hand", last_id=1)
    assert store.get_watermark(JOB)["who"] == "ci-bot"


def test_set_conflicts_with_a_commit_made_since_it_read(store):
    commit(store, n=1)
    operator = Watermarks(TABLE, client=new_client())
    current = operator.current_state(JOB)
    commit(store, n=2)  # a run commits between the operator's read and write
    with pytest.raises(WatermarkConflict):
        operator._manual_change(JOB, "default", {"n": 99}, "set", "op", "late", expected=current)
    assert store.get_watermark(JOB)["watermarks"] == {"n": 2}


def test_history_is_newest_first_and_paginated(store):
    for n in range(1, 6):
        commit(store, n=n)
    pages, token = [], None
    while True:
        page = store.history(JOB, limit=2, next_token=token)
        pages.append([entry["version"] for entry in page.items])
        token = page.next_token
        if not token:
            break
    assert pages[0] == [5, 4] and pages[1] == [3, 2]
    assert [version for page in pages for version in page] == [5, 4, 3, 2, 1]


def test_state_after_run_returns_what_that_run_committed_for_replays(store):
    runs = [run_id() for _ in range(3)]
    for n, run in enumerate(runs, start=1):
        commit(store, run=run, n=n)
    replay = store.state_after_run(JOB, runs[1])
    assert replay["watermarks"] == {"n": 2}
    assert replay["job_run_id"] == runs[1] and replay["version"] == 2


# -- commit_many: several slots in one transaction -------------------------------------------------


def two_slots(store: Watermarks) -> None:
    for slot in ("left", "right"):
        store.get_watermark(JOB, slot)
        store.add_watermark(store.create_watermark_item(JOB, run_id(), slot=slot, n=1))


def test_commit_many_moves_every_slot_in_one_transaction(store):
    two_slots(store)
    run = run_id()
    items = [store.create_watermark_item(JOB, run, slot=s, n=2) for s in ("left", "right")]
    committed = store.commit_many(items)
    assert [state["version"] for state in committed] == [2, 2]
    assert store.state_after_run(JOB, run, "left")["watermarks"] == {"n": 2}
    assert store.state_after_run(JOB, run, "right")["watermarks"] == {"n": 2}


@pytest.mark.parametrize("conflicting_slot", ["left", "right"])
def test_a_conflict_on_either_slot_aborts_both(store, conflicting_slot):
    two_slots(store)
    join_run = Watermarks(TABLE, client=new_client())
    for slot in ("left", "right"):
        join_run.get_watermark(JOB, slot)
    items = [join_run.create_watermark_item(JOB, "jr_join", slot=s, n=2) for s in ("left", "right")]
    other = Watermarks(TABLE, client=new_client())
    other.get_watermark(JOB, conflicting_slot)
    other.add_watermark(other.create_watermark_item(JOB, "jr_other", slot=conflicting_slot, n=9))
    before = partition(JOB)

    with pytest.raises(WatermarkConflict) as caught:
        join_run.commit_many(items)

    assert caught.value.slot == conflicting_slot
    assert partition(JOB) == before  # neither slot moved
    untouched = "right" if conflicting_slot == "left" else "left"
    assert store.get_watermark(JOB, untouched)["watermarks"] == {"n": 1}
