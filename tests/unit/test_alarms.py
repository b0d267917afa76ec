"""glue_incremental_tools.alarms against CloudWatch's documented alarm-evaluation rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from glue_incremental_tools import alarms

X, G, M = 10.0, 0.0, None  # breaching, good (not breaching), missing; threshold 5, GreaterThan


def alarm(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "AlarmName": "a",
        "Namespace": "GlueIncremental",
        "MetricName": "RecordsRead",
        "Dimensions": [{"Name": "JobName", "Value": "job"}],
        "Statistic": "Maximum",
        "Period": 3600,
        "EvaluationPeriods": 3,
        "DatapointsToAlarm": 3,
        "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 5.0,
        "TreatMissingData": "missing",
        "StateValue": "OK",
    }
    return {**base, **overrides}


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("GreaterThanThreshold", 5.0, False),
        ("GreaterThanThreshold", 5.1, True),
        ("GreaterThanOrEqualToThreshold", 5.0, True),
        ("LessThanThreshold", 5.0, False),
        ("LessThanThreshold", 4.9, True),
        ("LessThanOrEqualToThreshold", 5.0, True),
    ],
)
def test_comparison_operators_compare_value_to_threshold(operator, value, expected):
    assert alarms.breaches(alarm(ComparisonOperator=operator), value) is expected


# The user guide's table for EvaluationPeriods = DatapointsToAlarm = 3 over a
# five-datapoint evaluation range; "retain" is the state before evaluation.
DOCUMENTED_TABLE = [
    ([G, M, X, M, X], {"missing": "OK", "ignore": "OK", "breaching": "OK", "notBreaching": "OK"}),
    ([M, M, M, M, G], {"missing": "OK", "ignore": "OK", "breaching": "OK", "notBreaching": "OK"}),
    (
        [M, M, M, M, M],
        {
            "missing": "INSUFFICIENT_DATA",
            "ignore": "retain",
            "breaching": "ALARM",
            "notBreaching": "OK",
        },
    ),
    (
        [G, X, X, M, X],
        {"missing": "ALARM", "ignore": "ALARM", "breaching": "ALARM", "notBreaching": "ALARM"},
    ),
    (
        [M, M, X, M, M],
        {"missing": "ALARM", "ignore": "retain", "breaching": "ALARM", "notBreaching": "OK"},
    ),
]


@pytest.mark.parametrize("current", ["OK", "ALARM", "INSUFFICIENT_DATA"])
@pytest.mark.parametrize("treatment", alarms.TREATMENTS)
@pytest.mark.parametrize(("datapoints", "expected"), DOCUMENTED_TABLE)
def test_missing_data_follows_the_documented_table(datapoints, expected, treatment, current):
    want = expected[treatment]
    got = alarms.evaluate(alarm(TreatMissingData=treatment, StateValue=current), datapoints)
    assert got == (current if want == "retain" else want)


@pytest.mark.parametrize(
    ("datapoints", "needed", "expected"),
    [
        ([X, G, X], 2, "ALARM"),
        ([X, G, X], 3, "OK"),
        ([G, G, X], 1, "ALARM"),
        ([G, G, G], 1, "OK"),
    ],
)
def test_m_of_n_datapoints_must_breach(datapoints, needed, expected):
    assert alarms.evaluate(alarm(DatapointsToAlarm=needed), datapoints) == expected


def test_only_the_most_recent_n_real_datapoints_count():
    # Three old breaches fall outside the three newest real datapoints.
    assert alarms.evaluate(alarm(), [X, X, X, G, M, X, X]) == "OK"
    assert alarms.evaluate(alarm(), [G, G, X, M, X, X]) == "ALARM"


def test_datapoints_to_alarm_defaults_to_evaluation_periods():
    spec = alarm()
    del spec["DatapointsToAlarm"]
    assert alarms.evaluate(spec, [X, X, G]) == "OK"
    assert alarms.evaluate(spec, [X, X, X]) == "ALARM"


def test_treat_missing_data_defaults_to_missing():
    spec = alarm()
    del spec["TreatMissingData"]
    assert alarms.evaluate(spec, [M, M, M]) == "INSUFFICIENT_DATA"


@pytest.mark.parametrize(
    ("datapoints", "treatment", "expected"),
    [
        # notBreaching fills with good values: one real breach of the needed two is not enough.
        ([M, X, M], "notBreaching", "OK"),
        # breaching fills with bad values: one real breach plus one filled reaches two.
        ([M, G, X], "breaching", "ALARM"),
        # ignore: two fillings disagree -> state kept; both agree -> that state.
        ([M, G, X], "ignore", "retain"),
        ([M, G, G], "ignore", "OK"),
    ],
)
def test_partial_data_is_filled_only_as_much_as_needed(datapoints, treatment, expected):
    spec = alarm(DatapointsToAlarm=2, TreatMissingData=treatment, StateValue="INSUFFICIENT_DATA")
    got = alarms.evaluate(spec, datapoints)
    assert got == ("INSUFFICIENT_DATA" if expected == "retain" else expected)


def zero_record_alarm(**overrides: Any) -> dict[str, Any]:
    return alarm(
        EvaluationPeriods=1,
        DatapointsToAlarm=1,
        ComparisonOperator="LessThanOrEqualToThreshold",
        Threshold=0.0,
        TreatMissingData="notBreaching",
        **overrides,
    )


def test_zero_record_alarm_fires_on_an_empty_run_only():
    assert alarms.evaluate(zero_record_alarm(), [0.0]) == "ALARM"
    assert alarms.evaluate(zero_record_alarm(), [5.0]) == "OK"
    # No run at all is the missed-run alarm's business.
    assert alarms.evaluate(zero_record_alarm(), [None]) == "OK"


def test_missed_run_alarm_treats_silence_as_a_missed_run():
    spec = alarm(
        Statistic="SampleCount",
        EvaluationPeriods=1,
        DatapointsToAlarm=1,
        ComparisonOperator="LessThanThreshold",
        Threshold=1.0,
        TreatMissingData="breaching",
    )
    assert alarms.evaluate(spec, [None]) == "ALARM"
    assert alarms.evaluate(spec, [1.0]) == "OK"


@pytest.mark.parametrize(
    "bad",
    [
        {"ComparisonOperator": "LessThanLowerOrGreaterThanUpperThreshold"},
        {"TreatMissingData": "sometimes"},
        {"DatapointsToAlarm": 4},
    ],
)
def test_rejects_what_it_cannot_evaluate(bad):
    with pytest.raises(ValueError):
        alarms.evaluate(alarm(**bad), [X, X, X])


class FakeCloudWatch:
    """Records requests; serves canned per-window datapoints (oldest window first)."""

    def __init__(self, spec: dict[str, Any], windows: list[list[dict[str, Any]]]):
        self.spec = spec
        self.windows = list(windows)
        self.requests: list[dict[str, Any]] = []
        self.pushed: list[dict[str, Any]] = []

    def describe_alarms(self, **kwargs: Any) -> dict[str, Any]:
        return {
            "MetricAlarms": [self.spec] if kwargs["AlarmNames"] == [self.spec["AlarmName"]] else []
        }

    def get_metric_statistics(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(kwargs)
        return {"Datapoints": self.windows.pop(0)}

    def set_alarm_state(self, **kwargs: Any) -> None:
        self.pushed.append(kwargs)


@pytest.fixture
def fake(monkeypatch):
    def install(spec: dict[str, Any], windows: list[list[dict[str, Any]]]) -> FakeCloudWatch:
        client = FakeCloudWatch(spec, windows)
        monkeypatch.setattr(alarms.aws, "client", lambda service: client)
        return client

    return install


NOW = datetime(2026, 1, 1, 12, 0, 0, 250000, tzinfo=UTC)


def test_evaluates_the_periods_ending_now_and_pushes_a_changed_state(fake):
    spec = alarm(EvaluationPeriods=2, DatapointsToAlarm=2, StateValue="OK")
    client = fake(spec, [[{"Maximum": 7.0}], [{"Maximum": 3.0}, {"Maximum": 9.0}]])

    assert alarms.evaluate_on_endpoint("a", now=NOW) == "ALARM"

    end = datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)  # rounded up to the whole second
    assert [(r["StartTime"], r["EndTime"]) for r in client.requests] == [
        (end - timedelta(hours=2), end - timedelta(hours=1)),
        (end - timedelta(hours=1), end),
    ]
    assert all(
        r["Period"] == 3600 and r["Dimensions"] == spec["Dimensions"] for r in client.requests
    )
    assert [p["StateValue"] for p in client.pushed] == ["ALARM"]


def test_does_not_push_an_unchanged_state(fake):
    client = fake(
        alarm(EvaluationPeriods=1, DatapointsToAlarm=1, StateValue="OK"), [[{"Maximum": 1.0}]]
    )
    assert alarms.evaluate_on_endpoint("a", now=NOW) == "OK"
    assert client.pushed == []


def test_average_over_several_buckets_is_weighted_by_sample_count(fake):
    # Mean of the bucket averages would be (1 + 10) / 2 = 5.5 and breach; the
    # true average over the period is (1 + 30) / 4 = 7.75 -> also breaches at 5,
    # so use a threshold between the two.
    spec = alarm(Statistic="Average", EvaluationPeriods=1, DatapointsToAlarm=1, Threshold=6.0)
    buckets = [
        {"Sum": 1.0, "SampleCount": 1.0, "Average": 1.0},
        {"Sum": 30.0, "SampleCount": 3.0, "Average": 10.0},
    ]
    client = fake(spec, [buckets])
    assert alarms.evaluate_on_endpoint("a", now=NOW) == "ALARM"
    assert set(client.requests[0]["Statistics"]) == {"Average", "Sum", "SampleCount"}


def test_unknown_alarm_is_an_error(fake):
    fake(alarm(), [])
    with pytest.raises(LookupError):
        alarms.evaluate_on_endpoint("nope", now=NOW)
