"""The CLI's one-line Terraform errors: when Terraform warns about its
CLI configuration before the error (a ``TF_CLI_CONFIG_FILE`` naming a missing file), the one
line shown must be the error, not the warning's heading."""

from __future__ import annotations

from glue_incremental_tools.deploy import _first_error_line

# terraform output -json -no-color, TF_CLI_CONFIG_FILE naming a missing file, no init (1.x).
STDERR = """There are some problems with the CLI configuration:
╷
│ Warning: Unable to open CLI configuration file
│
│ The CLI configuration file at "/root/.terraformrc" does not exist.
╵


Error: Backend initialization required, please run "terraform init"

Reason: Initial configuration of the requested backend "local"
"""


def test_a_cli_configuration_warning_before_the_error_does_not_hide_it():
    assert _first_error_line(STDERR).startswith("Backend initialization required")
