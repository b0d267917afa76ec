"""A probe script deployed the way CI deploys the real ones, for tests of the local runner."""

from __future__ import annotations

from glue_incremental import aws
from glue_incremental_tools import deploy

SCRIPT_KEY = "releases/0123456789abcdef/probe.py"
LIBRARY_KEY = "releases/0123456789abcdef/glue_incremental.zip"


def deploy_probe(bucket: str, source: str) -> None:
    """Create ``bucket``, upload the probe and the library zip ``deploy`` builds."""
    s3 = aws.client("s3")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key=SCRIPT_KEY, Body=source.encode())
    s3.put_object(
        Bucket=bucket, Key=LIBRARY_KEY, Body=deploy.build_library_zip(deploy.project_root())
    )
