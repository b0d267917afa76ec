"""Which jobs an upstream's finished run starts: the wiring's logic, as plain data.

Dependents start on EventBridge "Glue Job State Change" events, which Glue emits for
every run however it was started (schedule, trigger, console, CLI), so a rerun by
hand of a failed upstream starts its dependents; Glue's conditional triggers fire
only for runs a trigger started. Glue is no EventBridge target, so the rule targets a
Step Functions state machine (``terraform/modules/glue_event_chain``) that applies
``dependents_to_start`` with the upstreams' latest run states (glue:GetJobRuns).

Guarantees: only SUCCEEDED starts anything (never FAILED, TIMEOUT, STOPPED, ERROR);
``ANY`` starts on any upstream's success; ``AND`` starts once every upstream's
latest run SUCCEEDED, so the last upstream to succeed (a rerun included) starts it.
Design: ``docs/releases.md`` (orchestration section).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

SUCCEEDED = "SUCCEEDED"
STATE_CHANGE = "Glue Job State Change"
# Emitted for STARTING/RUNNING/STOPPING runs past the job's NotifyDelayAfter:
# https://docs.aws.amazon.com/glue/latest/dg/automating-awsglue-with-cloudwatch-events.html
RUN_STATUS = "Glue Job Run Status"

Logical = Literal["AND", "ANY"]


class WiringError(ValueError):
    """A dependency the wiring cannot express; the message names it."""


@dataclass(frozen=True)
class Dependency:
    """``job`` starts after ``upstreams`` succeed: all of them (AND) or any (ANY)."""

    job: str
    upstreams: tuple[str, ...]
    logical: Logical = "AND"

    def __post_init__(self) -> None:
        if not self.upstreams:
            raise WiringError(f"job {self.job} has no upstreams: it runs on its schedule")
        if self.job in self.upstreams:
            raise WiringError(f"job {self.job} names itself as an upstream")
        if self.logical not in ("AND", "ANY"):
            raise WiringError(f"job {self.job}: logical must be AND or ANY, not {self.logical!r}")


def dependents_to_start(
    dependencies: Iterable[Dependency],
    job: str,
    state: str,
    latest_states: Mapping[str, str | None],
) -> tuple[str, ...]:
    """The jobs to start after ``job``'s run ended in ``state``, in name order.

    ``latest_states``: each upstream's latest run state (None: it never ran). The
    finished run counts as SUCCEEDED for ``job`` whatever an older lookup says.
    """
    if state != SUCCEEDED:
        return ()
    started = []
    for dependency in dependencies:
        if job not in dependency.upstreams:
            continue
        others = [upstream for upstream in dependency.upstreams if upstream != job]
        if dependency.logical == "ANY" or all(
            latest_states.get(upstream) == SUCCEEDED for upstream in others
        ):
            started.append(dependency.job)
    return tuple(sorted(started))


def state_change_pattern(dependency: Dependency) -> dict[str, Any]:
    """The EventBridge pattern of the rule that may start ``dependency.job``."""
    return {
        "source": ["aws.glue"],
        "detail-type": [STATE_CHANGE],
        "detail": {"jobName": sorted(dependency.upstreams), "state": [SUCCEEDED]},
    }


def slow_run_pattern(jobs: Iterable[str]) -> dict[str, Any]:
    """The pattern of the slow-run warning: a run past its job's NotifyDelayAfter."""
    return {
        "source": ["aws.glue"],
        "detail-type": [RUN_STATUS],
        "detail": {"jobName": sorted(jobs)},
    }
