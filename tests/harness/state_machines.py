"""The start-dependents state machine as Terraform renders it, and its mocked Glue calls.

``rendered_definition`` asks ``terraform console`` for the definition of
``terraform/modules/glue_event_chain/definition`` (no provider, no state: offline,
well under a second), so a test executes exactly what the module deploys.
``mock_config`` writes LocalStack's Step Functions mock file (the AWS Step Functions
Local format: test cases naming, per state, a mocked response), which LocalStack reads
from ``SFN_MOCK_CONFIG`` at execution time:
https://docs.aws.amazon.com/step-functions/latest/dg/sfn-local-mock-cfg-file.html
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.harness.terraform import TERRAFORM, TF, terraform_env

DEFINITION_MODULE = TERRAFORM / "modules" / "glue_event_chain" / "definition"


def rendered_definition(comment: str = "test") -> dict[str, Any]:
    """The definition glue_event_chain deploys, evaluated by ``terraform console``.

    In a copy of the module: the console locks the state of its directory, and two
    workers asking at once in the checkout made one fail ("Error acquiring the state lock").
    """
    with tempfile.TemporaryDirectory(prefix="gi-definition-") as scratch:
        module = shutil.copytree(DEFINITION_MODULE, Path(scratch) / "definition")
        result = subprocess.run(
            [TF, "console", f"-var=comment={comment}"],
            cwd=module,
            input="jsonencode(local.definition)\n",
            env=terraform_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    if result.returncode != 0:
        raise AssertionError(f"terraform console of {DEFINITION_MODULE} failed:\n{result.stderr}")
    literal = result.stdout.strip()
    # The console prints an HCL string literal: JSON's escapes plus $${ and %%{.
    return json.loads(json.loads(literal.replace("$${", "${").replace("%%{", "%{")))


def glue_runs(state: str) -> dict[str, Any]:
    """A mocked GetJobRuns answer: the latest run, in ``state``."""
    return {"Return": {"JobRuns": [{"JobName": "mocked", "JobRunState": state}]}}


def mock_config(
    path: Path,
    machine: str,
    test_cases: Mapping[str, Mapping[str, str]],
    responses: Mapping[str, Mapping[str, Any]],
) -> None:
    """Write the mock file: ``test_cases`` name => state => response name.

    A response answers every invocation of its state (``0-99``), so the inline Map's
    parallel iterations get the same answer whatever order they run in.
    """
    document = {
        "StateMachines": {machine: {"TestCases": test_cases}},
        "MockedResponses": {name: {"0-99": answer} for name, answer in responses.items()},
    }
    path.write_text(json.dumps(document))
