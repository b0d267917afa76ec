"""Every AWS call of an apply, evaluated against the IAM policies Terraform renders.

dev and prod (environments/aws with dev.tfvars and prod.tfvars) are applied into one
emulated account, side by side, with the provider's calls recorded from its debug log
(``TF_LOG_PROVIDER=debug``: service, operation, request parameters). Each call becomes
the IAM requests AWS authorizes it by (``tests/harness/iam.py``), evaluated offline by
@cloud-copilot/iam-simulate, the exact version ``tools/iam-eval/package-lock.json`` pins,
against the CI deploy role's identity policy (terraform/ci's plan) and the resource's own
policy (the key policies, bucket policy, topic and queue policies of the applied state).
A pull-request plan refreshes what an apply reads: the read calls are evaluated for the
pull-request plan role of the environment. ``deploy`` and ``deploy switch`` then run
against the applied environment with botocore's calls recorded, evaluated for the deploy
role likewise.

Least privilege is checked too: every statement of the deploy role must be needed by a
recorded call (without it, some call is refused), or name in ``JUSTIFIED`` the call it is for.

Both account layouts (docs/bootstrap.md) get these evaluations (the ``layout`` fixture): one
account for both, with terraform/ci's roles for both environments, and one account per
environment, with each account's roles planned from its committed
``example.<env>-account.tfvars`` and prod's recording moved to a second account id (every
ARN, policy and call), so no apply is repeated.

The emulators enforce none of this (LocalStack, moto): they only make the calls real.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from glue_incremental import aws
from glue_incremental.run import metrics
from glue_incremental.targets.parquet import publish, restore
from glue_incremental.watermarks import Watermarks
from glue_incremental_tools import cli, deploy, output_files, run_history, status, target_view

from tests.harness.iam import (
    EVALUATOR,
    EVALUATOR_PACKAGE,
    Account,
    Call,
    Principal,
    RecordedApply,
    Request,
    Verdict,
    apply_recorded,
    apply_requests,
    emulator_override,
    evaluate,
    evaluator_version,
    least_privilege_gaps,
    recording_boto3_calls,
    requests_after_apply,
    requests_for,
    resources,
    role_policies,
    without_statement,
)
from tests.harness.moto_shim import moto_with_shim
from tests.harness.terraform import TF, copy_tree, terraform_env, tf

pytestmark = [pytest.mark.terraform, pytest.mark.xdist_group("iam_evaluation")]

ROOT = EVALUATOR.parents[1]
# The evaluator and the version this test was written against (package-lock.json pins it).
EVALUATOR_VERSION = "0.1.173"
REGION = "eu-west-1"
ENVIRONMENTS = ("dev", "prod")
READ_PREFIXES = ("Get", "List", "Describe", "Head", "ValidateStateMachineDefinition")

# Statements of the CI roles no recorded call exercises here, each with the call it is for.
JUSTIFIED = {
    "ReadState": "the S3 backend reading <env>.backend.hcl's state (s3:GetObject); the applies here use a local backend",
    "ListState": "the S3 backend listing the workspaces under env:/ at init, plan and apply (s3:ListBucket); local backend here",
    "HoldStateLock": "the S3 backend's lock file (use_lockfile: s3:PutObject/GetObject/DeleteObject on <key>.tflock); local backend here",
    "WriteState": "the S3 backend writing the state after an apply (s3:PutObject); local backend here",
}

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)
if not (EVALUATOR / "node_modules" / EVALUATOR_PACKAGE).exists() or not shutil.which("node"):
    # CI installs it (make setup): there a missing evaluator is a broken setup, not a skip.
    if os.environ.get("CI"):
        pytest.fail("the IAM evaluator is not installed (make setup installs it)", pytrace=False)
    pytest.skip("the IAM evaluator is not installed; run scripts/setup.sh", allow_module_level=True)


@dataclass
class Recorded:
    account: str
    applies: dict[str, RecordedApply]
    ci_roles: dict[str, list[tuple[str, dict[str, Any]]]]
    deploys: dict[str, list[Any]]
    oncall: dict[str, tuple[list[Any], dict[str, int]]]  # the runbook's calls, what each did
    job_runs: dict[str, dict[str, list[Any]]]  # environment -> pipeline -> its run's recorded calls
    networks: dict[str, RecordedApply]  # modules/glue_network applied as each environment
    override: str  # routes a copied root to the emulators this module applied to

    def role(self, name: str) -> Principal:
        return Principal(f"arn:aws:iam::{self.account}:role/{name}", tuple(self.ci_roles[name]))

    def requests(self, environment: str) -> list[Request]:
        applied = self.applies[environment]
        return apply_requests(applied.calls, Account("aws", REGION, self.account), applied.state)

    def network_requests(self, environment: str) -> list[Request]:
        applied = self.networks[environment]
        return apply_requests(applied.calls, Account("aws", REGION, self.account), applied.state)

    def deploy_requests(self, environment: str) -> list[Request]:
        state = self.applies[environment].state
        return requests_after_apply(
            self.deploys[environment], Account("aws", REGION, self.account), state
        )

    def applied_role(self, environment: str, name: str) -> Principal:
        """A role the environment's apply created, with its inline policies as applied."""
        roles = role_policies(self.applies[environment].state)
        return Principal(f"arn:aws:iam::{self.account}:role/{name}", tuple(roles[name]))

    def oncall_requests(self, environment: str) -> list[Request]:
        """The on-call's calls; the lake's buckets are the platform team's, not this
        state's: their SSE-KMS key is the data key the Glue security configuration writes
        with, so each object read, written or copied there uses it through S3."""
        state = self.applies[environment].state
        calls, _ = self.oncall[environment]
        acct = Account("aws", REGION, self.account)
        requests_after_apply([], acct, state)  # the resource policies and aliases, as applied
        outputs = deploy.output_values(state["values"]["outputs"])
        for pipeline in outputs["pipelines"].values():
            bucket, _ = _s3_location(pipeline["target_path"])
            acct.bucket_keys[bucket] = acct.key_id(_data_key(state))
        calls = [*_state_reads(environment), *calls, *_iceberg_target_calls(state)]
        return [r for call in calls for r in requests_for(call, acct)]

    def job_run_requests(self, environment: str, pipeline: str) -> list[Request]:
        return job_run_requests(
            self.applies[environment].state,
            Account("aws", REGION, self.account),
            pipeline,
            self.job_runs[environment][pipeline],
        )

    def analyst_requests(self, environment: str) -> list[Request]:
        return athena_reader_requests(
            self.applies[environment].state, Account("aws", REGION, self.account)
        )


NETWORK_ROOT = """
provider "aws" {
  region = "%(region)s"
  # As environments/aws tags everything (providers.tf): the deploy role's EC2 grants
  # rest on the Environment tag.
  default_tags {
    tags = { Project = "glue-incremental", Environment = "%(environment)s", ManagedBy = "terraform" }
  }
}

module "network" {
  source            = "%(module)s"
  name              = "gi-%(environment)s-shop-db"
  vpc_id            = "%(vpc)s"
  subnet_id         = "%(subnet)s"
  availability_zone = "%(region)sa"
  route_table_ids   = ["%(route_table)s"]
  database          = { port = 5432, cidr_blocks = ["10.20.9.0/24"] }
}
"""


def _network_apply(
    environment: str, directory: Any, ec2_url: str, override: str, env: dict[str, str]
) -> RecordedApply:
    """modules/glue_network applied as ``environment`` (a JDBC pipeline's ``networks`` entry:
    the module incremental_pipeline instantiates per network) into a VPC the network team
    made, with the provider's calls recorded like an environment's apply."""
    ec2 = boto3.client("ec2", endpoint_url=ec2_url, region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.1.0/24", AvailabilityZone=f"{REGION}a")
    route_table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    module = EVALUATOR.parents[1] / "terraform" / "modules" / "glue_network"
    values = {"region": REGION, "environment": environment, "module": module, "vpc": vpc}
    values |= {"subnet": subnet["Subnet"]["SubnetId"], "route_table": route_table}
    (directory / "main.tf").write_text(NETWORK_ROOT % values)
    (directory / "override.tf").write_text(override)
    (directory / "network.tfvars").write_text("")
    return apply_recorded(directory, "network.tfvars", environment, env, TF)


@contextlib.contextmanager
def _endpoints(endpoints: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in endpoints}
    os.environ.update(endpoints)
    aws.reset_client_cache()
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        aws.reset_client_cache()


def _deploy_and_switch(state: dict[str, Any], endpoints: dict[str, str]) -> list[Any]:
    """``deploy`` to the applied environment's bucket and jobs, then ``deploy switch`` of one job."""
    bucket = next(r["values"]["bucket"] for r in resources(state) if r["type"] == "aws_s3_bucket")
    jobs = sorted(r["values"]["name"] for r in resources(state) if r["type"] == "aws_glue_job")
    with _endpoints(endpoints):
        with recording_boto3_calls("deploy") as calls:
            release = None
            try:
                result = deploy.deploy(None, bucket=bucket, jobs=jobs, log=lambda *_: None)
                release = result.manifest["release"] if result else None
            except deploy.DeployError as error:
                # The jobs of a first apply may name no release yet: verification fails
                # after every upload was made, and the calls are what is evaluated here.
                release = getattr(error, "release", None)
            if release is None:
                release = deploy.deployment_version(deploy.build_artifacts())
        # The break-glass switch, as CI's switch job runs it (origin "deploy switch").
        with (
            recording_boto3_calls("deploy switch") as switched,
            contextlib.suppress(deploy.DeployError),
        ):
            deploy.switch_release(None, jobs[0], release, bucket=bucket, log=lambda *_: None)
        return [*calls, *switched]


# The partition of the Parquet target in the on-call's recording; each run writes its own file.
PARTITION = "order_date=2024-05-01"


def _parquet(ids: list[int]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"order_id": ids}), sink)
    return sink.getvalue()


def _two_parquet_runs(target: str) -> dict[str, int]:
    """What two runs of a Parquet job leave in its target: each run's publish, the files it
    replaced retained (what ``watermarks rewind`` restores); run id -> its publish."""
    bucket, _ = _s3_location(target)
    s3 = aws.client("s3")
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    fs = output_files.open_store(target)
    kept = {}
    for run, ids in (("jr_1", [101]), ("jr_2", [101, 102])):
        staged = publish.join(
            publish.stage_data_uri(target, run), f"{PARTITION}/part-{run}.parquet"
        )
        fs.write_bytes(staged, _parquet(ids))
        done = publish.publish(fs, target, run, [PARTITION], retain=timedelta(days=7))
        kept[run] = int(done.retain_seq or 0)
    return kept


def _logged_run(job: dict[str, Any], run_id: str) -> None:
    """The run's log lines as Glue writes them (stream = run id), its run_summary included."""
    logs = aws.client("logs")
    prefix = job["default_arguments"]["--custom-logGroup-prefix"]
    group = f"{prefix}/output"
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName=run_id)
    summary = {"event": "run_summary", "rows_read": 2, "rows_written": 2}
    events = [json.dumps(summary), "orders: 2 rows written"]
    now = int(time.time() * 1000)  # CloudWatch Logs rejects events older than 14 days
    logs.put_log_events(
        logGroupName=group,
        logStreamName=run_id,
        logEvents=[{"timestamp": now + i, "message": m} for i, m in enumerate(events)],
    )


def _oncall_runbook(
    environment: str, state: dict[str, Any], endpoints: dict[str, str]
) -> tuple[list[Any], dict[str, int]]:
    """Every runbook command the on-call runs in an account, as the runbook runs them, on a
    Parquet pipeline with two committed runs (each publish retained) and a job run:
    ``status``; ``runs`` and ``logs`` (``run_history``); ``target``'s schema, count and
    sample, and a key lookup (``target_view.read_parquet``: what ``target --env`` runs once
    it has read the environment's outputs); ``watermarks show``; ``watermarks rewind``
    restoring the target's files. The recorded calls are botocore's; pyarrow's S3 file
    system (C++, not botocore) reads the files, its calls appended as documented
    (``_pyarrow_reads``). The environments have no Iceberg target: ``target`` through
    pyiceberg is not recorded here. ``pages`` is local only. Returns the calls and each
    command's outcome."""
    outputs = deploy.output_values(state["values"]["outputs"])
    table = outputs["watermarks_table_name"]
    orders = outputs["pipelines"]["orders"]
    target = orders["target_path"].rstrip("/")
    job, _ = _job_arguments(state, orders["job_name"])
    with _endpoints(endpoints):
        # What the jobs would have left: two commits with their publishes, and a run with
        # its log (not the on-call's calls).
        kept = _two_parquet_runs(target)
        store = Watermarks(table)
        for run in ("jr_1", "jr_2"):
            values = {"layout": {"target_path": target}, restore.STATE_KEY: kept[run]}
            store.add_watermark(
                store.create_watermark_item(orders["state_name"], run, updated_at=run, **values)
            )
        run_id = aws.client("glue").start_job_run(JobName=orders["job_name"])["JobRunId"]
        _logged_run(job, run_id)
        with recording_boto3_calls("on-call") as calls:
            status.environment_status(environment, outputs=outputs)
            runs = run_history.recent_runs(orders["job_name"])
            _, lines = run_history.run_log(orders["job_name"], None)
            log = list(lines)
            view = target_view.read_parquet(target, [], 5)
            key = target_view.parse_filters(["order_id=102"], [])
            found = target_view.read_parquet(target, key, 5)
            show = cli.main(["watermarks", "show", orders["state_name"], "--table", table])
            rewind = cli.main(
                [
                    "watermarks",
                    "rewind",
                    orders["state_name"],
                    "jr_1",
                    "--table",
                    table,
                    "--why",
                    "reload what jr_2 read",
                    "--who",
                    "on-call",
                ]
            )
        restored = target_view.read_parquet(target, [], 5)
    outcomes = {
        "runs": len(runs),
        "log lines": len(log),
        "rows": view.row_count,
        "key rows": found.matched or 0,
        "show": show,
        "rewind": rewind,
        "rows restored": restored.row_count,
    }
    return [*calls, *_pyarrow_reads(target)], outcomes


def _state_reads(environment: str) -> list[Call]:
    """What the on-call's ``terraform init`` and ``status --env``/``watermarks --env`` read
    before their own calls: the environment's outputs, by ``terraform output`` through the
    S3 backend of ``<env>.backend.hcl`` (the recording passes the outputs in; the applies
    here use a local backend). init and output each list the workspaces, a ListObjectsV2
    under the workspace key prefix ``env:/`` (the default; the backend files set none), then
    output reads the default workspace's state object (Terraform's S3 backend,
    ``Workspaces`` and ``StateMgr``; "State Storage",
    https://developer.hashicorp.com/terraform/language/backend/s3). No lock: output takes
    none, and the default workspace's state exists, so init writes nothing."""
    bucket, key = _backend(environment)
    origin = f"on-call terraform init / status --env {environment} (terraform output, documented)"
    listing = Call("S3", "ListObjectsV2", {"prefix": "env:/"}, url=f"/{bucket}", origin=origin)
    return [
        listing,
        listing,
        Call("S3", "GetObject", {"Bucket": bucket}, url=f"/{bucket}/{key}", origin=origin),
    ]


def _backend(environment: str) -> tuple[str, str]:
    """The state bucket and key ``<env>.backend.hcl`` names."""
    text = (ROOT / "terraform" / "environments" / "aws" / f"{environment}.backend.hcl").read_text()
    backend = dict(re.findall(r'^(\w+)\s*=\s*"([^"]+)"', text, flags=re.MULTILINE))
    assert "workspace_key_prefix" not in backend, "the on-call's listing grant assumes env:/"
    return backend["bucket"], backend["key"]


def _pyarrow_reads(target: str) -> list[Call]:
    """What ``target`` reads of a Parquet target through pyarrow's S3 file system, which
    sends its requests through the AWS SDK for C++, not botocore, so they cannot be
    recorded here: the listing is boto3's (``target_view.published_files``, recorded); a
    dataset built from those paths asks each file's size (HeadObject) and reads its footer
    and columns by ranged GetObject (Arrow's ``S3FileSystem``: ``GetFileInfo``, and
    ``ObjectInputFile``, apache/arrow cpp/src/arrow/filesystem/s3fs.cc); each read of an
    SSE-KMS object makes S3 decrypt with its key as the caller (kms:Decrypt through S3,
    added by the harness for the lake's bucket, see ``Recorded.oncall_requests``)."""
    bucket, prefix = _s3_location(target)
    url = f"/{bucket}/{prefix}/{PARTITION}/part-jr_2.parquet"  # what jr_2 published
    origin = "on-call target (pyarrow's S3 file system, documented)"
    return [
        Call("S3", "HeadObject", {"Bucket": bucket}, url=url, origin=origin),
        Call("S3", "GetObject", {"Bucket": bucket}, url=url, origin=origin),
    ]


def _job_arguments(state: dict[str, Any], job_name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The applied Glue job and every argument a run gets from its definition."""
    job = next(
        r["values"]
        for r in resources(state)
        if r["type"] == "aws_glue_job" and r["values"]["name"] == job_name
    )
    arguments = {**(job.get("default_arguments") or {})}
    arguments.update(job.get("non_overridable_arguments") or {})
    return job, arguments


def _job_runs(state: dict[str, Any], endpoints: dict[str, str]) -> dict[str, list[Any]]:
    """What one run of each job sends through botocore, recorded against the emulators: the
    library's watermark protocol (lease, upstream and own state, the commit under the lease,
    release) and its metrics (``run.metrics.publish``), as the job's entry point calls them."""
    outputs = deploy.output_values(state["values"]["outputs"])
    pipelines = outputs["pipelines"]
    runs = {}
    with _endpoints(endpoints):
        for name, pipeline in sorted(pipelines.items()):
            _, arguments = _job_arguments(state, pipeline["job_name"])
            store = Watermarks(outputs["watermarks_table_name"])
            own = pipeline["state_name"]
            with recording_boto3_calls(f"job {pipeline['job_name']}") as calls:
                lease = store.acquire_lease(own, "jr_iam")
                for upstream in pipeline["upstreams"]:
                    store.get_watermark(pipelines[upstream]["state_name"])
                item = store.create_watermark_item(own, "jr_iam", updated_at="2024-05-01")
                store.commit_many([item], lease=lease)
                lease.release()
                metrics.publish(
                    metrics.RunMetrics(pipeline["job_name"], 1, 1),
                    namespace=arguments.get("--metrics_namespace", metrics.NAMESPACE),
                )
            runs[name] = calls
    return runs


def _s3_location(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def _data_key(state: dict[str, Any]) -> str:
    """The id of the environment's data key (alias <prefix>-data), as applied."""
    return str(
        next(
            r["values"]["target_key_id"]
            for r in resources(state)
            if r["type"] == "aws_kms_alias" and r["values"]["name"].endswith("-data")
        )
    )


def job_run_requests(
    state: dict[str, Any], acct: Account, pipeline_name: str, recorded: list[Call]
) -> list[Request]:
    """One run of a pipeline's job, as its role: the recorded calls (DynamoDB, CloudWatch)
    and, written from the library's code paths and Glue's documentation because Spark's S3
    client (EMRFS/S3A, not botocore) cannot be recorded here, the rest: its script and
    library read from the scripts bucket; each source listed and read; each written prefix
    (target, temp dir) listed, read, written and cleaned; objects written SSE-KMS with the
    data key (the security configuration); its log streams; job bookmarks encrypted and
    decrypted with the data key (CSE-KMS, "Setting up encryption in AWS Glue",
    https://docs.aws.amazon.com/glue/latest/dg/set-up-encryption.html); its JDBC secret and
    connection; the catalog table a schema change updates. Not covered: the network
    interfaces Glue creates as the role in a connection's VPC, and Iceberg targets."""
    requests_after_apply([], acct, state)  # the resource policies and aliases, as applied
    pipeline = deploy.output_values(state["values"]["outputs"])["pipelines"][pipeline_name]
    job, arguments = _job_arguments(state, pipeline["job_name"])
    origin = f"job {job['name']} (documented)"
    via_s3 = {"kms:ViaService": f"s3.{acct.region}.amazonaws.com"}
    data_key = next(
        r["values"]["target_key_id"]
        for r in resources(state)
        if r["type"] == "aws_kms_alias" and r["values"]["name"].endswith("-data")
    )

    def s3(operation: str, uri: str, **params: Any) -> Call:
        bucket, key = _s3_location(uri)
        return Call("S3", operation, params, url=f"/{bucket}/{key}".rstrip("/"), origin=origin)

    calls = list(recorded)
    calls += [
        s3("GetObject", job["command"][0]["script_location"]),
        s3("GetObject", arguments["--extra-py-files"].split(",")[0]),
    ]
    keyed: list[Request] = []
    for uri in pipeline["read_s3_uris"]:
        bucket, prefix = _s3_location(uri)
        read = s3("GetObject", f"{uri.rstrip('/')}/part-0.parquet")
        calls += [s3("ListObjectsV2", f"s3://{bucket}", prefix=prefix), read]
        keyed.append(acct.key_request(read, "kms:Decrypt", data_key, via_s3, "SSE-KMS"))
    for uri in [*pipeline["write_s3_uris"], arguments["--TempDir"]]:
        bucket, prefix = _s3_location(uri)
        written = f"{uri.rstrip('/')}/part-0.parquet"
        put, get = s3("PutObject", written), s3("GetObject", written)
        calls += [s3("ListObjectsV2", f"s3://{bucket}", prefix=prefix), put, get]
        calls.append(s3("DeleteObject", written))
        keyed.append(acct.key_request(put, "kms:GenerateDataKey", data_key, via_s3, "SSE-KMS"))
        keyed.append(acct.key_request(get, "kms:Decrypt", data_key, via_s3, "SSE-KMS"))
    logs = Call("CloudWatch Logs", "PutLogEvents", {}, origin=origin)
    for group in ("output", "error"):
        arn = acct.arn("logs", f"log-group:{arguments['--custom-logGroup-prefix']}/{group}")
        # Both are authorized on the stream (Service Authorization Reference, CloudWatch Logs).
        for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
            keyed.append(Request(logs, action, f"{arn}:log-stream:jr_iam"))
    if job.get("security_configuration") and arguments["--job-bookmark-option"] != (
        "job-bookmark-disable"
    ):
        bookmark = Call("Glue", "(job bookmark)", {}, origin=origin)
        for action in ("kms:Encrypt", "kms:Decrypt"):
            keyed.append(acct.key_request(bookmark, action, data_key, None, "bookmark CSE-KMS"))
    if pipeline.get("secret_arn"):
        calls.append(
            Call(
                "Secrets Manager",
                "GetSecretValue",
                {"SecretId": pipeline["secret_arn"]},
                origin=origin,
            )
        )
    for connection in pipeline.get("connections") or []:
        calls.append(Call("Glue", "GetConnection", {"Name": connection}, origin=origin))
    if "--catalog_table" in arguments:
        database, table = arguments["--catalog_table"].split(".")
        for operation in ("GetTable", "UpdateTable"):
            params = {"DatabaseName": database, "Name": table}
            calls.append(Call("Glue", operation, params, origin=origin))
    return [r for call in calls for r in requests_for(call, acct)] + keyed


def athena_reader_requests(state: dict[str, Any], acct: Account) -> list[Request]:
    """What Athena authorizes as the analyst for a query of each target in the workgroup.

    Athena's calls cannot be recorded here (moto's Athena runs no query), so they are
    written from Athena's documentation: the workgroup's query actions; glue:GetDatabase,
    GetTable and GetPartitions on the catalog, database and table ("Fine-grained access to
    databases and tables in the AWS Glue Data Catalog",
    https://docs.aws.amazon.com/athena/latest/ug/fine-grained-access-to-glue-resources.html);
    s3:GetBucketLocation, ListBucket and GetObject on the data, and on the result location
    PutObject, GetObject and AbortMultipartUpload ("Access to Amazon S3",
    https://docs.aws.amazon.com/athena/latest/ug/s3-permissions.html); kms:Decrypt of the
    data's SSE-KMS key and the result key's GenerateDataKey/Decrypt, through S3
    ("Encryption at rest", https://docs.aws.amazon.com/athena/latest/ug/encryption.html).
    """
    requests_after_apply([], acct, state)  # the resource policies and aliases, as applied
    outputs = deploy.output_values(state["values"]["outputs"])
    workgroup = outputs["athena_workgroup_name"]
    results = outputs["scripts_bucket_name"]
    origin = "Athena for the analyst (documented)"
    via_s3 = {"kms:ViaService": f"s3.{acct.region}.amazonaws.com"}
    data_key = next(
        r["values"]["target_key_id"]
        for r in resources(state)
        if r["type"] == "aws_kms_alias" and r["values"]["name"].endswith("-data")
    )
    calls = [
        Call("Athena", op, {"WorkGroup": workgroup}, origin=origin)
        for op in (
            "GetWorkGroup",
            "StartQueryExecution",
            "GetQueryExecution",
            "GetQueryResults",
            "StopQueryExecution",
        )
    ]
    requests: list[Request] = []
    for pipeline in outputs["pipelines"].values():
        database, table = pipeline["table"].split(".")
        bucket, _, prefix = pipeline["target_path"].removeprefix("s3://").partition("/")
        calls += [
            Call("Glue", "GetDatabase", {"Name": database}, origin=origin),
            Call("Glue", "GetTable", {"DatabaseName": database, "Name": table}, origin=origin),
            Call(
                "Glue",
                "GetPartitions",
                {"DatabaseName": database, "TableName": table},
                origin=origin,
            ),
            Call("S3", "GetBucketLocation", {}, url=f"/{bucket}", origin=origin),
            Call("S3", "ListObjectsV2", {"prefix": prefix}, url=f"/{bucket}", origin=origin),
        ]
        read = Call("S3", "GetObject", {}, url=f"/{bucket}/{prefix}part-0.parquet", origin=origin)
        calls.append(read)
        # The lake's buckets are the platform team's, not this state's: their SSE-KMS key is
        # the data key the Glue security configuration writes with.
        requests.append(acct.key_request(read, "kms:Decrypt", data_key, via_s3, "SSE-KMS"))
    calls += [
        Call("S3", "GetBucketLocation", {}, url=f"/{results}", origin=origin),
        Call("S3", "ListObjectsV2", {"prefix": "athena/"}, url=f"/{results}", origin=origin),
        Call("S3", "PutObject", {}, url=f"/{results}/athena/q1.csv", origin=origin),
        Call("S3", "GetObject", {}, url=f"/{results}/athena/q1.csv", origin=origin),
        Call("S3", "AbortMultipartUpload", {}, url=f"/{results}/athena/q2.csv", origin=origin),
    ]
    return [r for call in calls for r in requests_for(call, acct)] + requests


# dev's apply gets one pipeline with an Iceberg target beside the committed ones (the
# environments have none), so the on-call's Iceberg grant is applied and evaluated.
ICEBERG_PIPELINE = """pipelines = {
  events = {
    kind             = "load"
    schedule         = "cron(0 6 * * ? *)"
    source           = { uri = "s3://example-gi-dev-lake/raw/events/", format = "parquet" }
    watermark_column = "updated_at"
    primary_key      = ["event_id"]
    target           = { format = "iceberg", path = "s3://example-gi-dev-lake/curated/events/" }
  }

"""


def _with_iceberg_pipeline(tfvars: Any) -> None:
    text = tfvars.read_text()
    assert text.count("pipelines = {\n") == 1, "dev.tfvars' pipelines map moved"
    tfvars.write_text(text.replace("pipelines = {\n", ICEBERG_PIPELINE, 1))


def _s3_call(bucket: str, operation: str, key: str, origin: str, **params: Any) -> Call:
    url = f"/{bucket}/{key}" if key else f"/{bucket}"
    return Call("S3", operation, params, url=url, origin=origin)


def _iceberg_target_calls(state: dict[str, Any]) -> list[Call]:
    """What ``target`` and ``watermarks rewind`` send for each Iceberg target, written from
    the code because pyiceberg's file reads and writes go through pyarrow (C++, not
    botocore): ``iceberg_catalog.load_table`` is Glue GetTable, then the table's metadata,
    manifest list, manifest and data files read (HeadObject and GetObject); the rollback
    (``rollback_to``: pyiceberg's ``GlueCatalog.commit_table``) reads the Glue table again,
    asks GetDatabase whether the database is an S3 Tables one, checks that the new metadata
    file does not exist (HeadObject, then a listing under it), writes it, and UpdateTable
    with the VersionId it read. The table lives under the warehouse (the target path) at
    ``<db>.db/<table>``, as Iceberg's Glue catalog places it."""
    outputs = deploy.output_values(state["values"]["outputs"])
    calls = []
    for pipeline in outputs["pipelines"].values():
        _, arguments = _job_arguments(state, pipeline["job_name"])
        if arguments.get("--target_format") != "iceberg":
            continue
        database, table = pipeline["table"].split(".")
        bucket, prefix = _s3_location(pipeline["target_path"])
        location = f"{prefix}{database}.db/{table}"
        glue = {"DatabaseName": database, "Name": table}
        s3 = functools.partial(_s3_call, bucket)

        read = f"on-call target of Iceberg table {database}.{table} (pyiceberg, documented)"
        files = (
            "metadata/00001-a.metadata.json",  # the metadata file Glue's table points to
            "metadata/snap-1-a.avro",  # the current snapshot's manifest list
            "metadata/a-m0.avro",  # its manifest
            "data/part-0.parquet",  # a data file it lists
        )
        calls.append(Call("Glue", "GetTable", glue, origin=read))
        for name in files:
            calls += [s3("HeadObject", f"{location}/{name}", read)]
            calls += [s3("GetObject", f"{location}/{name}", read)]
        rewind = (
            f"on-call watermarks rewind of Iceberg table {database}.{table} (pyiceberg, documented)"
        )
        written = f"{location}/metadata/00002-b.metadata.json"
        calls += [
            Call("Glue", "GetTable", glue, origin=rewind),
            s3("GetObject", f"{location}/metadata/00001-a.metadata.json", rewind),
            Call("Glue", "GetTable", glue, origin=rewind),
            Call("Glue", "GetDatabase", {"Name": database}, origin=rewind),
            s3("HeadObject", written, rewind),
            s3("ListObjectsV2", "", rewind, prefix=f"{written}/"),
            s3("PutObject", written, rewind),
            Call(
                "Glue",
                "UpdateTable",
                {"DatabaseName": database, "TableInput": {"Name": table}, "VersionId": "1"},
                origin=rewind,
            ),
        ]
    return calls


@pytest.fixture(scope="module")
def recorded(endpoint, tmp_path_factory) -> Iterator[Recorded]:
    endpoint.reset()
    account = boto3.client(
        "sts", endpoint_url=endpoint.url, region_name=REGION
    ).get_caller_identity()["Account"]
    with moto_with_shim(account) as moto:
        override = emulator_override(endpoint.url, moto)
        env = {**terraform_env(), "AWS_REGION": REGION}
        ci = copy_tree(tmp_path_factory.mktemp("ci")) / "ci"
        (ci / "override.tf").write_text(override)
        trees = {}
        for environment in ENVIRONMENTS:
            trees[environment] = (
                copy_tree(tmp_path_factory.mktemp(environment)) / "environments" / "aws"
            )
            (trees[environment] / "override.tf").write_text(override)
        _with_iceberg_pipeline(trees["dev"] / "dev.tfvars")
        # Both environments in one account at once: their names must not collide.
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {
                e: pool.submit(apply_recorded, d, f"{e}.tfvars", e, env, TF)
                for e, d in trees.items()
            }
            tf(ci, "init", "-no-color")
            tf(ci, "plan", "-no-color", "-var-file=example.tfvars", "-out=ci.tfplan")
            plan = json.loads(tf(ci, "show", "-json", "ci.tfplan").stdout)
            applies = {e: f.result() for e, f in futures.items()}
        with ThreadPoolExecutor(max_workers=2) as pool:
            network_futures = {
                e: pool.submit(
                    _network_apply,
                    e,
                    tmp_path_factory.mktemp(f"{e}-network"),
                    moto,
                    override,
                    env,
                )
                for e in ENVIRONMENTS
            }
            networks = {e: f.result() for e, f in network_futures.items()}
        endpoints = {
            **endpoint.environment(),
            "AWS_ENDPOINT_URL_GLUE": moto,
            "AWS_ENDPOINT_URL_DYNAMODB": moto,
            "AWS_REGION": REGION,
        }
        deploys = {e: _deploy_and_switch(applies[e].state, endpoints) for e in ENVIRONMENTS}
        oncall = {e: _oncall_runbook(e, applies[e].state, endpoints) for e in ENVIRONMENTS}
        runs = {e: _job_runs(applies[e].state, endpoints) for e in ENVIRONMENTS}
        yield Recorded(
            account, applies, role_policies(plan), deploys, oncall, runs, networks, override
        )


# The second account of the one-account-per-environment layout: prod's recording is moved
# there (every ARN, policy and call), so no apply is repeated.
PROD_ACCOUNT = "222233334444"
ONE_ACCOUNT, OWN_ACCOUNTS = "one account for both", "one account per environment"


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` with account ``old`` made ``new`` in every string (ARNs, policies, calls)."""
    if old == new:
        return value
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {_moved(k, old, new): _moved(v, old, new) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_moved(v, old, new) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _moved(getattr(value, f.name), old, new) for f in dataclasses.fields(value)
        }
        return dataclasses.replace(value, **changes)
    return value


@dataclass
class Layout:
    """Where each environment's recorded calls and CI roles live: the recording as made (one
    account, terraform/ci with both environments), or each environment in an account of its
    own with terraform/ci applied there with that environment alone (prod's recording moved
    to ``PROD_ACCOUNT``)."""

    name: str
    recorded: Recorded
    accounts: dict[str, str]  # environment -> its account
    roles: dict[
        str, dict[str, list[tuple[str, dict[str, Any]]]]
    ]  # environment -> its account's CI roles

    def _here(self, environment: str, value: Any) -> Any:
        return _moved(value, self.recorded.account, self.accounts[environment])

    def _account(self, environment: str) -> Account:
        return Account("aws", REGION, self.accounts[environment])

    def role(self, environment: str, kind: str) -> Principal:
        name = f"gi-ci-{environment}-{kind}"
        arn = f"arn:aws:iam::{self.accounts[environment]}:role/{name}"
        return Principal(arn, tuple(self.roles[environment][name]))

    def requests(self, environment: str) -> list[Request]:
        applied = self.recorded.applies[environment]
        return apply_requests(
            self._here(environment, applied.calls),
            self._account(environment),
            self._here(environment, applied.state),
        )

    def network_requests(self, environment: str) -> list[Request]:
        applied = self.recorded.networks[environment]
        return apply_requests(
            self._here(environment, applied.calls),
            self._account(environment),
            self._here(environment, applied.state),
        )

    def deploy_requests(self, environment: str) -> list[Request]:
        return requests_after_apply(
            self._here(environment, self.recorded.deploys[environment]),
            self._account(environment),
            self._here(environment, self.recorded.applies[environment].state),
        )

    def evaluate(self, environment: str, role: Principal, requests: list[Request]) -> list[Verdict]:
        return evaluate(role, requests, self.accounts[environment])


@pytest.fixture(scope="module")
def own_account_roles(recorded, tmp_path_factory) -> dict[str, dict[str, list[Any]]]:
    """terraform/ci planned per environment alone, with the committed
    ``example.<env>-account.tfvars`` docs/bootstrap.md shows: each account's CI roles."""
    ci = copy_tree(tmp_path_factory.mktemp("ci-own-accounts")) / "ci"
    (ci / "override.tf").write_text(recorded.override)
    tf(ci, "init", "-no-color")
    roles = {}
    for environment in ENVIRONMENTS:
        plan = f"{environment}.tfplan"
        tf(
            ci,
            "plan",
            "-no-color",
            f"-var-file=example.{environment}-account.tfvars",
            f"-out={plan}",
        )
        roles[environment] = role_policies(json.loads(tf(ci, "show", "-json", plan).stdout))
    return roles


@pytest.fixture(params=[ONE_ACCOUNT, OWN_ACCOUNTS])
def layout(request, recorded) -> Layout:
    if request.param == ONE_ACCOUNT:
        accounts = dict.fromkeys(ENVIRONMENTS, recorded.account)
        return Layout(
            ONE_ACCOUNT, recorded, accounts, dict.fromkeys(ENVIRONMENTS, recorded.ci_roles)
        )
    roles = request.getfixturevalue("own_account_roles")
    accounts = {"dev": recorded.account, "prod": PROD_ACCOUNT}
    moved = {e: _moved(roles[e], recorded.account, accounts[e]) for e in ENVIRONMENTS}
    return Layout(OWN_ACCOUNTS, recorded, accounts, moved)


def _refused(verdicts: list[Verdict]) -> list[str]:
    seen: dict[str, None] = {}
    for v in verdicts:
        if v.result != "Allowed":
            seen[f"{v.result}: {v.request.describe()} [{v.reason}]"] = None
    return list(seen)


def test_the_evaluator_is_the_pinned_iam_simulate():
    lock = json.loads((EVALUATOR / "package-lock.json").read_text())
    pinned = lock["packages"][f"node_modules/{EVALUATOR_PACKAGE}"]
    assert pinned["version"] == EVALUATOR_VERSION == evaluator_version()
    assert pinned["integrity"].startswith("sha512-")


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_an_apply_is_allowed_for_the_deploy_role(layout, environment):
    requests = layout.requests(environment)
    assert len(requests) > 300, "the apply recorded too few calls to be the whole apply"
    verdicts = layout.evaluate(environment, layout.role(environment, "deploy"), requests)
    refused = _refused(verdicts)
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_deploy_and_switch_is_allowed_for_the_publish_role(layout, environment):
    requests = layout.deploy_requests(environment)
    operations = {r.call.operation for r in requests}
    assert {"PutObject", "GetJob", "UpdateJob"} <= operations, sorted(operations)
    verdicts = layout.evaluate(environment, layout.role(environment, "publish"), requests)
    refused = _refused(verdicts)
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_a_break_glass_switch_is_allowed_for_the_publish_role_ci_runs_it_as(layout, environment):
    """``deploy switch`` (platform.yml's switch-<env> job, docs/runbook.md's rollback), its
    recorded calls alone: the release's manifest read (scripts key through S3), GetJob, the
    one UpdateJob and the job role it passes, then the verification's reads."""
    requests = [r for r in layout.deploy_requests(environment) if r.call.origin == "deploy switch"]
    actions = {r.action for r in requests}
    assert {"glue:GetJob", "glue:UpdateJob", "iam:PassRole", "s3:GetObject"} <= actions, actions
    verdicts = layout.evaluate(environment, layout.role(environment, "publish"), requests)
    refused = _refused(verdicts)
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_read_of_a_plan_is_allowed_for_the_pull_request_plan_role(layout, environment):
    reads = [
        r
        for r in layout.requests(environment) + layout.network_requests(environment)
        if r.call.operation.startswith(READ_PREFIXES) and not r.note
    ]
    role = layout.role(environment, "pull-request-plan")
    refused = _refused(layout.evaluate(environment, role, reads))
    assert not refused, f"{len(refused)} reads refused:\n" + "\n".join(refused)


def test_the_pull_request_plan_role_cannot_read_a_connections_password(recorded):
    connection = Request(
        Call("Glue", "GetConnection", {"Name": "gi-dev-shop-db"}, origin="a pull request's code"),
        "glue:GetConnection",
        f"arn:aws:glue:{REGION}:{recorded.account}:connection/gi-dev-shop-db",
    )
    (verdict,) = evaluate(
        recorded.role("gi-ci-dev-pull-request-plan"), [connection], recorded.account
    )
    assert verdict.result != "Allowed", verdict.reason


def _deploy_role_verdicts(recorded: Recorded, environment: str, role: Principal) -> list[Verdict]:
    requests = recorded.requests(environment) + recorded.network_requests(environment)
    return evaluate(role, requests, recorded.account)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize("kind", ["deploy", "publish"])
def test_every_statement_of_the_apply_and_publish_roles_is_needed_by_a_recorded_call(
    layout, environment, kind
):
    """The deploy role by the applies (the environment's and a JDBC network's), the publish
    role by ``deploy`` and ``deploy switch``."""
    role = layout.role(environment, kind)
    if kind == "deploy":
        requests = layout.requests(environment) + layout.network_requests(environment)
    else:
        requests = layout.deploy_requests(environment)
    verdicts = layout.evaluate(environment, role, requests)
    gaps = least_privilege_gaps(role, verdicts, layout.accounts[environment], JUSTIFIED)
    assert not gaps, (
        "statements no recorded call needs (narrow them, or justify them in JUSTIFIED):\n"
        + "\n".join(gaps)
    )


def test_removing_a_needed_statement_refuses_the_calls_it_allowed(recorded):
    role = recorded.role("gi-ci-dev-deploy")
    (name, document), *_ = role.policies
    index = next(
        i for i, st in enumerate(document["Statement"]) if st.get("Sid") == "CreateEnvironmentKeys"
    )
    verdicts = _deploy_role_verdicts(recorded, "dev", without_statement(role, f"{name}#{index}"))
    refused = _refused(verdicts)
    assert any("kms:CreateKey" in line for line in refused), refused


def test_a_broad_statement_added_beside_the_exact_ones_is_a_least_privilege_gap(recorded):
    role = recorded.role("gi-ci-dev-deploy")
    (name, document), *rest = role.policies
    broad = {"Sid": "AddedBroadS3", "Effect": "Allow", "Action": "s3:*", "Resource": "*"}
    widened = Principal(
        role.arn, ((name, {**document, "Statement": [*document["Statement"], broad]}), *rest)
    )
    verdicts = _deploy_role_verdicts(recorded, "dev", widened)
    gaps = least_privilege_gaps(widened, verdicts, recorded.account, JUSTIFIED)
    assert [g for g in gaps if g.startswith("AddedBroadS3")], gaps


@pytest.mark.parametrize(
    ("if_none_match", "expected"), [(None, "ExplicitlyDenied"), ("*", "Allowed")]
)
def test_a_release_object_is_written_only_with_if_none_match(recorded, if_none_match, expected):
    """The bucket's own policy, as applied: a release write must let S3 refuse an existing key."""
    state = recorded.applies["dev"].state
    bucket = next(r["values"]["bucket"] for r in resources(state) if r["type"] == "aws_s3_bucket")
    params = {"Bucket": bucket, "Key": "releases/r1/orders_load.py"}
    if if_none_match:
        params["IfNoneMatch"] = if_none_match
    call = Call(
        "S3", "PutObject", params, url=f"/{bucket}/releases/r1/orders_load.py", origin="deploy"
    )
    requests = requests_after_apply([call], Account("aws", REGION, recorded.account), state)
    verdicts = evaluate(recorded.role("gi-ci-dev-publish"), requests, recorded.account)
    assert verdicts[0].request.action == "s3:PutObject"
    assert verdicts[0].result == expected, verdicts[0].reason


# What keeps releases/ immutable: the bucket policy (its If-None-Match and delete denies),
# the lifecycle (what expires), versioning (a suspended bucket overwrites in place), Object
# Lock. The S3 operations, as the harness maps them to IAM actions.
PROTECTING_CONFIGURATION = (
    "PutBucketPolicy",
    "DeleteBucketPolicy",
    "PutBucketLifecycleConfiguration",
    "DeleteBucketLifecycle",
    "PutBucketVersioning",
    "PutObjectLockConfiguration",
)


def _scripts_bucket(state: dict[str, Any]) -> str:
    return str(
        next(r["values"]["bucket"] for r in resources(state) if r["type"] == "aws_s3_bucket")
    )


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_the_publish_role_cannot_change_what_keeps_releases_immutable(recorded, environment):
    """The role that writes releases, with the applied bucket policy: every write of the
    bucket's protecting configuration is refused, and so is overwriting an existing release
    object (a PutObject without If-None-Match), while its own publishing write is allowed.
    The deploy role, which may write that configuration, cannot write a release at all."""
    state = recorded.applies[environment].state
    bucket = _scripts_bucket(state)
    acct = Account("aws", REGION, recorded.account)
    configuration = [
        Call("S3", op, {"Bucket": bucket}, url=f"/{bucket}", origin="a publish step")
        for op in PROTECTING_CONFIGURATION
    ]
    key = f"releases/{'0' * 16}/incremental_load.py"
    overwrite = Call(
        "S3", "PutObject", {"Bucket": bucket}, url=f"/{bucket}/{key}", origin="a publish step"
    )
    publish = Call(
        "S3",
        "PutObject",
        {"Bucket": bucket, "IfNoneMatch": "*"},
        url=f"/{bucket}/{key}",
        origin="deploy",
    )
    requests = requests_after_apply([*configuration, overwrite, publish], acct, state)
    s3 = [r for r in requests if r.action.startswith("s3:")]
    assert {r.action for r in s3[: len(configuration)]} == {
        "s3:PutBucketPolicy",
        "s3:DeleteBucketPolicy",
        "s3:PutLifecycleConfiguration",
        "s3:PutBucketVersioning",
        "s3:PutBucketObjectLockConfiguration",
    }
    publisher = recorded.role(f"gi-ci-{environment}-publish")
    verdicts = [v.result for v in evaluate(publisher, s3, recorded.account)]
    assert verdicts[: len(configuration)] == ["ImplicitlyDenied"] * len(configuration)
    assert verdicts[len(configuration) :] == ["ExplicitlyDenied", "Allowed"]
    applier = recorded.role(f"gi-ci-{environment}-deploy")
    (release_write,) = evaluate(applier, s3[-1:], recorded.account)
    assert release_write.result != "Allowed", release_write.reason


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_an_account_wide_kms_star_identity_cannot_decrypt_or_grant_with_an_environment_key(
    recorded, environment
):
    """Every customer managed key of the apply (modules/kms_key), with its applied key
    policy, for a role of the account whose identity policy allows kms:* on *: the account
    statement administers the key and names no use, and no CreateGrant unless an AWS
    service makes the grant for its resource (kms:GrantIsForAWSResource)."""
    state = recorded.applies[environment].state
    acct = Account("aws", REGION, recorded.account)
    keys = sorted(
        r["values"]["target_key_id"]
        for r in resources(state)
        if r["type"] == "aws_kms_alias" and "-oncall" not in r["values"]["name"]
    )
    assert len(keys) >= 3, keys
    requests_after_apply([], acct, state)
    origin = "an administrator's kms:* role"
    requests = [
        acct.key_request(Call("KMS", op, {"KeyId": key}, origin=origin), f"kms:{op}", key)
        for key in keys
        for op in ("Decrypt", "GenerateDataKey", "CreateGrant", "ReEncryptFrom")
    ]
    assert all(r.resource_policy for r in requests)
    admin = Principal(
        f"arn:aws:iam::{recorded.account}:role/platform-admin",
        (
            (
                "admin",
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}],
                },
            ),
        ),
    )
    allowed = [
        v.request.describe()
        for v in evaluate(admin, requests, recorded.account)
        if v.result == "Allowed"
    ]
    assert not allowed, "\n".join(allowed)
    # What administering is for still works, and a service's grant for its resource too.
    administer = [
        acct.key_request(Call("KMS", op, {"KeyId": keys[0]}, origin=origin), f"kms:{op}", keys[0])
        for op in ("DescribeKey", "PutKeyPolicy", "ScheduleKeyDeletion")
    ]
    service_grant = acct.key_request(
        Call("DynamoDB", "CreateTable", {}, origin="DynamoDB for the table"),
        "kms:CreateGrant",
        keys[0],
        {"kms:GrantIsForAWSResource": "true"},
    )
    verdicts = evaluate(admin, [*administer, service_grant], recorded.account)
    assert {v.result for v in verdicts} == {"Allowed"}, [v.reason for v in verdicts]


def test_the_pull_request_plan_role_lists_and_reads_only_its_environments_scripts_bucket(
    recorded,
):
    """A plan refreshes the scripts bucket alone: s3:ListBucket or a bucket's policy on any
    other bucket (prod's scripts bucket, the lake's) is refused to a role running
    pull-request code; its own bucket stays readable."""
    dev, prod = (_scripts_bucket(recorded.applies[e].state) for e in ENVIRONMENTS)
    acct = Account("aws", REGION, recorded.account)
    calls = [
        Call("S3", op, {}, url=f"/{bucket}", origin="a pull request's code")
        for bucket in (prod, "example-lake", dev)
        for op in ("ListObjectsV2", "GetBucketPolicy")
    ]
    requests = [r for call in calls for r in requests_for(call, acct)]
    every_bucket = Call("S3", "ListBuckets", {}, origin="a pull request's code")
    requests.append(Request(every_bucket, "s3:ListAllMyBuckets", "*"))
    role = recorded.role("gi-ci-dev-pull-request-plan")
    verdicts = [v.result for v in evaluate(role, requests, recorded.account)]
    assert verdicts == ["ImplicitlyDenied"] * 4 + ["Allowed"] * 2 + ["ImplicitlyDenied"]


def test_an_account_of_its_own_gets_exactly_its_environments_ci_roles(own_account_roles):
    """terraform/ci with one environment alone (docs/bootstrap.md's per-account tfvars)
    creates that environment's pull-request plan, plan and deploy roles, nothing of the
    other's."""
    for environment in ENVIRONMENTS:
        kinds = ("pull-request-plan", "plan", "deploy", "publish")
        assert set(own_account_roles[environment]) == {f"gi-ci-{environment}-{k}" for k in kinds}


def test_an_accounts_deploy_role_is_allowed_nothing_in_the_other_account(layout):
    """One account per environment: every write of prod's apply and deploy, made in prod's
    account, is refused to dev's deploy role from dev's account (the account boundary: no
    key, bucket, topic or queue policy names dev's account)."""
    if layout.name == ONE_ACCOUNT:
        pytest.skip(
            "one account: test_one_environments_deploy_role_cannot_change_the_others_resources"
        )
    dev = layout.accounts["dev"]
    writes = [
        dataclasses.replace(
            r, context={**r.context, "aws:PrincipalAccount": dev, "kms:CallerAccount": dev}
        )
        for r in layout.requests("prod") + layout.deploy_requests("prod")
        if not r.action.split(":", 1)[1].startswith(("Get", "Describe", "List", "Head"))
    ]
    assert {r.action for r in writes} >= {"dynamodb:CreateTable", "s3:PutObject", "kms:CreateKey"}
    verdicts = layout.evaluate("prod", layout.role("dev", "deploy"), writes)
    verdicts += layout.evaluate("prod", layout.role("dev", "publish"), writes)
    allowed = [v.request.describe() for v in verdicts if v.result == "Allowed"]
    assert not allowed, f"{len(allowed)} of prod's writes allowed to dev:\n" + "\n".join(allowed)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_the_oncall_runbook_is_allowed_for_the_oncall_role(recorded, environment):
    """status (its read of the environment's Terraform state included), runs, logs, target
    (schema, count, sample, key lookup), watermarks show and
    watermarks rewind restoring a Parquet target's files, recorded against the emulators
    (pyarrow's reads documented), for the environment's on-call role: identity policy, the
    watermarks table's, data and scripts keys' policies and the scripts bucket's policy."""
    _, outcomes = recorded.oncall[environment]
    assert outcomes == {
        "runs": 1,
        "log lines": 2,
        "rows": 2,
        "key rows": 1,
        "show": 0,
        "rewind": 0,
        "rows restored": 1,
    }
    requests = recorded.oncall_requests(environment)
    actions = {r.action for r in requests}
    state = [r for r in requests if "example-terraform-state" in r.resource]
    assert {r.action for r in state} == {"s3:ListBucket", "s3:GetObject"}, state
    assert {
        "glue:GetJobRuns",
        "glue:GetJob",
        "cloudwatch:DescribeAlarms",
        "logs:FilterLogEvents",
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "s3:ListBucket",
        "s3:GetObject",
        "s3:PutObject",
        "s3:DeleteObject",
        "kms:Decrypt",
        "kms:GenerateDataKey",
    } <= actions, sorted(actions)
    copies = [r for r in requests if r.call.operation == "CopyObject"]
    assert {r.action for r in copies} == {
        "s3:GetObject",
        "s3:PutObject",
        "kms:Decrypt",
        "kms:GenerateDataKey",
    }
    role = recorded.applied_role(environment, f"glue-gi-{environment}--oncall")
    refused = _refused(evaluate(role, requests, recorded.account))
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


def test_target_and_rewind_of_an_iceberg_target_are_allowed_for_the_oncall_role(recorded):
    """dev's Iceberg target (the pipeline the recording adds): reading it and rolling it
    back (``_iceberg_target_calls``) as dev's on-call, with the data key's policy; the
    on-call may update no other catalog table (a Parquet target's, an Iceberg side table)."""
    requests = [r for r in recorded.oncall_requests("dev") if "Iceberg table" in r.call.origin]
    actions = {r.action for r in requests}
    assert {"glue:GetTable", "glue:GetDatabase", "glue:UpdateTable"} <= actions, actions
    assert {"s3:GetObject", "s3:PutObject", "kms:Decrypt", "kms:GenerateDataKey"} <= actions
    role = recorded.applied_role("dev", "glue-gi-dev--oncall")
    refused = _refused(evaluate(role, requests, recorded.account))
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)
    (update,) = [r for r in requests if r.action == "glue:UpdateTable" and "table/" in r.resource]
    others = [
        dataclasses.replace(update, resource=update.resource.replace("/events", name))
        for name in ("/orders", "/events__tombstone", "/events__delivery")
    ]
    assert {v.result for v in evaluate(role, others, recorded.account)} == {"ImplicitlyDenied"}


def test_the_oncall_writes_only_new_metadata_files_of_an_iceberg_target(recorded):
    """A rollback writes one metadata file and deletes nothing: deleting or overwriting a
    data file of dev's Iceberg target, or writing any other object under it, is refused,
    while a Parquet target's restore keeps its Put and Delete."""
    role = recorded.applied_role("dev", "glue-gi-dev--oncall")
    requests = recorded.oncall_requests("dev")
    (commit,) = [
        r for r in requests if r.action == "s3:PutObject" and "Iceberg table" in r.call.origin
    ]
    assert commit.resource.endswith(".metadata.json"), commit.resource
    table = commit.resource.split("/metadata/", 1)[0]
    forbidden = [
        dataclasses.replace(commit, action=action, resource=f"{table}/{key}")
        for action, key in (
            ("s3:DeleteObject", "data/part-0.parquet"),
            ("s3:PutObject", "data/part-0.parquet"),
            ("s3:DeleteObject", "metadata/00001-a.metadata.json"),
            ("s3:PutObject", "metadata/snap-2-b.avro"),
        )
    ]
    results = [v.result for v in evaluate(role, forbidden, recorded.account)]
    assert "Allowed" not in results, list(
        zip([f.describe() for f in forbidden], results, strict=True)
    )
    state = recorded.applies["dev"].state
    parquet = []
    for pipeline in deploy.output_values(state["values"]["outputs"])["pipelines"].values():
        _, arguments = _job_arguments(state, pipeline["job_name"])
        if arguments.get("--target_format") == "iceberg":
            continue
        bucket, prefix = _s3_location(pipeline["target_path"])
        parquet += [
            dataclasses.replace(
                commit, action=action, resource=f"arn:aws:s3:::{bucket}/{prefix}p.parquet"
            )
            for action in ("s3:PutObject", "s3:DeleteObject")
        ]
    assert parquet, "dev has no Parquet target"
    assert {v.result for v in evaluate(role, parquet, recorded.account)} == {"Allowed"}


def test_the_oncall_lists_only_the_workspace_prefix_and_reads_only_its_environments_state(
    recorded,
):
    """``terraform init``/``output`` as dev's on-call: the workspace listing (``env:/``) and
    dev's state object are allowed; listing the whole state bucket or under another prefix,
    and prod's state, are refused."""
    bucket, key = _backend("dev")
    prod_bucket, prod_key = _backend("prod")
    origin = "the on-call's terraform"
    calls = [
        Call("S3", "ListObjectsV2", {"prefix": "env:/"}, url=f"/{bucket}", origin=origin),
        Call("S3", "GetObject", {}, url=f"/{bucket}/{key}", origin=origin),
        Call("S3", "ListObjectsV2", {"prefix": ""}, url=f"/{bucket}", origin=origin),
        Call(
            "S3", "ListObjectsV2", {"prefix": "glue-incremental/"}, url=f"/{bucket}", origin=origin
        ),
        Call("S3", "ListObjectsV2", {"prefix": "env:/"}, url=f"/{prod_bucket}", origin=origin),
        Call("S3", "GetObject", {}, url=f"/{prod_bucket}/{prod_key}", origin=origin),
    ]
    requests = [
        r for call in calls for r in requests_for(call, Account("aws", REGION, recorded.account))
    ]
    role = recorded.applied_role("dev", "glue-gi-dev--oncall")
    verdicts = [v.result for v in evaluate(role, requests, recorded.account)]
    assert verdicts == ["Allowed"] * 2 + ["ImplicitlyDenied"] * 4, verdicts


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_athena_makes_for_an_analyst_is_allowed_for_the_analyst_role(
    recorded, environment
):
    """A query of each target in the workgroup (Athena's documented calls) for the analyst
    role: identity policy, the scripts bucket's policy and the data and scripts key policies."""
    requests = recorded.analyst_requests(environment)
    role = recorded.applied_role(environment, f"glue-gi-{environment}--analyst")
    refused = _refused(evaluate(role, requests, recorded.account))
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


@pytest.mark.parametrize(
    ("who", "requests"),
    [("oncall", "oncall_requests"), ("analyst", "analyst_requests")],
)
def test_every_statement_of_the_operator_roles_is_needed_by_a_call(recorded, who, requests):
    role = recorded.applied_role("dev", f"glue-gi-dev--{who}")
    verdicts = evaluate(role, getattr(recorded, requests)("dev"), recorded.account)
    gaps = least_privilege_gaps(role, verdicts, recorded.account, {})
    assert not gaps, "statements no call needs:\n" + "\n".join(gaps)


def test_the_oncall_reads_the_watermarks_only_through_the_table_keys_grant(recorded):
    """The table key's policy, not the role alone, decides: without the on-call's ARN in
    it, DynamoDB's decrypt for the on-call is refused."""
    role = recorded.applied_role("dev", "glue-gi-dev--oncall")
    decrypts = [
        r
        for r in recorded.oncall_requests("dev")
        if r.action == "kms:Decrypt" and r.call.service == "DynamoDB"
    ]
    assert decrypts and all(r.resource_policy for r in decrypts)
    for r in decrypts:
        name, policy = r.resource_policy  # type: ignore[misc]
        text = json.dumps(policy).replace(f'"{role.arn}", ', "").replace(f', "{role.arn}"', "")
        r.resource_policy = (name, json.loads(text))
    assert {v.result for v in evaluate(role, decrypts, recorded.account)} == {"ImplicitlyDenied"}


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_a_job_run_is_allowed_for_its_role(recorded, environment):
    """One run of each job, for the job's role: the library's DynamoDB and CloudWatch calls
    recorded, the S3, logs, KMS (bookmarks included), secret and catalog calls documented
    (``job_run_requests``), with the scripts bucket's policy and the key policies."""
    refused = []
    for pipeline in sorted(recorded.job_runs[environment]):
        requests = recorded.job_run_requests(environment, pipeline)
        actions = {r.action for r in requests}
        assert {"dynamodb:UpdateItem", "dynamodb:GetItem", "cloudwatch:PutMetricData"} <= (
            actions
        ), sorted(actions)
        state = recorded.applies[environment].state
        name = deploy.output_values(state["values"]["outputs"])["pipelines"][pipeline]["job_name"]
        role = recorded.applied_role(environment, f"glue-{name}")
        refused += _refused(evaluate(role, requests, recorded.account))
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


def test_a_job_role_without_kms_encrypt_cannot_write_its_bookmarks(recorded):
    role = recorded.applied_role("dev", "glue-gi-dev-orders")
    # The role has more than one policy (its own, its releases' read): drop the statement
    # from whichever holds it.
    without = Principal(
        role.arn,
        tuple(
            (
                name,
                {
                    **document,
                    "Statement": [
                        s for s in document["Statement"] if s.get("Sid") != "EncryptBookmarks"
                    ],
                },
            )
            for name, document in role.policies
        ),
    )
    requests = [
        r for r in recorded.job_run_requests("dev", "orders") if r.note == "bookmark CSE-KMS"
    ]
    verdicts = {
        r.action: v.result
        for r, v in zip(requests, evaluate(without, requests, recorded.account), strict=True)
    }
    assert verdicts == {"kms:Encrypt": "ImplicitlyDenied", "kms:Decrypt": "Allowed"}


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_of_a_jdbc_network_apply_is_allowed_for_the_deploy_role(layout, environment):
    """modules/glue_network's security group, rules, endpoints and connection, created in
    the network team's VPC, for the deploy role: tag-scoped (aws:RequestTag, then
    aws:ResourceTag) to the environment."""
    requests = layout.network_requests(environment)
    actions = {r.action for r in requests}
    assert {"ec2:CreateSecurityGroup", "ec2:CreateVpcEndpoint", "ec2:CreateTags"} <= actions
    verdicts = layout.evaluate(environment, layout.role(environment, "deploy"), requests)
    refused = _refused(verdicts)
    assert not refused, f"{len(refused)} calls refused:\n" + "\n".join(refused)


def test_one_environments_deploy_role_cannot_change_the_others_network(recorded):
    """One account, two environments: dev's deploy role may not touch what prod's apply
    made (its Environment tag says prod)."""
    prod = [
        r
        for r in recorded.network_requests("prod")
        if r.action.startswith(("ec2:Authorize", "ec2:Revoke")) and r.context
    ]
    assert prod
    deletes = [
        Request(r.call, "ec2:DeleteSecurityGroup", r.resource, r.context)
        for r in prod
        if "security-group/sg-" in r.resource
    ]
    verdicts = evaluate(recorded.role("gi-ci-dev-deploy"), prod + deletes, recorded.account)
    assert deletes and {v.result for v in verdicts} == {"ImplicitlyDenied"}, _refused(verdicts)


def test_one_environments_deploy_role_cannot_change_the_others_resources(recorded):
    """One account, two environments: every write of prod's apply and deploy on a resource
    named for prod (table, bucket, releases, jobs, roles, keys, topic, queues, ...) is refused
    to dev's deploy role."""
    writes = [
        r
        for r in recorded.requests("prod") + recorded.deploy_requests("prod")
        if "prod" in r.resource
        and not r.action.split(":", 1)[1].startswith(("Get", "Describe", "List", "Head"))
    ]
    assert {r.action for r in writes} >= {"dynamodb:CreateTable", "s3:PutObject"}
    verdicts = evaluate(recorded.role("gi-ci-dev-deploy"), writes, recorded.account)
    verdicts += evaluate(recorded.role("gi-ci-dev-publish"), writes, recorded.account)
    allowed = [v.request.describe() for v in verdicts if v.result == "Allowed"]
    assert not allowed, f"{len(allowed)} of prod's writes allowed to dev:\n" + "\n".join(allowed)
