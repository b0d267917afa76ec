"""The watermark store against moto in-process (fast), plus a throttling HTTP stub.

Behaviour that needs the real HTTP endpoint lives in
tests/integration/test_watermarks_endpoint.py.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.config import Config
from botocore.retries.standard import ExponentialBackoff
from glue_incremental.watermarks import (
    EXPIRES_ATTRIBUTE,
    HISTORY_RETENTION_DAYS,
    UnknownRun,
    WatermarkConflict,
    WatermarkItemTooLarge,
    Watermarks,
    WatermarkStoreUnavailable,
    create_table,
)
from glue_incremental.watermarks.encoding import InvalidWatermarkValue
from glue_incremental.watermarks.errors import RewindAcrossLayoutChange
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from tests.harness.watermarks import Requests

TABLE = "glue-watermarks"
REGION = "us-east-1"


@pytest.fixture
def client(monkeypatch):
    """A DynamoDB client on moto in-process, with the watermarks table created."""
    # An endpoint exported by the integration fixture would bypass the in-process mock.
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "LOCALSTACK_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_table(TABLE, client=dynamodb)
        yield dynamodb


def run_id() -> str:
    return "jr_" + uuid.uuid4().hex + uuid.uuid4().hex


def stored_items(client, job: str) -> list[dict]:
    response = client.query(
        TableName=TABLE,
        KeyConditionExpression="job_name = :j",
        ExpressionAttributeValues={":j": {"S": job}},
        ConsistentRead=True,
    )
    return response["Items"]


# -- "latest" is one request whatever the history length ---------------------------------------


def seed_history(client, job: str, versions: int) -> None:
    """Write ``versions`` committed runs in the store's layout (faster than real commits)."""
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    requests = []
    for version in range(1, versions + 1):
        run = "jr_" + "f" * 60 + f"{version:04x}"  # lexically above any later run id
        state = {
            "job_name": {"S": job},
            "slot": {"S": "default"},
            "version": {"N": str(version)},
            "job_run_id": {"S": run},
            "watermarks": {"S": json.dumps({"v": 1, "values": {"n": version}})},
            "committed_at": {"S": now},
            "kind": {"S": "run"},
        }
        requests.append({**state, "sk": {"S": f"HIST#default#{version:012d}"}})
        requests.append(
            {"job_name": {"S": job}, "sk": {"S": f"RUN#default#{run}"}, "version": state["version"]}
        )
        if version == versions:
            requests.append({**state, "sk": {"S": "STATE#default"}})
    for start in range(0, len(requests), 25):
        batch = [{"PutRequest": {"Item": item}} for item in requests[start : start + 25]]
        client.batch_write_item(RequestItems={TABLE: batch})


@pytest.mark.parametrize("history_length", [1, 500])
def test_get_watermark_is_exactly_one_request_whatever_the_history_length(client, history_length):
    job = "orders"
    seed_history(client, job, history_length - 1)
    store = Watermarks(TABLE, client=client)
    store.get_watermark(job)
    last_run = "jr_" + "0" * 64  # lexically the smallest: "latest" must not sort by run id
    store.add_watermark(store.create_watermark_item(job, last_run, n=history_length))
    requests = Requests(client)

    latest = Watermarks(TABLE, client=client).get_watermark(job)

    assert requests.operations == ["GetItem"]
    assert latest["job_run_id"] == last_run
    assert latest["version"] == history_length
    assert latest["watermarks"] == {"n": history_length}


# -- validation happens before any request -------------------------------------------------------


def test_an_item_near_400_kb_is_rejected_before_any_request(client):
    store = Watermarks(TABLE, client=client)
    requests = Requests(client)
    with pytest.raises(WatermarkItemTooLarge, match=r"store a cursor") as caught:
        store.create_watermark_item("orders", run_id(), payload="x" * (399 * 1024))
    assert caught.value.size > 399 * 1024
    assert requests.operations == []
    assert stored_items(client, "orders") == []


def test_an_item_just_under_the_budget_commits(client):
    store = Watermarks(TABLE, client=client)
    store.get_watermark("orders")
    store.add_watermark(store.create_watermark_item("orders", run_id(), payload="x" * 395 * 1024))
    assert len(store.get_watermark("orders")["watermarks"]["payload"]) == 395 * 1024


def test_item_size_counts_utf8_bytes_not_characters(client):
    store = Watermarks(TABLE, client=client)
    store.add_watermark(store.create_watermark_item("orders", run_id(), n=1))
    requests = Requests(client)
    # 140,000 characters, 420,000 bytes: only the byte count is over DynamoDB's limit.
    with pytest.raises(WatermarkItemTooLarge):
        store.set("orders", why="あ" * 140_000, n=2)
    assert "TransactWriteItems" not in requests.operations
    assert store.get_watermark("orders")["watermarks"] == {"n": 1}


def test_an_invalid_value_is_rejected_before_any_request_even_on_the_first_run(client):
    store = Watermarks(TABLE, client=client)
    requests = Requests(client)
    with pytest.raises(InvalidWatermarkValue, match=r"last_modified.*naive datetime"):
        store.create_watermark_item("orders", run_id(), last_modified=datetime(2024, 1, 1))
    assert requests.operations == []


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.get_watermark(""),
        lambda store: store.get_watermark("   "),
        lambda store: store.create_watermark_item("", run_id(), n=1),
        lambda store: store.create_watermark_item("orders", "", n=1),
        lambda store: store.acquire_lease("", run_id()),
        lambda store: store.history("", limit=5),
        lambda store: store.get_watermark("orders", slot="a#b"),
        lambda store: store.history("orders", limit=0),
        lambda store: store.history("orders", next_token="HIST#other#000000000001"),
        lambda store: store.commit_many([]),
        lambda store: store.acquire_lease("orders", run_id(), seconds=0),
    ],
    ids=[
        "empty-job",
        "blank-job",
        "create-empty-job",
        "create-empty-run",
        "lease-empty-job",
        "history-empty-job",
        "slot-with-hash",
        "history-limit-0",
        "foreign-next-token",
        "commit-nothing",
        "lease-0-seconds",
    ],
)
def test_bad_arguments_raise_value_error_without_any_request(client, call):
    store = Watermarks(TABLE, client=client)
    requests = Requests(client)
    with pytest.raises(ValueError):
        call(store)
    assert requests.operations == []


def test_an_empty_table_name_is_rejected():
    with pytest.raises(ValueError, match=r"table name"):
        Watermarks("")


def test_committing_the_same_slot_twice_in_one_transaction_is_rejected(client):
    store = Watermarks(TABLE, client=client)
    first = store.create_watermark_item("orders", run_id(), n=1)
    second = store.create_watermark_item("orders", run_id(), n=2)
    with pytest.raises(ValueError, match=r"same job/slot twice"):
        store.commit_many([first, second])


def test_state_after_an_unknown_run_raises_unknown_run(client):
    store = Watermarks(TABLE, client=client)
    store.add_watermark(store.create_watermark_item("orders", run_id(), n=1))
    with pytest.raises(UnknownRun, match=r"jr_missing"):
        store.state_after_run("orders", "jr_missing")


def test_history_and_run_pointers_expire_after_the_retention_and_the_state_never(client):
    now = 1_700_000_000.0
    store = Watermarks(TABLE, client=client, clock=lambda: now)
    store.add_watermark(store.create_watermark_item("orders", run_id(), n=1))

    expiry = {
        item["sk"]["S"].split("#")[0]: item.get(EXPIRES_ATTRIBUTE)
        for item in stored_items(client, "orders")
    }

    retained_until = {"N": str(int(now) + HISTORY_RETENTION_DAYS * 86_400)}
    assert expiry == {"STATE": None, "HIST": retained_until, "RUN": retained_until}


def test_a_rewind_past_the_retention_is_one_line_naming_it_and_writes_nothing(client):
    clock = [1_700_000_000.0]
    store = Watermarks(TABLE, client=client, clock=lambda: clock[0])
    old_run = run_id()
    store.add_watermark(store.create_watermark_item("orders", old_run, n=1))
    store.get_watermark("orders")
    store.add_watermark(store.create_watermark_item("orders", run_id(), n=2))
    # Past the retention, before DynamoDB's TTL sweep has deleted the items.
    clock[0] += HISTORY_RETENTION_DAYS * 86_400 + 1
    before = stored_items(client, "orders")

    with pytest.raises(UnknownRun) as raised:
        store.rewind("orders", old_run)

    assert "\n" not in str(raised.value)
    assert old_run in str(raised.value) and f"{HISTORY_RETENTION_DAYS}-day" in str(raised.value)
    assert stored_items(client, "orders") == before


def test_a_rewind_across_a_change_of_target_is_refused_and_one_before_it_was_recorded_is_not(
    client,
):
    store = Watermarks(TABLE, client=client)
    layout = {"partition_by": [], "primary_key": ["id"], "watermark_column": "updated"}
    unnamed, first, second = run_id(), run_id(), run_id()
    store.add_watermark(store.create_watermark_item("orders", unnamed, n=0, layout=layout))
    store.get_watermark("orders")
    at_a = {**layout, "target_format": "parquet", "target_path": "s3://b/a"}
    store.add_watermark(store.create_watermark_item("orders", first, n=1, layout=at_a))
    store.reset("orders", why="move")
    store.current_state("orders")
    at_b = {**layout, "target_format": "parquet", "target_path": "s3://b/b"}
    store.add_watermark(store.create_watermark_item("orders", second, n=2, layout=at_b))

    with pytest.raises(RewindAcrossLayoutChange) as refused:
        store.rewind("orders", first)
    assert "\n" not in str(refused.value) and "s3://b/a" in str(refused.value)
    assert store.rewind("orders", unnamed)["watermarks"]["n"] == 0


# -- optimistic concurrency: any number of racers, any interleaving --------------------------------


@st.composite
def racing_rounds(draw):
    """Rounds of 2..6 racers; each racer reads, builds its item, commits.

    Every racer of a round reads before the round's first commit (that is what
    makes them race); otherwise reads, item building and commits interleave freely.
    """
    rounds = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        racers = draw(st.integers(min_value=2, max_value=6))
        stage = [0] * racers  # 0 nothing yet, 1 read, 2 item built, 3 committed
        schedule = []
        while len(schedule) < 3 * racers:
            all_read = all(s >= 1 for s in stage)
            enabled = [i for i, s in enumerate(stage) if s < 2 or (s == 2 and all_read)]
            racer = enabled[draw(st.integers(min_value=0, max_value=len(enabled) - 1))]
            stage[racer] += 1
            schedule.append((racer, ("read", "build", "commit")[stage[racer] - 1]))
        rounds.append((racers, schedule))
    return rounds


@pytest.fixture
def racer_clients(client):
    """Six independent clients on the same in-process moto state."""
    return [boto3.client("dynamodb", region_name=REGION) for _ in range(6)]


@given(rounds=racing_rounds())
def test_property_racers_commit_exactly_once_per_round_with_no_gaps(racer_clients, rounds):
    job = "orders"
    # A table per example: moto copies the whole table on every transaction.
    table = f"race-{uuid.uuid4().hex[:8]}"
    create_table(table, client=racer_clients[0])
    winners = []
    for round_number, (racers, schedule) in enumerate(rounds, start=1):
        stores = [Watermarks(table, client=racer_clients[i]) for i in range(racers)]
        runs = [run_id() for _ in range(racers)]
        items: dict[int, object] = {}
        outcome: dict[int, str] = {}
        for racer, step in schedule:
            store = stores[racer]
            if step == "read":
                store.get_watermark(job)
            elif step == "build":
                items[racer] = store.create_watermark_item(
                    job, runs[racer], round=round_number, racer=racer
                )
            else:
                try:
                    store.add_watermark(items[racer])
                    outcome[racer] = "won"
                except WatermarkConflict as conflict:
                    assert conflict.expected_version == round_number - 1
                    assert conflict.actual_version == round_number
                    outcome[racer] = "conflict"
        first_committer = next(racer for racer, step in schedule if step == "commit")
        assert [r for r, result in outcome.items() if result == "won"] == [first_committer]
        assert len(outcome) == racers
        winners.append((runs[first_committer], first_committer))
        for racer in range(racers):
            if racer != first_committer:  # a loser left no trace
                with pytest.raises(UnknownRun):
                    stores[0].state_after_run(job, runs[racer])

    observer = Watermarks(table, client=racer_clients[0])
    latest = observer.get_watermark(job)
    assert latest["version"] == len(rounds)
    assert latest["watermarks"] == {"round": len(rounds), "racer": winners[-1][1]}
    history = list(observer.iter_history(job))
    assert [entry["version"] for entry in history] == list(range(len(rounds), 0, -1))
    assert [entry["job_run_id"] for entry in reversed(history)] == [run for run, _ in winners]


# -- throttling ---------------------------------------------------------------------------------


class _Throttling(BaseHTTPRequestHandler):
    body = json.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
            "message": "Rate exceeded",
        }
    ).encode()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests += 1  # type: ignore[attr-defined]
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


@pytest.fixture
def throttling_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Throttling)
    server.requests = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


# botocore's Config(retries={"max_attempts": N}) means N *retries* (N + 1 requests);
# "total_max_attempts" counts the first request too. Both must be reported truthfully.
@pytest.mark.parametrize(
    ("retries", "requests_sent"),
    [({"total_max_attempts": 3}, 3), ({"max_attempts": 3}, 4)],
    ids=["total_max_attempts=3", "max_attempts=3"],
)
def test_throttling_after_the_configured_retries_raises_store_unavailable(
    throttling_endpoint, monkeypatch, retries, requests_sent
):
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.0)
    throttled = boto3.client(
        "dynamodb",
        region_name=REGION,
        endpoint_url=f"http://127.0.0.1:{throttling_endpoint.server_address[1]}",
        config=Config(retries={**retries, "mode": "standard"}),
    )
    store = Watermarks(TABLE, client=throttled)

    with pytest.raises(WatermarkStoreUnavailable) as caught:
        store.get_watermark("orders")

    message = str(caught.value)
    assert "throttled" in message and "ProvisionedThroughputExceededException" in message
    assert f"after {requests_sent} attempts" in message and TABLE in message
    assert throttling_endpoint.requests == requests_sent
