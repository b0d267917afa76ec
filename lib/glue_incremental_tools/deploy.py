"""Deploy the Glue scripts and the library to an environment's bucket, then verify its jobs.

``python -m glue_incremental deploy --env ENV [--dry-run]`` (``make deploy ENV=...``):
compile everything (nothing is uploaded if one file fails), build the library zip
reproducibly, publish every file as ONE immutable release (``releases/<id>/``, its
manifest last; ``releases``), print its id, then verify that every job runs a complete
release, script and library of the same one (non-zero exit naming the job if not).
There are no mutable aliases: Terraform pins the release each job runs
(``deploy --print-release`` computes the id offline, for the apply). Bucket and jobs
come from ``terraform output -json`` of the environment (``--bucket``/``--jobs``
override). Design: ``docs/releases.md``.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import io
import json
import os
import py_compile
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from glue_incremental import aws

from glue_incremental_tools import project, releases, team_packages

PACKAGE = "glue_incremental"
# The command-line shim forwards to the tools package, which never ships to Glue.
LOCAL_ONLY_MODULES = frozenset({"__main__.py"})
LIBRARY_ZIP = "glue_incremental.zip"
VERSION_CHARS = 16
# 1980-01-01 is the earliest time a zip entry can carry.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def project_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The checkout holding ``glue_scripts/`` and ``lib/glue_incremental`` (see ``project``).

    Found from ``root``, ``$GLUE_INCREMENTAL_ROOT`` or the working directory, never
    from where this package is installed; raises DeployError when there is none.
    """
    try:
        return project.project_root(root)
    except project.ProjectNotFound as error:
        raise DeployError(str(error)) from None


class DeployError(Exception):
    """An expected deploy failure: printed as one ``error:`` line, exit code 2."""


class UnresolvedEnvironment(DeployError):
    """The environment's Terraform outputs cannot be read (unknown, not applied, no terraform).

    Messages name the environment and what to do, never a command's flags: each
    command adds its own way around (deploy: ``--bucket`` and ``--jobs``).
    """


TERRAFORM_INSTALL = "https://developer.hashicorp.com/terraform/install"


def known_environments(root: Path | None = None) -> list[str]:
    """Every environment name ``--env`` accepts: own roots and the shared root's tfvars."""
    environments = (root or project_root()) / "terraform" / "environments"
    own = {path.name for path in environments.iterdir() if any(path.glob("*.tf"))} - {SHARED_ROOT}
    shared = {path.stem for path in (environments / SHARED_ROOT).glob("*.tfvars")}
    return sorted(own | shared)


# -- artifacts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Artifact:
    """One deployable file: its bytes and where they go."""

    name: str  # glue_incremental.zip, incremental_load.py
    kind: str  # "library" | "script" | "package" (a team's, ``team_packages``)
    data: bytes = field(repr=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def version(self) -> str:
        return self.sha256[:VERSION_CHARS]


def library_sources(root: Path) -> list[Path]:
    package = root / "lib" / PACKAGE
    if not (package / "__init__.py").is_file():
        raise DeployError(f"{package} is not the {PACKAGE} package (no __init__.py)")
    return sorted(
        (
            path
            for path in package.rglob("*.py")
            if "__pycache__" not in path.parts and path.name not in LOCAL_ONLY_MODULES
        ),
        key=lambda path: path.relative_to(package).as_posix(),
    )


def script_sources(root: Path) -> list[Path]:
    scripts = sorted((root / "glue_scripts").glob("*.py"))
    if not scripts:
        raise DeployError(f"no scripts in {root / 'glue_scripts'}: nothing to deploy")
    return scripts


def compile_all(paths: Sequence[Path], root: Path) -> None:
    """``py_compile`` every file; the first that fails stops everything (nothing uploaded yet)."""
    with tempfile.TemporaryDirectory(prefix="gi-compile-") as scratch:
        for index, path in enumerate(paths):
            try:
                py_compile.compile(
                    str(path), cfile=os.path.join(scratch, f"{index}.pyc"), doraise=True
                )
            except py_compile.PyCompileError as error:
                detail = error.exc_value
                where = _relative(path, root)
                if isinstance(detail, SyntaxError):
                    message = f"{detail.msg} (line {detail.lineno})"
                else:
                    message = " ".join(str(detail).split())
                raise DeployError(
                    f"{where} does not compile: {message}; nothing was uploaded"
                ) from None


def build_library_zip(root: Path) -> bytes:
    """The library as a zip for ``--extra-py-files``: same sources, same bytes."""
    package = root / "lib" / PACKAGE
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in library_sources(root):
            info = zipfile.ZipInfo(f"{PACKAGE}/{path.relative_to(package).as_posix()}", ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, whatever machine builds it
            info.external_attr = 0o100644 << 16
            archive.writestr(info, path.read_bytes(), compresslevel=9)
    return buffer.getvalue()


def build_artifacts(root: Path | None = None) -> list[Artifact]:
    """Compile everything, then build the zip and read the scripts (library first)."""
    root = root or project_root()
    scripts = script_sources(root)
    packages = team_packages.package_dirs(root)
    team_sources = [path for package in packages for path in team_packages.package_sources(package)]
    compile_all([*scripts, *library_sources(root), *team_sources], root)
    artifacts = [Artifact(LIBRARY_ZIP, "library", build_library_zip(root))]
    artifacts += [Artifact(path.name, "script", path.read_bytes()) for path in scripts]
    artifacts += [
        Artifact(f"{p.name}.zip", "package", team_packages.build_package_zip(p)) for p in packages
    ]
    return artifacts


def deployment_version(artifacts: Sequence[Artifact]) -> str:
    """One version for the set: a hash of every file's name and checksum."""
    canonical = json.dumps(sorted((a.name, a.sha256) for a in artifacts), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:VERSION_CHARS]


def release_id(root: Path | None = None) -> str:
    """The release the checkout at ``root`` builds (``deploy --print-release``); no AWS call.

    The same sources always give the same id, so CI passes it to the apply
    (``-var release=<id>``) before ``deploy`` publishes it.
    """
    return deployment_version(build_artifacts(root))


def build_manifest(
    artifacts: Sequence[Artifact], bucket: str, *, environment: str | None = None
) -> dict[str, Any]:
    """The release's manifest (``releases/<id>/manifest.json``): its id and every file."""
    version = deployment_version(artifacts)
    base = {
        "version": version,
        "bucket": bucket,
        "environment": environment,
        "deployed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
    }
    return releases.release_manifest(version, bucket, artifacts, base)


# -- environment -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Environment:
    name: str | None
    bucket: str
    jobs: tuple[str, ...]


def resolve_environment(
    env: str | None,
    *,
    bucket: str | None = None,
    jobs: Sequence[str] | None = None,
    root: Path | None = None,
    terraform_env: Mapping[str, str] | None = None,
) -> Environment:
    """The bucket and job names: flags first, else ``terraform output -json`` of the environment."""
    if bucket and jobs is not None:
        return Environment(env, bucket, tuple(jobs))
    if not env:
        raise DeployError("say which environment: --env ENV (or both --bucket and --jobs)")
    outputs = terraform_outputs(env, root=root, terraform_env=terraform_env)
    if bucket is None:
        bucket = _output(outputs, "scripts_bucket_name", env)
    if jobs is None:
        names = _output(outputs, "job_names", env)
        jobs = list(names.values()) if isinstance(names, Mapping) else list(names)
    return Environment(env, str(bucket), tuple(str(job) for job in jobs))


SHARED_ROOT = "aws"


def environment_root(env: str, root: Path | None = None) -> tuple[Path, dict[str, str]]:
    """The Terraform root of ``env`` and the environment variables to read its state.

    ``terraform/environments/<env>`` when it is a root of its own (``local``);
    otherwise the shared root ``terraform/environments/aws`` when it has
    ``<env>.tfvars`` (dev, prod), whose state for ``env`` is initialised in
    ``TF_DATA_DIR=.terraform-<env>`` (as CI does) unless ``TF_DATA_DIR`` is set.
    """
    environments = (root or project_root()) / "terraform" / "environments"
    own = environments / env
    if any(own.glob("*.tf")):
        return own, {}
    shared = environments / SHARED_ROOT
    if (shared / f"{env}.tfvars").exists():
        data_dir = os.environ.get("TF_DATA_DIR") or str(shared / f".terraform-{env}")
        return shared, {"TF_DATA_DIR": data_dir}
    known = known_environments(root)
    close = difflib.get_close_matches(env, known, n=1)
    raise UnresolvedEnvironment(
        f"unknown environment {env!r}"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + f": environments are {', '.join(known)}"
    )


def output_values(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """``terraform output -json`` as name -> value, with the ``platform`` object's fields on top.

    Environments re-export the pipeline module's outputs as one ``platform`` object
    (declared once, in the module); callers read its fields by name.
    """
    values = {name: value.get("value") for name, value in outputs.items()}
    return {**(values.pop("platform", None) or {}), **values}


def terraform_outputs(
    env: str, *, root: Path | None = None, terraform_env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    directory, root_env = environment_root(env, root)
    terraform = shutil.which("terraform")
    if terraform is None:
        raise UnresolvedEnvironment(
            f"terraform is not on PATH: install Terraform >= 1.10 ({TERRAFORM_INSTALL}); "
            "`make setup` checks for it"
        )
    completed = subprocess.run(
        [terraform, f"-chdir={directory}", "output", "-json", "-no-color"],
        capture_output=True,
        text=True,
        env={**os.environ, **root_env, **(terraform_env or {})},
        check=False,
    )
    if completed.returncode != 0:
        detail = _first_error_line(completed.stderr) or f"exit code {completed.returncode}"
        raise UnresolvedEnvironment(f"terraform output of environments/{env} failed: {detail}")
    outputs = json.loads(completed.stdout or "{}")
    if not outputs:
        raise UnresolvedEnvironment(
            f"terraform/environments/{env} has no outputs (not applied, or another TF_DATA_DIR): "
            + ("start the local stack with `make up`" if env == "local" else "apply it first")
        )
    values = output_values(outputs)
    # The shared root holds one environment per data dir: refuse to act on the other one.
    applied = values.get("environment")
    if applied is not None and applied != env:
        raise DeployError(
            f"the initialised Terraform state is environment {applied!r}, not {env!r}: "
            f"run terraform init -backend-config={env}.backend.hcl with TF_DATA_DIR=.terraform-{env}"
        )
    return values


def _output(outputs: Mapping[str, Any], name: str, env: str) -> Any:
    value = outputs.get(name)
    if value in (None, "", [], {}):
        raise DeployError(f"terraform/environments/{env} has no output {name!r}; pass it by flag")
    return value


# -- upload ----------------------------------------------------------------------------------------


@dataclass
class DeployResult:
    manifest: dict[str, Any]
    released: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def release(self) -> str:
        return str(self.manifest["release"])


def upload(
    artifacts: Sequence[Artifact],
    bucket: str,
    *,
    environment: str | None = None,
    dry_run: bool = False,
    log: Any = print,
) -> DeployResult:
    """Publish the artifacts as one release (``releases.publish``: its manifest last)."""
    check_bucket(bucket)
    manifest = build_manifest(artifacts, bucket, environment=environment)
    result = DeployResult(manifest, dry_run=dry_run)
    try:
        result.released = releases.publish(
            bucket, result.release, artifacts, manifest, dry_run=dry_run, log=log
        )
    except releases.ReleaseError as error:
        raise DeployError(str(error)) from None
    log(f"  release       {result.release}: s3://{bucket}/{releases.key(result.release, '')}")
    return result


def check_bucket(bucket: str) -> None:
    try:
        aws.client("s3").head_bucket(Bucket=bucket)
    except ClientError as error:
        code = _code(error)
        where = aws.endpoint_url("s3") or "AWS"
        if code in {"404", "NoSuchBucket", "NotFound"}:
            raise DeployError(
                f"bucket {bucket!r} does not exist at {where}: "
                "apply the environment's terraform first "
                "(or pass --bucket)"
            ) from None
        if code in {"403", "AccessDenied", "Forbidden"}:
            raise DeployError(
                f"access to bucket {bucket!r} at {where} denied: check the credentials' role"
            ) from None
        raise


# -- verification ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobCheck:
    job: str
    script: str | None
    library: str | None
    problems: tuple[str, ...]
    release: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(jobs: Sequence[str]) -> list[JobCheck]:
    """Check that every job runs a complete release: its script AND library from the same
    ``releases/<id>/``, each holding the bytes that release's manifest records."""
    glue = aws.client("glue")
    checks = []
    for job in jobs:
        try:
            definition = glue.get_job(JobName=job)["Job"]
        except ClientError as error:
            if _code(error) == "EntityNotFoundException":
                checks.append(JobCheck(job, None, None, ("the job does not exist",)))
                continue
            raise
        problems: list[str] = []
        script = (definition.get("Command") or {}).get("ScriptLocation")
        release = releases.release_of(script)
        if not script:
            problems.append("it has no Command.ScriptLocation")
        elif release is None:
            problems.append(
                f"ScriptLocation {script} is not in a release (s3://<bucket>/releases/<id>/): "
                "apply the environment with release = the id deploy printed"
            )
        extra = [
            uri.strip()
            for uri in (definition.get("DefaultArguments") or {})
            .get("--extra-py-files", "")
            .split(",")
        ]
        libraries = [uri for uri in extra if uri.rsplit("/", 1)[-1] == LIBRARY_ZIP]
        library = libraries[0] if libraries else None
        if library is None:
            problems.append(
                f"--extra-py-files does not include {LIBRARY_ZIP} "
                f"(it is {','.join(filter(None, extra)) or 'unset'!r})"
            )
        if release is not None and script:
            problems += _check_release(release, script, library)
        checks.append(JobCheck(job, script, library, tuple(problems), release))
    return checks


def _check_release(release: str, script: str, library: str | None) -> list[str]:
    """A job on a release runs that release's script AND library, both as released."""
    bucket = script[5:].split("/", 1)[0]
    try:
        files = {entry["file"]: entry for entry in releases.read(bucket, release)["files"]}
    except releases.ReleaseError as error:
        return [str(error)]
    problems = _check_object("ScriptLocation", script, files)
    if library is not None:
        if releases.release_of(library) != release:
            problems.append(f"--extra-py-files {library} is not release {release}'s library")
        else:
            problems += _check_object("--extra-py-files", library, files)
    return problems


def _check_object(role: str, uri: str, by_name: Mapping[str, Any]) -> list[str]:
    if not uri.startswith("s3://") or "/" not in uri[5:]:
        return [f"{role} {uri} is not an s3://bucket/key URI"]
    bucket, key = uri[5:].split("/", 1)
    name = key.rsplit("/", 1)[-1]
    entry = by_name.get(name)
    if entry is None:
        return [
            f"{role} {uri} is not a deployed file (the manifest has {', '.join(sorted(by_name))})"
        ]
    try:
        body = aws.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as error:
        if _code(error) in {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}:
            return [f"{role} {uri} does not exist"]
        raise
    actual = hashlib.sha256(body).hexdigest()
    if actual != entry["sha256"]:
        return [f"{role} {uri} has sha256 {actual[:16]}, the manifest says {entry['sha256'][:16]}"]
    return []


# -- the command -----------------------------------------------------------------------------------


def deploy(
    env: str | None,
    *,
    bucket: str | None = None,
    jobs: Sequence[str] | None = None,
    dry_run: bool = False,
    verify_only: bool = False,
    root: Path | None = None,
    terraform_env: Mapping[str, str] | None = None,
    log: Any = print,
) -> DeployResult | None:
    """Everything ``deploy`` does; raises DeployError on any problem (verification included).

    Returns the upload result (None with ``verify_only``).
    """
    root = root or project_root()
    try:
        artifacts = None if verify_only else build_artifacts(root)  # compile before any request
        target = resolve_environment(
            env, bucket=bucket, jobs=jobs, root=root, terraform_env=terraform_env
        )
        where = aws.endpoint_url("s3") or "AWS"
        log(f"deploy: environment {target.name or '-'}, bucket {target.bucket} ({where})")
        result = None
        if artifacts is not None:
            result = upload(
                artifacts, target.bucket, environment=target.name, dry_run=dry_run, log=log
            )
            log(json.dumps(result.manifest, indent=2, sort_keys=True))
            if dry_run:
                log("dry run: nothing was written, the jobs were not verified")
                return result
        checks = verify(target.jobs)
        for check in checks:
            status = "ok" if check.ok else "MISMATCH: " + "; ".join(check.problems)
            if check.ok and check.release:
                status += f" (release {check.release})"
            if check.ok and result is not None and check.release != result.release:
                # A pipeline's own `release` pins it; otherwise the apply has not pinned
                # this build yet (docs/releases.md).
                status += f", not {result.release}: pinned by its pipeline, or not applied yet"
            log(f"  verify {check.job}: {status}")
        failed = [check for check in checks if not check.ok]
        if failed:
            detail = "; ".join(f"job {check.job}: {', '.join(check.problems)}" for check in failed)
            raise DeployError(f"verification failed: {detail}")
        if result is not None:
            log(f"release {result.release}")
        log(f"verified: {len(checks)} job(s) run a complete release")
        return result
    except NoCredentialsError:
        raise DeployError(
            "no AWS credentials: configure a profile, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
            "or the CI role (OIDC)"
        ) from None
    except (ClientError, BotoCoreError) as error:
        raise DeployError(f"AWS request failed: {' '.join(str(error).split())}") from None


def register(subparsers: Any) -> None:
    """Add the ``deploy`` command group."""
    parser = subparsers.add_parser(
        "deploy",
        help="upload the Glue scripts and the library, then verify the jobs",
        description=(
            "Compile, build the library zip, publish scripts, library and team packages as "
            "one immutable release (releases/<id>/, its manifest last), print "
            "'release <id>', then check that every job of the environment runs a complete "
            "release. The apply pins the release (-var release=<id>, from --print-release)."
        ),
    )
    parser.add_argument(
        "--env",
        help="environment (local: terraform/environments/local; dev, prod: "
        "terraform/environments/aws with TF_DATA_DIR=.terraform-<ENV>); bucket and job names "
        "from its outputs",
    )
    parser.add_argument(
        "--bucket", help="the scripts bucket (default: terraform output scripts_bucket_name)"
    )
    parser.add_argument(
        "--jobs",
        type=lambda text: [name.strip() for name in text.split(",") if name.strip()],
        help="comma-separated Glue jobs to verify (default: terraform output job_names)",
    )
    parser.add_argument(
        "--root",
        help=f"the project checkout to deploy (default: ${project.ROOT_ENV}, else the working "
        "directory or its nearest parent holding glue_scripts/)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="build and show what would change; write nothing"
    )
    parser.add_argument(
        "--verify-only",
        action="store_true",
        help="upload nothing: check that every job runs a complete release",
    )
    parser.add_argument(
        "--print-release",
        action="store_true",
        help="print the release id this checkout builds and exit (no AWS call; for the apply)",
    )
    parser.set_defaults(handler=_cmd_deploy)
    actions = parser.add_subparsers(dest="deploy_action", metavar="{switch}")
    switch = actions.add_parser(
        "switch",
        help="point one job at a deployed release (one glue:UpdateJob), e.g. to roll back",
        description=(
            "Point a job's script, --extra-py-files and --release at one deployed release in a "
            "single glue:UpdateJob. Terraform stays the source of truth: commit the printed "
            "release line, or the next apply moves the job back."
        ),
    )
    switch.add_argument("--env", help="environment (the bucket from its terraform outputs)")
    switch.add_argument("--bucket", help="the scripts bucket (default: from --env)")
    switch.add_argument("--job", required=True, help="the Glue job to switch")
    switch.add_argument("--release", required=True, help="a release id `deploy` printed")
    switch.add_argument("--root", help="the project checkout (for --env)")
    switch.add_argument("--dry-run", action="store_true", help="check and show; change nothing")
    switch.set_defaults(handler=_cmd_switch)


def _cmd_deploy(args: argparse.Namespace) -> int:
    from glue_incremental_tools.errors import CommandError

    if args.print_release:
        try:
            print(release_id(project_root(args.root)))
        except DeployError as error:
            raise CommandError(str(error)) from None
        return 0
    try:
        deploy(
            args.env,
            bucket=args.bucket,
            jobs=args.jobs,
            dry_run=args.dry_run,
            verify_only=args.verify_only,
            root=project_root(args.root),
        )
    except UnresolvedEnvironment as error:
        raise CommandError(f"{error}; or pass --bucket and --jobs") from None
    except DeployError as error:
        raise CommandError(str(error)) from None
    return 0


def switch_release(
    env: str | None,
    job: str,
    release: str,
    *,
    bucket: str | None = None,
    dry_run: bool = False,
    root: Path | None = None,
    log: Any = print,
) -> releases.Switch:
    """``deploy switch``: move one job to a release, then verify it runs exactly that."""
    if not env and not bucket:
        raise DeployError("say which environment: --env ENV (or --bucket)")
    try:
        target = resolve_environment(env, bucket=bucket, jobs=[job], root=root)
        moved = releases.switch(job, release, target.bucket, dry_run=dry_run)
        verb = "would switch" if dry_run else "switched"
        log(f"{verb} job {job}: release {moved.previous or '-'} -> {moved.release}")
        if not dry_run:
            problems = verify([job])[0].problems
            if problems:
                raise DeployError(f"job {job} after the switch: {'; '.join(problems)}")
        log(
            "Terraform is the source of truth: set this on the job's pipeline in the "
            "environment's tfvars and commit it, or the next apply moves the job back:"
        )
        log(f"  {moved.tfvars_line}")
        return moved
    except releases.ReleaseError as error:
        raise DeployError(str(error)) from None
    except NoCredentialsError:
        raise DeployError("no AWS credentials: configure a profile or the CI role") from None
    except (ClientError, BotoCoreError) as error:
        raise DeployError(f"AWS request failed: {' '.join(str(error).split())}") from None


def _cmd_switch(args: argparse.Namespace) -> int:
    from glue_incremental_tools.errors import CommandError

    try:
        switch_release(
            args.env,
            args.job,
            args.release,
            bucket=args.bucket,
            dry_run=args.dry_run,
            root=project_root(args.root) if args.env and not args.bucket else None,
        )
    except UnresolvedEnvironment as error:
        raise CommandError(f"{error}; or pass --bucket") from None
    except DeployError as error:
        raise CommandError(str(error)) from None
    return 0


# -- helpers ---------------------------------------------------------------------------------------


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _first_error_line(text: str) -> str:
    """Terraform's first ``Error:`` line; else its first line that is not a warning's."""
    lines = [line.strip(" │╷╵\t") for line in text.splitlines()]
    for cleaned in lines:
        if cleaned.startswith("Error: "):
            return cleaned.removeprefix("Error: ")
    for cleaned in lines:
        if cleaned and not cleaned.startswith("Warning"):
            return cleaned
    return ""


def _git_commit() -> str | None:
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=project_root(),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired, DeployError):
        return None
    return completed.stdout.strip() or None
