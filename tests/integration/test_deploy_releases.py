"""Immutable releases: ``deploy`` uploads one, ``deploy switch`` moves a job to one (moto's Glue)."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.awsrequest import AWSResponse
from glue_incremental import aws
from glue_incremental_tools import deploy, releases
from glue_incremental_tools.cli import main

BUCKET = "gi-release-scripts"
LOAD = "t-release-load"
# The release this checkout builds, which the job is pinned to as Terraform pins it.
RELEASE = deploy.release_id()


@pytest.fixture
def env(aws):
    s3().create_bucket(Bucket=BUCKET)
    aws_glue().create_job(
        Name=LOAD,
        Role="arn:aws:iam::123456789012:role/glue",
        Command={
            "Name": "glueetl",
            "ScriptLocation": f"s3://{BUCKET}/releases/{RELEASE}/incremental_load.py",
            "PythonVersion": "3",
        },
        DefaultArguments={
            "--extra-py-files": f"s3://{BUCKET}/releases/{RELEASE}/glue_incremental.zip",
            "--release": RELEASE,
            "--source": "s3://lake/raw/orders/",
        },
        WorkerType="G.1X",
        NumberOfWorkers=3,
        Timeout=45,
        GlueVersion="4.0",
    )
    return aws


@pytest.fixture(autouse=True)
def update_job_on_moto(env):
    """moto 5.2 answers glue:UpdateJob with NotImplementedError: apply the validated
    JobUpdate as Glue does (it replaces the definition) by delete + create at moto."""
    glue = aws_glue()
    sent: dict = {}

    def capture(params, **kwargs):
        sent.clear()
        sent.update(params)

    def apply(**kwargs):
        glue.delete_job(JobName=sent["JobName"])
        glue.create_job(Name=sent["JobName"], **sent["JobUpdate"])
        return AWSResponse("", 200, {}, None), {"JobName": sent["JobName"]}

    glue.meta.events.register("provide-client-params.glue.UpdateJob", capture)
    glue.meta.events.register("before-call.glue.UpdateJob", apply)
    yield
    glue.meta.events.unregister("provide-client-params.glue.UpdateJob", capture)
    glue.meta.events.unregister("before-call.glue.UpdateJob", apply)


def s3():
    return aws.client("s3")


def aws_glue():
    return aws.client("glue")


def job() -> dict:
    return aws_glue().get_job(JobName=LOAD)["Job"]


def deployed(root: Path | None = None) -> str:
    result = deploy.deploy(None, bucket=BUCKET, jobs=[LOAD], root=root, log=lambda _: None)
    assert result is not None
    return str(result.manifest["release"])


def another_checkout(tmp_path: Path) -> Path:
    """The checkout with one script changed and a team package: a different release."""
    root = tmp_path / "next"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "glue_incremental").symlink_to(deploy.project_root() / "lib/glue_incremental")
    (root / "glue_scripts").mkdir()
    for script in (deploy.project_root() / "glue_scripts").glob("*.py"):
        (root / "glue_scripts" / script.name).write_bytes(script.read_bytes())
    with (root / "glue_scripts" / "incremental_load.py").open("a") as script:
        script.write("# next release\n")
    (root / "packages" / "teams_x").mkdir(parents=True)
    (root / "packages" / "teams_x" / "__init__.py").write_text("")
    return root


def test_a_deploy_uploads_scripts_and_library_together_as_one_release(env, capsys):
    assert main(["deploy", "--bucket", BUCKET, "--jobs", LOAD]) == 0

    release = RELEASE
    listed = s3().list_objects_v2(Bucket=BUCKET, Prefix=f"releases/{release}/")["Contents"]
    scripts = [path.name for path in (deploy.project_root() / "glue_scripts").glob("*.py")]
    assert sorted(item["Key"].rsplit("/", 1)[-1] for item in listed) == sorted(
        ["glue_incremental.zip", "manifest.json", *scripts]
    )
    assert releases.read(BUCKET, release)["release"] == release
    assert f"release       {release}" in capsys.readouterr().out


def test_redeploying_the_same_build_writes_nothing_into_its_release(env):
    release = deployed()
    before = s3().list_objects_v2(Bucket=BUCKET, Prefix="releases/")["Contents"]

    assert deployed() == release

    after = s3().list_objects_v2(Bucket=BUCKET, Prefix="releases/")["Contents"]
    assert [(o["Key"], o["ETag"], o["LastModified"]) for o in after] == [
        (o["Key"], o["ETag"], o["LastModified"]) for o in before
    ]


def test_a_release_holding_other_bytes_is_refused_not_overwritten(env, capsys):
    release = deployed()
    tampered = f"releases/{release}/incremental_load.py"
    s3().put_object(Bucket=BUCKET, Key=tampered, Body=b"print('not the release')\n")

    assert main(["deploy", "--bucket", BUCKET, "--jobs", LOAD]) == 2

    err = capsys.readouterr().err
    assert err.startswith(f"error: s3://{BUCKET}/{tampered} already holds other bytes")
    assert "immutable, refusing to overwrite it" in err and err.count("\n") == 1
    body = s3().get_object(Bucket=BUCKET, Key=tampered)["Body"].read()
    assert body == b"print('not the release')\n"


def test_switch_points_script_library_package_and_release_argument_at_one_release(
    env, tmp_path, capsys
):
    deployed()
    release = deployed(another_checkout(tmp_path))
    before = job()
    update = {name: before[name] for name in releases.JOB_UPDATE_FIELDS if name in before}
    update.pop("MaxCapacity", None)
    update["DefaultArguments"]["--extra-py-files"] += (
        f",s3://{BUCKET}/releases/{RELEASE}/teams_x.zip,s3://own/y.zip"
    )
    aws_glue().update_job(JobName=LOAD, JobUpdate=update)

    assert main(["deploy", "switch", "--bucket", BUCKET, "--job", LOAD, "--release", release]) == 0

    definition = job()
    assert definition["Command"]["ScriptLocation"] == (
        f"s3://{BUCKET}/releases/{release}/incremental_load.py"
    )
    arguments = definition["DefaultArguments"]
    # The team package moves with the release that ships it; a package elsewhere stays.
    assert arguments["--extra-py-files"] == ",".join(
        [
            f"s3://{BUCKET}/releases/{release}/glue_incremental.zip",
            f"s3://{BUCKET}/releases/{release}/teams_x.zip",
            "s3://own/y.zip",
        ]
    )
    assert arguments["--release"] == release
    # UpdateJob replaces the definition: everything else is sent back unchanged.
    assert arguments["--source"] == "s3://lake/raw/orders/"
    assert (definition["WorkerType"], definition["NumberOfWorkers"]) == ("G.1X", 3)
    assert (definition["Timeout"], definition["GlueVersion"]) == (45, "4.0")
    out = capsys.readouterr().out
    assert f"switched job {LOAD}: release {RELEASE} -> {release}" in out
    assert f'release = "{release}"  # job {LOAD}' in out


def test_rolling_back_is_switching_to_the_previous_release(env, tmp_path):
    first = deployed()
    releases.switch(LOAD, first, BUCKET)
    second = deployed(another_checkout(tmp_path))
    assert second != first
    moved = releases.switch(LOAD, second, BUCKET)
    assert moved.previous == first

    back = releases.switch(LOAD, first, BUCKET)

    assert (back.previous, back.release) == (second, first)
    assert job()["Command"]["ScriptLocation"].endswith(f"/{first}/incremental_load.py")
    assert job()["DefaultArguments"]["--release"] == first
    checks = deploy.verify([LOAD])
    assert [(c.ok, c.release) for c in checks] == [(True, first)]


def test_switching_to_a_release_not_deployed_is_one_line_and_changes_nothing(env, capsys):
    deployed()
    before = job()

    code = main(["deploy", "switch", "--bucket", BUCKET, "--job", LOAD, "--release", "0123abcd"])

    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: release '0123abcd' is not in s3://gi-release-scripts/releases/")
    assert err.count("\n") == 1
    assert job()["Command"] == before["Command"]


def test_a_job_mixing_two_releases_fails_verification(env, tmp_path):
    first = deployed()
    second = deployed(another_checkout(tmp_path))
    releases.switch(LOAD, second, BUCKET)
    arguments = job()["DefaultArguments"]
    arguments["--extra-py-files"] = releases.uri(BUCKET, first, "glue_incremental.zip")
    definition = job()
    aws_glue().update_job(
        JobName=LOAD,
        JobUpdate={
            "Role": definition["Role"],
            "Command": definition["Command"],
            "DefaultArguments": arguments,
        },
    )

    (check,) = deploy.verify([LOAD])

    assert not check.ok
    assert check.problems == (
        f"--extra-py-files s3://{BUCKET}/releases/{first}/glue_incremental.zip "
        f"is not release {second}'s library",
    )
