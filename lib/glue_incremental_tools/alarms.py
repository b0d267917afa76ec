"""CloudWatch metric-alarm evaluation, for endpoints that store alarms but never evaluate them.

moto (and LocalStack for some alarm shapes) keeps alarms in whatever state they
were created in. ``evaluate`` applies CloudWatch's documented rules to a list of
datapoints; ``evaluate_on_endpoint`` fetches an alarm and its datapoints from the
configured endpoint, evaluates, and pushes the state with ``SetAlarmState`` so
that actions fire wherever the endpoint implements them.

The rules (CloudWatch user guide, "Evaluating an alarm" and "Configuring how
CloudWatch alarms treat missing data"), with N = EvaluationPeriods and
M = DatapointsToAlarm (default N):

* A datapoint breaches when ``value <op> Threshold`` holds.
* If the evaluation range holds at least N real datapoints, the N most recent real
  ones decide: ALARM when at least M of them breach, else OK. TreatMissingData
  plays no part.
* If it holds no real datapoint: ``missing`` -> INSUFFICIENT_DATA,
  ``ignore`` -> current state kept, ``breaching`` -> ALARM, ``notBreaching`` -> OK.
* Otherwise the missing ones are filled in as few times as needed (N - real):
  ``breaching`` fills breaching and ``notBreaching`` fills non-breaching values;
  ``ignore`` keeps the current state unless every possible filling gives the same
  answer; ``missing`` evaluates the real datapoints alone, needing
  ``min(M, real)`` breaches.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from glue_incremental import aws

State = Literal["ALARM", "OK", "INSUFFICIENT_DATA"]
STATES: tuple[State, ...] = ("ALARM", "OK", "INSUFFICIENT_DATA")

COMPARISONS: Mapping[str, Callable[[float, float], bool]] = {
    "GreaterThanOrEqualToThreshold": lambda value, threshold: value >= threshold,
    "GreaterThanThreshold": lambda value, threshold: value > threshold,
    "LessThanThreshold": lambda value, threshold: value < threshold,
    "LessThanOrEqualToThreshold": lambda value, threshold: value <= threshold,
}

TREATMENTS = ("missing", "ignore", "breaching", "notBreaching")


def breaches(alarm: Mapping[str, Any], value: float) -> bool:
    """Whether one datapoint is on the wrong side of the alarm's threshold."""
    operator = alarm["ComparisonOperator"]
    try:
        compare = COMPARISONS[operator]
    except KeyError:
        raise ValueError(
            f"unsupported ComparisonOperator {operator!r} (anomaly-detection bands are not evaluated)"
        ) from None
    return compare(value, float(alarm["Threshold"]))


def evaluate(alarm: Mapping[str, Any], datapoints: Sequence[float | None]) -> State:
    """The state CloudWatch would put ``alarm`` in, given its evaluation range.

    ``alarm`` is shaped like ``DescribeAlarms``' ``MetricAlarms[i]``;
    ``datapoints`` holds one aggregated value per period, oldest first, ``None``
    where the period has no data.
    """
    periods = int(alarm["EvaluationPeriods"])
    needed = int(alarm.get("DatapointsToAlarm") or periods)
    if periods < 1 or not 1 <= needed <= periods:
        raise ValueError(f"need 1 <= DatapointsToAlarm ({needed}) <= EvaluationPeriods ({periods})")
    treatment = alarm.get("TreatMissingData") or "missing"
    if treatment not in TREATMENTS:
        raise ValueError(f"unknown TreatMissingData {treatment!r}; expected one of {TREATMENTS}")
    current: State = alarm.get("StateValue") or "INSUFFICIENT_DATA"

    real = [float(value) for value in datapoints if value is not None]
    if len(real) >= periods:
        return _decide(sum(breaches(alarm, v) for v in real[-periods:]), needed)

    breaching = sum(breaches(alarm, v) for v in real)
    filled = periods - len(real)
    if not real:
        return {
            "missing": "INSUFFICIENT_DATA",
            "ignore": current,
            "breaching": "ALARM",
            "notBreaching": "OK",
        }[treatment]
    if treatment == "breaching":
        return _decide(breaching + filled, needed)
    if treatment == "notBreaching":
        return _decide(breaching, needed)
    if treatment == "ignore":
        best, worst = _decide(breaching, needed), _decide(breaching + filled, needed)
        return best if best == worst else current
    return _decide(breaching, min(needed, len(real)))


def _decide(breaching: int, needed: int) -> State:
    return "ALARM" if breaching >= needed else "OK"


def evaluate_on_endpoint(alarm_name: str, *, now: datetime | None = None) -> State:
    """Evaluate ``alarm_name`` against its datapoints on the endpoint and push the state.

    The evaluation range is the alarm's last EvaluationPeriods periods ending at
    ``now`` (default: the current time). The state is written with
    ``SetAlarmState`` only when it changes, because CloudWatch runs actions on
    transitions, not on every evaluation.
    """
    cloudwatch = aws.client("cloudwatch")
    found = cloudwatch.describe_alarms(AlarmNames=[alarm_name], AlarmTypes=["MetricAlarm"])
    if not found.get("MetricAlarms"):
        raise LookupError(f"no metric alarm named {alarm_name!r}")
    alarm = found["MetricAlarms"][0]
    if alarm.get("Metrics") or "MetricName" not in alarm:
        raise ValueError(f"{alarm_name}: metric-math alarms are not evaluated")

    datapoints = fetch_datapoints(cloudwatch, alarm, now=now)
    state = evaluate(alarm, datapoints)
    if state != alarm.get("StateValue"):
        cloudwatch.set_alarm_state(
            AlarmName=alarm_name,
            StateValue=state,
            StateReason=_reason(alarm, datapoints, state)[:1023],
            StateReasonData=json.dumps({"version": "1.0", "evaluatedDatapoints": datapoints}),
        )
    return state


def fetch_datapoints(
    cloudwatch: Any, alarm: Mapping[str, Any], *, now: datetime | None = None
) -> list[float | None]:
    """One value per period of the alarm's evaluation range, oldest first (None = no data).

    Each period is queried on its own and any sub-buckets the endpoint returns
    are folded with the alarm's statistic, so the result does not depend on how
    the endpoint aligns its buckets.
    """
    period = int(alarm["Period"])
    periods = int(alarm["EvaluationPeriods"])
    end = _ceil_second(now or datetime.now(UTC))
    statistic = alarm.get("Statistic")
    extended = alarm.get("ExtendedStatistic")
    request: dict[str, Any] = {
        "Namespace": alarm["Namespace"],
        "MetricName": alarm["MetricName"],
        "Dimensions": alarm.get("Dimensions", []),
        "Period": period,
    }
    if extended:
        request["ExtendedStatistics"] = [extended]
    else:
        # Sum and SampleCount make an Average over several buckets exact.
        request["Statistics"] = sorted({statistic, "Sum", "SampleCount"})
    if alarm.get("Unit"):
        request["Unit"] = alarm["Unit"]

    values: list[float | None] = []
    for index in range(periods):
        start = end - timedelta(seconds=period * (periods - index))
        response = cloudwatch.get_metric_statistics(
            StartTime=start, EndTime=start + timedelta(seconds=period), **request
        )
        values.append(_fold(response.get("Datapoints", []), statistic, extended))
    return values


def _fold(
    buckets: list[dict[str, Any]], statistic: str | None, extended: str | None
) -> float | None:
    if not buckets:
        return None
    if extended:
        # Percentiles cannot be merged exactly; the most pessimistic bucket stands in.
        return max(float(b["ExtendedStatistics"][extended]) for b in buckets)
    if statistic == "Maximum":
        return max(float(b["Maximum"]) for b in buckets)
    if statistic == "Minimum":
        return min(float(b["Minimum"]) for b in buckets)
    if statistic in ("Sum", "SampleCount"):
        return sum(float(b[statistic]) for b in buckets)
    if statistic == "Average":
        count = sum(float(b["SampleCount"]) for b in buckets)
        return sum(float(b["Sum"]) for b in buckets) / count if count else None
    raise ValueError(f"unsupported Statistic {statistic!r}")


def _ceil_second(moment: datetime) -> datetime:
    # Endpoints compare timestamps at whole seconds; rounding up keeps a
    # datapoint published in the current second inside the range.
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + timedelta(seconds=1)


def _reason(alarm: Mapping[str, Any], datapoints: Sequence[float | None], state: State) -> str:
    shown = ", ".join("missing" if v is None else f"{v:g}" for v in datapoints)
    return (
        f"glue_incremental_tools.alarms: [{shown}] ({alarm.get('Statistic') or alarm.get('ExtendedStatistic')} "
        f"over {alarm['Period']}s periods) {alarm['ComparisonOperator']} {alarm['Threshold']:g} "
        f"with TreatMissingData={alarm.get('TreatMissingData') or 'missing'} -> {state}"
    )
