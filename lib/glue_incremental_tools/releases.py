"""Immutable releases: the scripts and the library together under ``releases/<id>/``.

A release id is the deploy's content hash (``deploy.deployment_version``), so one
id always names the same bytes. ``publish`` uploads each file once and the release's
``manifest.json`` last (a release without it is incomplete, and no job may point at
it); an object already there with other bytes is refused, never overwritten.
``switch`` points one Glue job at a release in ONE ``glue:UpdateJob`` call (script,
``--extra-py-files`` and ``--release`` together), so no run can start on a mix of
two releases. Terraform stays the source of truth: ``switch`` prints the tfvars line
to commit (see ``docs/releases.md``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from glue_incremental import aws

if TYPE_CHECKING:
    from glue_incremental_tools.deploy import Artifact

PREFIX = "releases"
MANIFEST = "manifest.json"
LIBRARY_ZIP = "glue_incremental.zip"
RELEASE_ARGUMENT = "--release"
SHA_METADATA = "sha256"

# What glue:UpdateJob's JobUpdate accepts: UpdateJob REPLACES the job definition, so
# every field GetJob returned is sent back unchanged except the three a switch moves.
# https://docs.aws.amazon.com/glue/latest/webapi/API_JobUpdate.html
JOB_UPDATE_FIELDS = (
    "JobMode",
    "JobRunQueuingEnabled",
    "Description",
    "LogUri",
    "Role",
    "ExecutionProperty",
    "Command",
    "DefaultArguments",
    "NonOverridableArguments",
    "Connections",
    "MaxRetries",
    "Timeout",
    "MaxCapacity",
    "WorkerType",
    "NumberOfWorkers",
    "SecurityConfiguration",
    "NotificationProperty",
    "GlueVersion",
    "ExecutionClass",
    "SourceControlDetails",
    "MaintenanceWindow",
)


class ReleaseError(Exception):
    """A release that cannot be published or switched to; one line naming it."""


def key(release: str, name: str) -> str:
    return f"{PREFIX}/{release}/{name}"


def uri(bucket: str, release: str, name: str) -> str:
    return f"s3://{bucket}/{key(release, name)}"


def release_of(location: str | None) -> str | None:
    """The release id in ``s3://bucket/releases/<id>/file``; None for any other location."""
    if not location or not location.startswith("s3://"):
        return None
    parts = location[5:].split("/")
    if len(parts) == 4 and parts[1] == PREFIX and parts[2] and parts[3]:
        return parts[2]
    return None


def release_manifest(
    release: str, bucket: str, artifacts: Sequence[Artifact], base: Mapping[str, Any]
) -> dict[str, Any]:
    """The release's own manifest: the deploy's, with the release's keys."""
    return {
        **{name: value for name, value in base.items() if name != "files"},
        "release": release,
        "files": [
            {
                "file": a.name,
                "kind": a.kind,
                "sha256": a.sha256,
                "size": len(a.data),
                "key": key(release, a.name),
                "uri": uri(bucket, release, a.name),
            }
            for a in artifacts
        ],
    }


def publish(
    bucket: str,
    release: str,
    artifacts: Sequence[Artifact],
    manifest: Mapping[str, Any],
    *,
    dry_run: bool = False,
    log: Callable[[str], object] = print,
) -> list[str]:
    """Upload the release's files, then its manifest; return the keys written.

    Idempotent: a file already holding the same bytes is skipped, so a redeploy of
    the same commit writes nothing. A key holding other bytes raises ReleaseError
    before anything else is written for it (a release is never overwritten).
    """
    s3 = aws.client("s3")
    written: list[str] = []
    verb = "would upload" if dry_run else "released"
    for artifact in artifacts:
        target = key(release, artifact.name)
        held = _sha256_of(s3, bucket, target)
        if held == artifact.sha256:
            continue
        if held is not None:
            raise ReleaseError(
                f"s3://{bucket}/{target} already holds other bytes (sha256 {held[:16]}, "
                f"this build {artifact.sha256[:16]}): release {release} is immutable, "
                "refusing to overwrite it; find who wrote it (CloudTrail)"
            )
        if not dry_run:
            # If-None-Match: S3 itself refuses to replace a release object, and the bucket
            # policy refuses a release write without it (modules/scripts_bucket).
            s3.put_object(
                Bucket=bucket,
                Key=target,
                IfNoneMatch="*",
                Body=artifact.data,
                ContentType="application/zip" if artifact.kind == "library" else "text/x-python",
                Metadata={SHA_METADATA: artifact.sha256},
            )
        written.append(target)
        log(f"  {verb:<13} {target}  ({len(artifact.data):,} bytes)")
    manifest_key = key(release, MANIFEST)
    if _sha256_of(s3, bucket, manifest_key) is None:
        if not dry_run:
            s3.put_object(
                Bucket=bucket,
                Key=manifest_key,
                IfNoneMatch="*",
                Body=(json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode(),
                ContentType="application/json",
                Metadata={SHA_METADATA: "manifest"},
            )
        written.append(manifest_key)
        log(f"  {verb:<13} {manifest_key}")
    return written


def read(bucket: str, release: str) -> dict[str, Any]:
    """A complete release's manifest; ReleaseError naming the release when there is none."""
    try:
        body = aws.client("s3").get_object(Bucket=bucket, Key=key(release, MANIFEST))["Body"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
            raise ReleaseError(
                f"release {release!r} is not in s3://{bucket}/{PREFIX}/ (no {MANIFEST}): "
                "deploy it first (`deploy --env ENV` prints each release id)"
            ) from None
        raise
    return json.loads(body.read())


@dataclass(frozen=True)
class Switch:
    """One job moved from one release to another (``previous`` None: it ran no release)."""

    job: str
    previous: str | None
    release: str
    script: str
    library: str

    @property
    def tfvars_line(self) -> str:
        return f'release = "{self.release}"  # job {self.job}'


def switch(job: str, release: str, bucket: str, *, dry_run: bool = False) -> Switch:
    """Point ``job`` at ``release`` in one glue:UpdateJob (script, library, team package,
    ``--release``).

    The release must be complete (its manifest present) and hold the job's script;
    the job keeps its script's file name and every other setting.
    """
    manifest = read(bucket, release)
    files = {entry["file"]: entry for entry in manifest["files"]}
    glue = aws.client("glue")
    try:
        definition = glue.get_job(JobName=job)["Job"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            raise ReleaseError(f"job {job!r} does not exist") from None
        raise
    command = dict(definition.get("Command") or {})
    script_name = str(command.get("ScriptLocation") or "").rsplit("/", 1)[-1]
    if script_name not in files:
        raise ReleaseError(
            f"release {release} has no {script_name or 'script'} for job {job} "
            f"(it holds {', '.join(sorted(files))})"
        )
    arguments = dict(definition.get("DefaultArguments") or {})
    previous = arguments.get(RELEASE_ARGUMENT) or release_of(command.get("ScriptLocation"))
    script = uri(bucket, release, script_name)
    library = uri(bucket, release, LIBRARY_ZIP)
    extra = [part.strip() for part in arguments.get("--extra-py-files", "").split(",")]
    # A team package shipped in a release moves with it, as the script and library do.
    others = [
        uri(bucket, release, part.rsplit("/", 1)[-1])
        if release_of(part) is not None and part.rsplit("/", 1)[-1] in files
        else part
        for part in extra
        if part and part.rsplit("/", 1)[-1] != LIBRARY_ZIP
    ]
    command["ScriptLocation"] = script
    arguments["--extra-py-files"] = ",".join([library, *others])
    arguments[RELEASE_ARGUMENT] = release
    update = {name: definition[name] for name in JOB_UPDATE_FIELDS if name in definition}
    update["Command"] = command
    update["DefaultArguments"] = arguments
    if update.get("WorkerType"):
        # GetJob reports the capacity workers give; UpdateJob refuses both at once.
        update.pop("MaxCapacity", None)
    if not dry_run:
        glue.update_job(JobName=job, JobUpdate=update)
    return Switch(job, previous, release, script, library)


def _sha256_of(s3: Any, bucket: str, target: str) -> str | None:
    """The object's recorded sha256 (hashing its bytes when it records none); None if absent."""
    try:
        head = s3.head_object(Bucket=bucket, Key=target)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
            return None
        raise
    recorded = head.get("Metadata", {}).get(SHA_METADATA)
    if recorded:
        return str(recorded)
    body = s3.get_object(Bucket=bucket, Key=target)["Body"].read()
    return hashlib.sha256(body).hexdigest()
