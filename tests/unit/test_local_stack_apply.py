"""`make apply` re-applies Terraform to the running local stack; without one it says how to start it."""

from __future__ import annotations

import pytest
from glue_incremental_tools import deploy, stack_process


def test_apply_without_a_running_stack_says_how_to_start_one(tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)

    with pytest.raises(deploy.UnresolvedEnvironment, match="start it with `make up`"):
        stack_process.apply(tmp_path, out=lambda _: None)


def test_the_recorded_endpoints_are_what_terraform_is_given_again():
    recorded = ["-var=aws_endpoint_url=http://127.0.0.1:4566", "-var=glue_endpoint_url=x"]

    assert stack_process.RecordedEndpoint(recorded).terraform_vars() == recorded


NEW_JOB = 'module.pipeline.module.job["returns"].aws_glue_job.this'
GAP = "module.pipeline.module.watermarks_table.aws_dynamodb_table.this"


class FakeDemo:
    """Terraform as seen by `apply`: a plan adding one pipeline's job (and, when ``gap``,
    DynamoDB Local's SSE gap); outputs that only a full apply or a refresh bring up to date."""

    calls: list[str] = []
    gap = False

    def __init__(self, *_args, **_kwargs) -> None:
        self.outputs = {"job_names": {"orders": "gi-local-orders"}}

    def planned_changes(self):
        changes = {NEW_JOB: (["create"], {"name"})}
        if FakeDemo.gap:
            changes[GAP] = (["update"], {"server_side_encryption"})
        return changes

    def updated(self):
        return {"job_names": {"orders": "gi-local-orders", "returns": "gi-local-returns"}}

    def apply_planned(self):
        FakeDemo.calls.append("apply the plan")
        return self.updated()

    def terraform_apply(self, targets):
        FakeDemo.calls.append(f"apply {' '.join(targets)}")
        return self.outputs

    def refresh_outputs(self):
        FakeDemo.calls.append("refresh")
        return self.updated()

    def read_outputs(self):
        return self.outputs

    def deploy(self):
        FakeDemo.calls.append("deploy")


@pytest.mark.parametrize(
    ("gap", "calls"),
    [
        (False, ["apply the plan", "deploy"]),
        (True, [f"apply {NEW_JOB}", "refresh", "deploy"]),
    ],
)
def test_a_pipeline_added_by_apply_is_in_the_outputs_the_commands_read(
    gap, calls, tmp_path, monkeypatch
):
    (tmp_path / ".local-stack").mkdir()
    monkeypatch.setattr(stack_process.stack, "read_stack", lambda _root: {"terraform_vars": []})
    monkeypatch.setattr(stack_process.stack, "use_local_stack", lambda _root: None)
    monkeypatch.setattr(stack_process, "Demo", FakeDemo)
    monkeypatch.setattr(FakeDemo, "gap", gap)
    FakeDemo.calls = []

    outputs = stack_process.apply(tmp_path, out=lambda _: None)

    assert outputs["job_names"]["returns"] == "gi-local-returns"
    assert FakeDemo.calls == calls
