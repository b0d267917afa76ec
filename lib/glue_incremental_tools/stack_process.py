"""The background process of ``make up``: local AWS, applied, deployed, with source files.

``stack.up`` starts ``python -m glue_incremental_tools.stack_process serve WORKDIR``
and waits for its ``stack.json``; it lives apart from ``stack`` because it drives
the demo's steps, while the demo and the commands read the stack record.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from glue_incremental_tools.demo import Demo
from glue_incremental_tools.localendpoint import DUMMY_ENV, running_local_aws
from glue_incremental_tools.stack import STACK_FILE


def serve(workdir: Path) -> None:
    """Run the stack until SIGTERM: local AWS, terraform apply, deploy, the source files."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with running_local_aws() as endpoint:
        demo = Demo(workdir, endpoint)
        outputs = demo.terraform_apply()
        demo.deploy()
        demo.generate_source()
        record = {
            "pid": os.getpid(),
            "environment": {**DUMMY_ENV, **endpoint.environment(), **demo.terraform_env},
            "jobs": outputs["job_names"],
            "data_bucket": outputs.get("data_bucket_name"),
            "watermarks_table": outputs["watermarks_table_name"],
        }
        partial = workdir / f"{STACK_FILE}.tmp"
        partial.write_text(json.dumps(record, indent=2))
        partial.replace(workdir / STACK_FILE)
        print("stack ready", flush=True)
        while True:
            signal.pause()


if __name__ == "__main__":  # the background process `up` starts
    if sys.argv[1:2] == ["serve"] and len(sys.argv) == 3:
        serve(Path(sys.argv[2]))
    else:
        sys.exit("usage: python -m glue_incremental_tools.stack_process serve WORKDIR")
