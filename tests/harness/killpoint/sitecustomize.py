"""Imported at start-up by subprocesses whose PYTHONPATH starts here: installs the kill hook."""

import os

if (
    os.environ.get("GLUE_INCREMENTAL_TEST_KILL_AT_STEP")
    or os.environ.get("GLUE_INCREMENTAL_TEST_KILL_AT_POINT")
    or os.environ.get("GLUE_INCREMENTAL_TEST_STEP_LOG")
):
    from tests.harness.faults import install_kill_from_environment

    install_kill_from_environment()
