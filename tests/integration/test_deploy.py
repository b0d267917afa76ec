"""``python -m glue_incremental deploy`` against the local endpoint (boto3-created bucket and jobs)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental_tools import deploy
from glue_incremental_tools.cli import main

BUCKET = "gi-test-scripts"
LOAD, JOIN = "t-incremental-load", "t-incremental-join"


# The release this checkout builds: what the apply pins and the deploy publishes.
RELEASE = deploy.release_id()
RELEASED = f"s3://{BUCKET}/releases/{RELEASE}"


@pytest.fixture
def env(aws):
    """A scripts bucket and two jobs pinned to this checkout's release, as Terraform makes them."""
    aws_s3().create_bucket(Bucket=BUCKET)
    for job, script in ((LOAD, "incremental_load"), (JOIN, "incremental_join")):
        create_job(job, f"{RELEASED}/{script}.py")
    return aws


def aws_s3():
    return aws.client("s3")


def create_job(name: str, script: str, library: str = f"{RELEASED}/glue_incremental.zip"):
    aws.client("glue").create_job(
        Name=name,
        Role="arn:aws:iam::123456789012:role/glue",
        Command={"Name": "glueetl", "ScriptLocation": script, "PythonVersion": "3"},
        DefaultArguments={"--extra-py-files": library, "--job-language": "python"},
    )


@pytest.fixture
def writes():
    """Every PutObject/CopyObject the deploy makes, in order (botocore event hooks)."""
    made: list[tuple[str, str]] = []

    def record(params, **kwargs):
        made.append((kwargs["event_name"].rsplit(".", 1)[-1], params["Key"]))

    events = aws_s3().meta.events
    events.register("provide-client-params.s3.PutObject", record)
    events.register("provide-client-params.s3.CopyObject", record)
    yield made
    events.unregister("provide-client-params.s3.PutObject", record)
    events.unregister("provide-client-params.s3.CopyObject", record)


# Every script of glue_scripts/ ships, the generic jobs and the custom ones alike.
SCRIPTS = {path.name for path in (deploy.project_root() / "glue_scripts").glob("*.py")}


def run_deploy(*args: str) -> int:
    return main(["deploy", "--bucket", BUCKET, "--jobs", f"{LOAD},{JOIN}", *args])


def body(key: str) -> bytes:
    return aws_s3().get_object(Bucket=BUCKET, Key=key)["Body"].read()


def test_publishes_one_release_with_its_manifest_and_verifies_the_jobs_run_it(env, capsys):
    assert run_deploy() == 0

    out = capsys.readouterr().out
    manifest = json.loads(body(f"releases/{RELEASE}/manifest.json"))
    assert manifest["release"] == manifest["version"] == RELEASE
    names = {entry["file"] for entry in manifest["files"]}
    assert names == {"glue_incremental.zip", *SCRIPTS}
    for entry in manifest["files"]:
        data = body(entry["key"])
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert entry["key"] == f"releases/{RELEASE}/{entry['file']}"
    listed = aws_s3().list_objects_v2(Bucket=BUCKET)["Contents"]
    assert all(o["Key"].startswith(f"releases/{RELEASE}/") for o in listed)  # no aliases
    assert (
        body(f"releases/{RELEASE}/incremental_load.py")
        == Path(deploy.project_root(), "glue_scripts/incremental_load.py").read_bytes()
    )
    assert f"verify {LOAD}: ok (release {RELEASE})" in out and f"verify {JOIN}: ok" in out
    assert f"\nrelease {RELEASE}\n" in out  # the line CI's summary shows


def test_print_release_names_the_release_deploy_publishes_without_aws(capsys, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)

    assert main(["deploy", "--print-release"]) == 0

    assert capsys.readouterr().out == f"{RELEASE}\n"


def test_the_library_zip_is_deterministic_and_importable(tmp_path):
    first = deploy.build_library_zip(deploy.project_root())
    second = deploy.build_library_zip(deploy.project_root())
    assert first == second

    archive = zipfile.ZipFile(io.BytesIO(first))
    names = archive.namelist()
    assert names == sorted(names, key=lambda n: n.removeprefix("glue_incremental/"))
    assert "glue_incremental/__init__.py" in names and "glue_incremental/sources/files.py" in names
    assert not any("__pycache__" in name or not name.endswith(".py") for name in names)
    assert {info.date_time for info in archive.infolist()} == {deploy.ZIP_EPOCH}
    assert {stat.S_IMODE(info.external_attr >> 16) for info in archive.infolist()} == {0o644}


def test_a_redeploy_of_the_same_checkout_writes_nothing(env, writes):
    assert run_deploy() == 0
    first = list(writes)
    writes.clear()

    assert run_deploy() == 0

    # every file once, then the release's manifest; nothing copied, no alias
    assert [kind for kind, _ in first] == ["PutObject"] * (len(SCRIPTS) + 1 + 1)
    assert writes == []


def test_the_release_manifest_is_written_last(env, writes):
    assert run_deploy() == 0

    keys = [key for _, key in writes]
    assert keys[-1] == f"releases/{RELEASE}/manifest.json"
    assert not any(key.endswith("manifest.json") for key in keys[:-1])


def test_a_job_running_something_else_fails_verification_naming_it(env, capsys):
    assert run_deploy() == 0
    capsys.readouterr()
    # A writer bypassing the bucket policy replaces a release object (moto enforces none).
    aws_s3().put_object(
        Bucket=BUCKET, Key=f"releases/{RELEASE}/incremental_load.py", Body=b"print('hot fix')\n"
    )

    assert run_deploy("--verify-only") == 2

    err = capsys.readouterr().err.strip()
    assert err.startswith("error: verification failed: job t-incremental-load:")
    assert f"{RELEASED}/incremental_load.py has sha256" in err
    assert JOIN not in err
    assert len(err.splitlines()) == 1


def test_verification_names_jobs_outside_a_release_or_missing(env, capsys):
    create_job(
        "t-other", f"s3://{BUCKET}/scripts/current/not_deployed.py", library="s3://x/lib/other.zip"
    )

    assert main(["deploy", "--bucket", BUCKET, "--jobs", f"{LOAD},t-other,t-gone"]) == 2

    err = capsys.readouterr().err
    assert (
        "job t-other: ScriptLocation s3://gi-test-scripts/scripts/current/not_deployed.py "
        "is not in a release" in err
    )
    assert "--extra-py-files does not include glue_incremental.zip" in err
    assert "job t-gone: the job does not exist" in err
    assert f"job {LOAD}" not in err


def test_a_script_that_does_not_compile_uploads_nothing(env, tmp_path, writes, capsys):
    root = tmp_path / "repo"
    (root / "glue_scripts").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "lib" / "glue_incremental").symlink_to(
        Path(deploy.project_root(), "lib", "glue_incremental")
    )
    (root / "glue_scripts" / "good.py").write_text("print('ok')\n")
    (root / "glue_scripts" / "broken.py").write_text("def main(:\n    pass\n")

    with pytest.raises(
        deploy.DeployError, match=r"glue_scripts/broken.py does not compile: .*line 1"
    ):
        deploy.deploy(None, bucket=BUCKET, jobs=[LOAD], root=root, log=lambda _: None)

    assert writes == []
    assert aws_s3().list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0


def test_a_missing_bucket_is_one_clear_error(env, capsys):
    assert main(["deploy", "--bucket", "gi-no-such-bucket", "--jobs", LOAD]) == 2

    err = capsys.readouterr().err
    assert err.startswith("error: bucket 'gi-no-such-bucket' does not exist at http://")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_no_credentials_is_one_clear_error(env, monkeypatch, capsys):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    aws.reset_client_cache()
    try:
        assert run_deploy() == 2
    finally:
        monkeypatch.undo()
        aws.reset_client_cache()

    assert capsys.readouterr().err.startswith("error: no AWS credentials")


def test_dry_run_writes_nothing(env, writes, capsys):
    assert run_deploy("--dry-run") == 0

    assert writes == []
    out = capsys.readouterr().out
    assert "would upload" in out and "dry run: nothing was written" in out


def test_bucket_and_jobs_come_from_terraform_outputs(env, tmp_path, monkeypatch, capsys):
    """``--env`` reads ``terraform output -json`` of terraform/environments/<env>."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # The shape environments output: the pipeline module's fields in one `platform` object.
    platform = {
        "scripts_bucket_name": BUCKET,
        "job_names": {"incremental_load": LOAD, "incremental_join": JOIN},
    }
    outputs = {"platform": {"value": platform}}
    fake = bin_dir / "terraform"
    fake.write_text(
        f"#!/bin/sh\necho \"$@\" > {tmp_path}/args\ncat <<'EOF'\n{json.dumps(outputs)}\nEOF\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    assert main(["deploy", "--env", "local"]) == 0

    assert (
        "-chdir=" in (tmp_path / "args").read_text()
        and "terraform/environments/local" in (tmp_path / "args").read_text()
    )
    out = capsys.readouterr().out
    assert f"bucket {BUCKET}" in out and f"verify {LOAD}: ok" in out


def test_dev_and_prod_read_the_shared_root_in_their_own_data_dir(tmp_path, monkeypatch):
    """dev/prod share terraform/environments/aws; each state lives in TF_DATA_DIR=.terraform-<env>."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "terraform"
    outputs = {
        "environment": {"value": "dev"},
        "platform": {"value": {"scripts_bucket_name": BUCKET}},
    }
    fake.write_text(
        f'#!/bin/sh\necho "$@ TF_DATA_DIR=$TF_DATA_DIR" > {tmp_path}/args\n'
        f"cat <<'EOF'\n{json.dumps(outputs)}\nEOF\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TF_DATA_DIR", raising=False)

    assert deploy.terraform_outputs("dev")["scripts_bucket_name"] == BUCKET
    args = (tmp_path / "args").read_text()
    assert "-chdir=" in args and "terraform/environments/aws " in args
    assert args.strip().endswith("terraform/environments/aws/.terraform-dev")

    with pytest.raises(deploy.DeployError, match="state is environment 'dev', not 'prod'"):
        deploy.terraform_outputs("prod")


def test_an_unknown_environment_is_one_clear_error(capsys):
    assert main(["deploy", "--env", "nowhere"]) == 2
    assert "unknown environment 'nowhere'" in capsys.readouterr().err


LOCAL_ONLY_IMPORTS = ("moto", "werkzeug", "glue_incremental_tools", "localstack", "pytest")


def test_the_library_zip_holds_only_what_glue_runs():
    import ast

    archive = zipfile.ZipFile(io.BytesIO(deploy.build_library_zip(deploy.project_root())))
    imported: dict[str, set[str]] = {}
    for name in archive.namelist():
        tree = ast.parse(archive.read(name))
        roots = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
        imported[name] = roots & set(LOCAL_ONLY_IMPORTS)

    assert {"glue_incremental/watermarks/store.py", "glue_incremental/join/job.py"} <= set(imported)
    assert "glue_incremental/__main__.py" not in imported
    assert {name: roots for name, roots in imported.items() if roots} == {}
