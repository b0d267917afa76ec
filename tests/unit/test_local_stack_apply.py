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
