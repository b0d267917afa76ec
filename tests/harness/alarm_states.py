"""Wait for LocalStack's own alarm evaluation (it runs every period, on its own schedule)."""

from __future__ import annotations

import time

from glue_incremental import aws


def alarm_state(name: str) -> str:
    alarm = aws.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"]
    assert alarm, f"no alarm named {name}"
    return alarm[0]["StateValue"]


def wait_for_alarm_state(name: str, state: str, timeout: float) -> str:
    """The alarm's state once it is ``state``, or its state when ``timeout`` seconds ran out."""
    deadline = time.monotonic() + timeout
    while (current := alarm_state(name)) != state and time.monotonic() < deadline:
        time.sleep(0.5)
    return current
