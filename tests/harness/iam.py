"""AWS calls recorded from Terraform's provider log, as IAM requests, and their evaluation.

A recorded call (service, operation, request parameters) becomes one or more IAM requests:
the action (the operation's IAM action, per AWS's Service Authorization Reference), the
resource ARN each resource type of that action names, and the condition keys the call
carries. Calls a service makes on the caller's behalf are added where AWS documents them
(KMS for SSE-KMS, iam:PassRole). The requests are evaluated offline by
``tools/iam-eval/evaluate.mjs`` (@cloud-copilot/iam-simulate, the version
tools/iam-eval/package-lock.json pins) against the principal's identity policies and the
resource's own policy (key policy, bucket policy, topic or queue policy).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from glue_incremental_tools import deploy

ROOT = Path(__file__).resolve().parents[2]
EVALUATOR = ROOT / "tools" / "iam-eval"
EVALUATOR_PACKAGE = "@cloud-copilot/iam-simulate"

PREFIX = {
    "IAM": "iam",
    "CloudWatch": "cloudwatch",
    "CloudWatch Logs": "logs",
    "EventBridge": "events",
    "Glue": "glue",
    "KMS": "kms",
    "S3": "s3",
    "SNS": "sns",
    "SQS": "sqs",
    "STS": "sts",
    "DynamoDB": "dynamodb",
    "Athena": "athena",
    "SFN": "states",
    "Secrets Manager": "secretsmanager",
    "EC2": "ec2",
}

# S3 API operations whose IAM action has another name (Service Authorization Reference,
# "Actions defined by Amazon S3"; https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-with-s3-policy-actions.html).
S3_ACTIONS = {
    "HeadBucket": "ListBucket",
    "ListObjectsV2": "ListBucket",
    "ListObjects": "ListBucket",
    "ListObjectVersions": "ListBucketVersions",
    "HeadObject": "GetObject",
    "CopyObject": "PutObject",
    "DeleteObjects": "DeleteObject",
    "GetBucketLifecycleConfiguration": "GetLifecycleConfiguration",
    "PutBucketLifecycleConfiguration": "PutLifecycleConfiguration",
    "GetBucketEncryption": "GetEncryptionConfiguration",
    "PutBucketEncryption": "PutEncryptionConfiguration",
    "GetPublicAccessBlock": "GetBucketPublicAccessBlock",
    "PutPublicAccessBlock": "PutBucketPublicAccessBlock",
    "GetBucketAccelerateConfiguration": "GetAccelerateConfiguration",
    "GetBucketReplication": "GetReplicationConfiguration",
    "GetObjectLockConfiguration": "GetBucketObjectLockConfiguration",
    "PutObjectLockConfiguration": "PutBucketObjectLockConfiguration",
    "GetBucketCors": "GetBucketCORS",
    "DeleteBucketLifecycle": "PutLifecycleConfiguration",
    "DeleteBucketEncryption": "PutEncryptionConfiguration",
}
# Calls AWS authorizes without a policy (the caller's own identity).
UNAUTHORIZED = {("STS", "GetCallerIdentity"), ("IAM", "GetUser")}


@dataclass(frozen=True)
class Call:
    """One API call as recorded: service, operation, request, and who made it."""

    service: str
    operation: str
    params: dict[str, Any]
    url: str = ""
    method: str = "POST"
    origin: str = ""  # what made it (the Terraform resource type, the tool)


@dataclass
class Request:
    """One IAM authorization an API call needs."""

    call: Call
    action: str
    resource: str
    context: dict[str, Any] = field(default_factory=dict)
    resource_policy: tuple[str, dict[str, Any]] | None = None
    note: str = ""

    def describe(self) -> str:
        return f"{self.action} on {self.resource} ({self.call.origin}: {self.call.service} {self.call.operation}{' ' + self.note if self.note else ''})"


# -- Terraform's provider log -----------------------------------------------------------------

_ENTRY = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", re.M)
_FIELD = re.compile(r'([\w.@]+)=("(?:[^"\\]|\\.)*"|\S*)')


def provider_log_calls(log: str) -> list[Call]:
    """The AWS calls of a ``TF_LOG_PROVIDER=debug`` log, in the order they were sent."""
    starts = [m.start() for m in _ENTRY.finditer(log)] + [len(log)]
    calls = []
    for start, end in itertools.pairwise(starts):
        entry = log[start:end]
        if "HTTP Request Sent" not in entry or "rpc.method=" not in entry:
            continue
        head, _, rest = entry.partition("\n")
        fields = {k: v.strip('"') for k, v in _FIELD.findall(head)}
        body_lines = [ln[4:] for ln in rest.splitlines() if ln.startswith("  | ")]
        body = "\n".join(x for x in body_lines if x != "[truncated...]")
        # The remaining fields follow the body on the entry's last line.
        for line in rest.splitlines():
            if not line.startswith("  |") and "=" in line:
                fields.update({k: v.strip('"') for k, v in _FIELD.findall(line)})
        service, operation = fields.get("rpc.service", ""), fields.get("rpc.method", "")
        url = fields.get("http.url", "")
        calls.append(
            Call(
                service,
                operation,
                _params(body, url),
                url=url,
                method=fields.get("http.method", "POST"),
                origin=fields.get("tf_resource_type", "terraform"),
            )
        )
    return calls


def _params(body: str, url: str) -> dict[str, Any]:
    body = body.strip()
    if body.startswith("{"):
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            # Truncated by the logger: the top-level names are what the mapping needs.
            return {k: v for k, v in re.findall(r'"(\w+)":"([^"]*)"', body)}
    if "=" in body and not body.startswith("<"):
        return {k: v[0] for k, v in parse_qs(body).items()}
    query = urlparse(url).query
    return {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}


# -- calls to IAM requests --------------------------------------------------------------------


@dataclass
class Account:
    """Where the calls go, and the resource policies as the calls change them."""

    partition: str
    region: str
    account: str
    key_policies: dict[str, dict[str, Any]] = field(default_factory=dict)  # key id -> policy
    key_aliases: dict[str, set[str]] = field(default_factory=dict)  # key id -> aliases
    bucket_policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    bucket_keys: dict[str, str] = field(default_factory=dict)  # bucket -> SSE-KMS key id
    table_keys: dict[str, str] = field(default_factory=dict)  # DynamoDB table -> key id
    topic_policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    queue_policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    alias_targets: dict[str, str] = field(default_factory=dict)  # alias -> key id
    key_tags: dict[str, dict[str, str]] = field(default_factory=dict)  # key id -> tags
    ec2_tags: dict[str, dict[str, str]] = field(default_factory=dict)  # sg-/vpce-/sgr- id -> tags
    resource_tags: dict[str, dict[str, str]] = field(default_factory=dict)  # ARN -> tags (Glue)
    applied: bool = False  # resource policies known from the state apply at once

    def arn(self, service: str, resource: str, region: bool = True, account: bool = True) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region else ''}:{self.account if account else ''}:{resource}"

    def key_id(self, value: str) -> str:
        if value.startswith("alias/aws/"):
            return value  # an AWS managed key, named by its alias (aws_managed_key_policy)
        if value.startswith("alias/"):
            return self.alias_targets.get(value, value)
        if value.startswith("arn:") and ":alias/" in value:
            return self.alias_targets.get("alias/" + value.split(":alias/")[1], value)
        return value.split("/")[-1] if value.startswith("arn:") else value

    def key_arn(self, value: str) -> str:
        return self.arn("kms", f"key/{self.key_id(value)}")

    def key_request(
        self,
        call: Call,
        action: str,
        key: str,
        context: dict[str, Any] | None = None,
        note: str = "",
    ) -> Request:
        key_id = self.key_id(key)
        ctx = {
            "kms:ResourceAliases": sorted(self.key_aliases.get(key_id, set())),
            "kms:CallerAccount": self.account,
            **{f"aws:ResourceTag/{k}": v for k, v in self.key_tags.get(key_id, {}).items()},
        }
        ctx.update(context or {})
        if key_id.startswith("alias/aws/"):
            policy = aws_managed_key_policy(key_id.removeprefix("alias/aws/"), self.region)
            arn = self.arn("kms", f"key/aws-managed-{key_id.removeprefix('alias/aws/')}")
        else:
            policy = self.key_policies.get(key_id)
            arn = self.key_arn(key_id)
        return Request(
            call,
            action,
            arn,
            ctx,
            (f"key {key_id}", policy) if policy else None,
            note,
        )


def aws_managed_key_policy(service: str, region: str) -> dict[str, Any]:
    """The key policy AWS gives an AWS managed key (aws/<service>): any principal of the account
    may describe it and, through the service, use it
    (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-managed)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": [
                    "kms:Encrypt",
                    "kms:Decrypt",
                    "kms:ReEncrypt*",
                    "kms:GenerateDataKey*",
                    "kms:CreateGrant",
                    "kms:DescribeKey",
                ],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"kms:ViaService": f"{service}.{region}.amazonaws.com"}
                },
            },
            {
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": ["kms:Describe*", "kms:Get*", "kms:List*"],
                "Resource": "*",
            },
        ],
    }


def _first(params: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = params.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def requests_for(call: Call, acct: Account) -> list[Request]:
    """The IAM requests one call needs, updating ``acct`` with what the call creates."""
    if (call.service, call.operation) in UNAUTHORIZED:
        return []
    out = _requests_for(call, acct)
    tags = _request_tags(call.params)
    tagged = any(r.note == "tags on create" for r in out)
    if tags and call.operation.startswith(("Create", "Put")) and out and not tagged:
        # Tagging on create needs the tagging action as well (e.g. KMS "Tagging keys",
        # https://docs.aws.amazon.com/kms/latest/developerguide/tag-permissions.html).
        prefix = PREFIX[call.service]
        tag_action = {"iam": "iam:TagRole", "sqs": "sqs:TagQueue"}.get(
            prefix, f"{prefix}:TagResource"
        )
        # The resource the call creates: the last one its own action names (a Glue
        # table after its catalog and database).
        first = [r for r in out if r.action == out[0].action][-1]
        context = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
        context["aws:TagKeys"] = sorted(tags)
        out.append(
            Request(
                call,
                tag_action,
                first.resource,
                {**first.context, **context},
                first.resource_policy,
                "tags on create",
            )
        )
    return out


def _request_tags(p: dict[str, Any]) -> dict[str, str]:
    form = {k: v for k, v in p.items() if k.startswith("Tags.member.")}
    if form:  # the query protocol (IAM, SNS, CloudWatch): Tags.member.N.Key / .Value
        return {
            v: str(form.get(k[: -len("Key")] + "Value", ""))
            for k, v in form.items()
            if k.endswith(".Key")
        }
    tags = p.get("Tags") or p.get("tags") or {}
    if isinstance(tags, dict):
        return {str(k): str(v) for k, v in tags.items()}
    if isinstance(tags, list):
        out = {}
        for t in tags:
            if isinstance(t, dict):
                key = t.get("Key") or t.get("TagKey")
                if key:
                    out[key] = str(t.get("Value", t.get("TagValue", "")))
        return out
    return {}


def _requests_for(call: Call, acct: Account) -> list[Request]:
    prefix = PREFIX[call.service]
    op = call.operation
    p = call.params
    action = f"{prefix}:{S3_ACTIONS.get(op, op) if prefix == 's3' else op}"
    out: list[Request] = []

    def req(resource: str, context: dict[str, Any] | None = None, policy=None, note="") -> None:
        out.append(Request(call, action, resource, dict(context or {}), policy, note))

    if prefix == "s3":
        path = unquote(urlparse(call.url).path).lstrip("/")
        bucket, _, key = path.partition("/")
        bucket_policy = acct.bucket_policies.get(bucket)
        policy = (f"bucket {bucket}", bucket_policy) if bucket_policy else None
        named = (p.get("Delete") or {}).get("Objects") if op == "DeleteObjects" else None
        if named:
            # Authorized per object: s3:DeleteObject on each key it names ("DeleteObjects",
            # https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html); a
            # call whose keys were not recorded (Terraform's log) stays on the bucket.
            for entry in named:
                req(acct.arn("s3", f"{bucket}/{entry['Key']}", False, False), {}, policy)
            return out
        if key and op not in {"ListObjectsV2", "ListObjects", "ListObjectVersions"}:
            ctx: dict[str, Any] = {}
            if p.get("IfNoneMatch"):
                ctx["s3:if-none-match"] = p["IfNoneMatch"]
            req(acct.arn("s3", f"{bucket}/{key}", False, False), ctx, policy)
            source = p.get("CopySource")
            if op == "CopyObject" and isinstance(source, dict):
                # CopyObject reads its source as the caller (s3:GetObject on the source object).
                out.append(
                    Request(
                        call,
                        "s3:GetObject",
                        acct.arn("s3", f"{source['Bucket']}/{source['Key']}", False, False),
                        {},
                        policy,
                        "copy source",
                    )
                )
            kms = acct.bucket_keys.get(bucket)
            via = {"kms:ViaService": f"s3.{acct.region}.amazonaws.com"}
            if kms and op in {"PutObject", "CopyObject", "CreateMultipartUpload"}:
                out.append(acct.key_request(call, "kms:GenerateDataKey", kms, via, "SSE-KMS"))
            if kms and op in {"GetObject", "HeadObject", "CopyObject"}:
                out.append(acct.key_request(call, "kms:Decrypt", kms, via, "SSE-KMS"))
        else:
            # Terraform's log names the query parameter (prefix), boto3 its own (Prefix).
            listed = p.get("prefix", p.get("Prefix"))
            ctx = {"s3:prefix": listed} if isinstance(listed, str) else {}
            req(acct.arn("s3", bucket, False, False), ctx, policy)
            if op == "PutBucketEncryption":
                # The key of SSE-KMS by default (the body is XML): the state's value.
                pass
        return out

    if prefix == "iam":
        role = _first(p, "RoleName")
        if role:
            req(acct.arn("iam", f"role/{role}", False))
        elif op.endswith("OpenIDConnectProvider") or op.endswith("OpenIDConnectProviderTags"):
            req(_first(p, "OpenIDConnectProviderArn") or acct.arn("iam", "oidc-provider/*", False))
        else:
            req("*")
        return out

    if prefix == "kms":
        if op in {"CreateKey", "ListAliases", "ListKeys"}:
            ctx = {}
            if op == "CreateKey":
                tags = _request_tags(p)
                ctx = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
                ctx |= {
                    "kms:KeySpec": p.get("KeySpec", "SYMMETRIC_DEFAULT"),
                    "kms:KeyUsage": p.get("KeyUsage", "ENCRYPT_DECRYPT"),
                    "kms:KeyOrigin": p.get("Origin", "AWS_KMS"),
                }
                if p.get("BypassPolicyLockoutSafetyCheck") is not None:
                    ctx["kms:BypassPolicyLockoutSafetyCheck"] = str(
                        p["BypassPolicyLockoutSafetyCheck"]
                    ).lower()
            req("*", ctx)
            return out
        if op in {"CreateAlias", "UpdateAlias", "DeleteAlias"}:
            alias = p["AliasName"]
            target = _first(p, "TargetKeyId") or acct.alias_targets.get(alias, "")
            # CreateAlias needs the action on the alias and on the key (KMS "Controlling
            # access to aliases": https://docs.aws.amazon.com/kms/latest/developerguide/alias-access.html).
            req(acct.arn("kms", alias))
            out.append(acct.key_request(call, action, target))
            if op == "CreateAlias":
                acct.alias_targets[alias] = acct.key_id(target)
                acct.key_aliases.setdefault(acct.key_id(target), set()).add(alias)
            return out
        key = _first(p, "KeyId", "TargetKeyId")
        if key:
            out.append(acct.key_request(call, action, key))
        else:
            req("*")
        return out

    if prefix == "dynamodb":
        if op in {"TransactWriteItems", "TransactGetItems"}:
            # IAM authorizes each item of a transaction by its own action; there is no
            # Transact* action ("Using IAM with DynamoDB transactions",
            # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
            kinds = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem"}
            kinds |= {"ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
            for entry in p.get("TransactItems") or []:
                for kind, item in entry.items():
                    out.extend(_item_requests(call, acct, f"dynamodb:{kinds[kind]}", item))
            return out
        if op in DYNAMODB_ITEM_OPERATIONS:
            return _item_requests(call, acct, action, p)
        table = _first(p, "TableName") or (p.get("ResourceArn") or "").split("/")[-1]
        req(acct.arn("dynamodb", f"table/{table}"))
        sse = p.get("SSESpecification") or {}
        key = sse.get("KMSMasterKeyId") if isinstance(sse, dict) else None
        if op in {"CreateTable", "UpdateTable"} and key:
            # DynamoDB encryption at rest with a customer managed key: the caller needs
            # kms:DescribeKey and kms:CreateGrant (via DynamoDB) on the key
            # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/encryption.usagenotes.html).
            via = {"kms:ViaService": f"dynamodb.{acct.region}.amazonaws.com"}
            out.append(acct.key_request(call, "kms:DescribeKey", key, via, "SSE at rest"))
            out.append(
                acct.key_request(
                    call,
                    "kms:CreateGrant",
                    key,
                    {**via, "kms:GrantIsForAWSResource": "true"},
                    "SSE at rest",
                )
            )
        return out

    if prefix == "glue":
        catalog = acct.arn("glue", "catalog")
        if op in {"GetTags", "TagResource", "UntagResource"}:
            req(p.get("ResourceArn", "*"))
            return out
        if "Job" in op and "Bookmark" not in op:
            req(acct.arn("glue", f"job/{_first(p, 'JobName', 'Name')}"))
            body = p.get("JobUpdate") if op == "UpdateJob" else p.get("Job")
            role = body.get("Role") if isinstance(body, dict) else p.get("Role")
            # Creating or editing a job passes its role: "glue:UpdateJob or glue:CreateJob,
            # and iam:PassRole on the job role" (Glue, "IAM permissions for auto upgrade",
            # https://docs.aws.amazon.com/glue/latest/dg/auto-version-upgrades-iam-permissions-for-auto-upgrade.html).
            if op in {"CreateJob", "UpdateJob"} and role:
                out.append(
                    Request(
                        call, "iam:PassRole", role, {"iam:PassedToService": "glue.amazonaws.com"}
                    )
                )
            return out
        if "Trigger" in op:
            req(acct.arn("glue", f"trigger/{_first(p, 'Name')}"))
            return out
        if "Workflow" in op:
            req(acct.arn("glue", f"workflow/{_first(p, 'Name')}"))
            return out
        if "SecurityConfiguration" in op:
            req("*")  # no resource type (Service Authorization Reference, AWS Glue)
            return out
        if "Database" in op:
            name = _first(p, "Name") or (p.get("DatabaseInput") or {}).get("Name")
            req(catalog)
            req(acct.arn("glue", f"database/{name}"))
            return out
        if "Table" in op or "Partition" in op:
            db = _first(p, "DatabaseName")
            name = _first(p, "Name", "TableName") or (p.get("TableInput") or {}).get("Name")
            req(catalog)
            req(acct.arn("glue", f"database/{db}"))
            req(acct.arn("glue", f"table/{db}/{name}"))
            return out
        if "Connection" in op:
            given = p.get("ConnectionInput") if isinstance(p.get("ConnectionInput"), dict) else {}
            arn = acct.arn("glue", f"connection/{_first(p, 'Name') or given.get('Name')}")
            tags = acct.resource_tags.get(arn, {})
            req(catalog)
            if op == "CreateConnection":
                # Authorized on the catalog alone (Service Authorization Reference, AWS
                # Glue: connectionType, rootcatalog); its tags on the connection it makes.
                requested = _request_tags(p)
                context: dict[str, Any] = {f"aws:RequestTag/{k}": v for k, v in requested.items()}
                if requested:
                    context["aws:TagKeys"] = sorted(requested)
                    out.append(
                        Request(call, "glue:TagResource", arn, context, None, "tags on create")
                    )
                return out
            req(arn, {f"aws:ResourceTag/{k}": v for k, v in tags.items()})
            return out
        req("*")
        return out

    if prefix == "logs":
        group = _first(p, "logGroupName")
        arn = _first(p, "resourceArn", "resourceIdentifier")
        if arn:
            req(arn.removesuffix(":*"))
        elif group:
            req(acct.arn("logs", f"log-group:{group}"))
        else:
            req("*")  # DescribeLogGroups: no resource type
        return out

    if prefix == "events":
        arn = _first(p, "ResourceARN")
        rule = _first(p, "Rule", "Name")
        req(arn or acct.arn("events", f"rule/{rule}"))
        if op == "PutTargets":
            for target in p.get("Targets") or []:
                if isinstance(target, dict) and target.get("RoleArn"):
                    out.append(
                        Request(
                            call,
                            "iam:PassRole",
                            target["RoleArn"],
                            {"iam:PassedToService": "events.amazonaws.com"},
                        )
                    )
        return out

    if prefix == "states":
        if op == "ValidateStateMachineDefinition":
            req("*")  # no resource type (Service Authorization Reference, AWS Step Functions)
            return out
        arn = _first(p, "stateMachineArn", "resourceArn")
        req(arn or acct.arn("states", f"stateMachine:{_first(p, 'name')}"))
        if op in {"CreateStateMachine", "UpdateStateMachine"} and p.get("roleArn"):
            out.append(
                Request(
                    call,
                    "iam:PassRole",
                    p["roleArn"],
                    {"iam:PassedToService": "states.amazonaws.com"},
                )
            )
        if op in {"CreateStateMachine", "UpdateStateMachine"} and (
            (p.get("loggingConfiguration") or {}).get("destinations")
        ):
            # Vended logs: whoever sets up the delivery needs these, on "*" (CloudWatch Logs,
            # "Enabling logging from AWS services", logs sent to CloudWatch Logs;
            # https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AWS-logs-and-resource-policy.html).
            for action in (
                "logs:CreateLogDelivery",
                "logs:PutResourcePolicy",
                "logs:DescribeResourcePolicies",
                "logs:DescribeLogGroups",
            ):
                out.append(Request(call, action, "*", {}))
        return out

    if prefix == "cloudwatch":
        arn = _first(p, "ResourceARN")
        alarm = _first(p, "AlarmName", "AlarmNames.member.1")
        dashboard = _first(p, "DashboardName", "DashboardNames.member.1")
        names = p.get("AlarmNames")
        if op == "PutMetricData":
            # No resource type; the namespace is the only scope (cloudwatch:namespace).
            req("*", {"cloudwatch:namespace": p.get("Namespace", "")})
        elif isinstance(names, list) and names:  # botocore's list: each alarm is authorized
            for name in names:
                req(acct.arn("cloudwatch", f"alarm:{name}"))
        elif arn:
            req(arn)
        elif alarm:
            req(acct.arn("cloudwatch", f"alarm:{alarm}"))
        elif dashboard:
            req(acct.arn("cloudwatch", f"dashboard/{dashboard}", region=False))
        else:
            req("*")
        return out

    if prefix == "sns":
        topic = _first(p, "TopicArn", "ResourceArn")
        if not topic and _first(p, "SubscriptionArn"):
            topic = p["SubscriptionArn"].rsplit(":", 1)[0]
        if not topic and _first(p, "Name"):
            topic = acct.arn("sns", p["Name"])
        policy = acct.topic_policies.get(topic or "")
        req(topic or "*", None, (f"topic {topic}", policy) if policy else None)
        return out

    if prefix == "sqs":
        url = _first(p, "QueueUrl")
        name = url.rstrip("/").split("/")[-1] if url else _first(p, "QueueName")
        queue = acct.arn("sqs", name or "*")
        policy = acct.queue_policies.get(queue)
        req(queue, None, (f"queue {queue}", policy) if policy else None)
        return out

    if prefix == "athena":
        arn = _first(p, "ResourceARN")
        req(arn or acct.arn("athena", f"workgroup/{_first(p, 'WorkGroup', 'Name')}"))
        return out

    if prefix == "ec2":
        return _ec2_requests(call, acct)

    if prefix == "secretsmanager":
        req(_first(p, "SecretId") or "*")
        return out

    req("*")
    return out


# EC2 resources whose tags (aws:ResourceTag) the state records, by the id prefix EC2 gives them.
EC2_TAGGED = (
    "aws_security_group",
    "aws_vpc_endpoint",
    "aws_vpc_security_group_ingress_rule",
    "aws_vpc_security_group_egress_rule",
)
EC2_TYPES = {"sg-": "security-group", "vpce-": "vpc-endpoint", "sgr-": "security-group-rule"}
EC2_TYPES |= {"vpc-": "vpc", "subnet-": "subnet", "rtb-": "route-table"}
# What each create action makes, and the existing resources it is authorized on as well
# (Service Authorization Reference, "Actions defined by Amazon EC2").
EC2_CREATES = {
    "CreateSecurityGroup": ("security-group", ("VpcId",)),
    "CreateVpcEndpoint": ("vpc-endpoint", ("VpcId", "RouteTableId", "SubnetId", "SecurityGroupId")),
    "AuthorizeSecurityGroupIngress": ("security-group-rule", ("GroupId",)),
    "AuthorizeSecurityGroupEgress": ("security-group-rule", ("GroupId",)),
}


def _ec2_list(params: dict[str, Any], name: str) -> list[str]:
    """A query-protocol list (``Name.1``, ``Name.2``) or a single ``Name``, in order."""
    single = params.get(name)
    numbered = sorted(
        (int(k.rsplit(".", 1)[1]), str(v))
        for k, v in params.items()
        if k.startswith(f"{name}.") and k.rsplit(".", 1)[1].isdigit()
    )
    return ([str(single)] if isinstance(single, str) else []) + [v for _, v in numbered]


def _ec2_request_tags(params: dict[str, Any]) -> dict[str, str]:
    """The tags of ``TagSpecification.N.Tag.M.Key/Value`` (tag on create) or ``Tag.M``."""
    tags = {}
    for k, v in params.items():
        match = re.fullmatch(r"((?:TagSpecification\.\d+\.)?Tag\.\d+)\.Key", k)
        if match:
            tags[str(v)] = str(params.get(f"{match.group(1)}.Value", ""))
    return tags


def _ec2_requests(call: Call, acct: Account) -> list[Request]:
    """EC2 calls: each resource the action is authorized on, the existing ones with their
    tags (aws:ResourceTag), the one created with the request's (aws:RequestTag), and the
    ec2:CreateTags that tagging on create needs ("Grant permission to tag Amazon EC2
    resources during creation",
    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html)."""
    op, p = call.operation, call.params
    action = f"ec2:{op}"
    if op.startswith("Describe"):
        return [Request(call, action, "*")]

    def existing(resource_id: str) -> tuple[str, dict[str, Any]]:
        kind = next(t for prefix, t in EC2_TYPES.items() if resource_id.startswith(prefix))
        tags = acct.ec2_tags.get(resource_id, {})
        return acct.arn("ec2", f"{kind}/{resource_id}"), {
            f"aws:ResourceTag/{k}": v for k, v in tags.items()
        }

    tags = _ec2_request_tags(p)
    requested: dict[str, Any] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    if tags:
        requested["aws:TagKeys"] = sorted(tags)
    out = []
    if op in EC2_CREATES:
        created, names = EC2_CREATES[op]
        for name in names:
            for resource_id in _ec2_list(p, name):
                arn, context = existing(resource_id)
                out.append(Request(call, action, arn, context))
        if tags or not op.startswith("Authorize"):
            arn = acct.arn("ec2", f"{created}/*")
            out.append(Request(call, action, arn, dict(requested)))
            if tags:
                context = {**requested, "ec2:CreateAction": op}
                out.append(Request(call, "ec2:CreateTags", arn, context, note="tags on create"))
        return out
    ids = _ec2_list(p, "GroupId") or _ec2_list(p, "VpcEndpointId") or _ec2_list(p, "ResourceId")
    for resource_id in ids:
        arn, context = existing(resource_id)
        out.append(Request(call, action, arn, {**context, **requested}))
    return out or [Request(call, action, "*")]


DYNAMODB_ITEM_OPERATIONS = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"}


def _leading_key(params: dict[str, Any]) -> str | None:
    """The partition key value an item call names (dynamodb:LeadingKeys), if one is found."""
    for name in ("Key", "Item"):
        item = params.get(name)
        if isinstance(item, dict):
            for value in item.values():  # the table's hash key comes first in the key
                if isinstance(value, dict) and "S" in value:
                    return str(value["S"])
    values = params.get("ExpressionAttributeValues") or {}
    pk = values.get(":pk") if isinstance(values, dict) else None
    return str(pk["S"]) if isinstance(pk, dict) and "S" in pk else None


def _item_requests(call: Call, acct: Account, action: str, params: dict[str, Any]) -> list[Request]:
    """An item read or write: the action on the table, and the table's customer managed key,
    which DynamoDB uses on the caller's behalf ("How Amazon DynamoDB uses AWS KMS",
    https://docs.aws.amazon.com/kms/latest/developerguide/services-dynamodb.html#dynamodb-authz)."""
    table = str(params.get("TableName", ""))
    key = _leading_key(params)
    context = {"dynamodb:LeadingKeys": [key]} if key else {}
    out = [Request(call, action, acct.arn("dynamodb", f"table/{table}"), context)]
    kms = acct.table_keys.get(table)
    if kms:
        via = {"kms:ViaService": f"dynamodb.{acct.region}.amazonaws.com"}
        out.append(acct.key_request(call, "kms:Decrypt", kms, via, "table key"))
    return out


# -- evaluation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Principal:
    arn: str
    policies: tuple[tuple[str, dict[str, Any]], ...]  # (name, document)
    boundary: dict[str, Any] | None = None


@dataclass
class Verdict:
    request: Request
    result: str
    reason: str
    used: list[str]


def evaluate(principal: Principal, requests: list[Request], account: str) -> list[Verdict]:
    """Each request evaluated for ``principal`` by the pinned iam-simulate."""
    return evaluate_pairs([(principal, r) for r in requests], account)


def evaluate_pairs(pairs: list[tuple[Principal, Request]], account: str) -> list[Verdict]:
    """Each (principal, request) evaluated by the pinned iam-simulate, in one process."""
    payload = []
    for i, (principal, r) in enumerate(pairs):
        context = {
            "aws:SecureTransport": "true",
            "aws:PrincipalArn": principal.arn,
            "aws:PrincipalAccount": account,
            **{k: v for k, v in r.context.items() if v not in (None, [])},
        }
        payload.append(
            {
                "id": str(i),
                "principal": principal.arn,
                "action": r.action,
                "resource": r.resource,
                "account": account,
                "context": context,
                "identityPolicies": [{"name": n, "policy": d} for n, d in principal.policies],
                "resourcePolicy": None
                if r.resource_policy is None
                else {"name": r.resource_policy[0], "policy": r.resource_policy[1]},
                "permissionBoundary": principal.boundary,
            }
        )
    result = subprocess.run(
        ["node", str(EVALUATOR / "evaluate.mjs")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    answers = json.loads(result.stdout)
    return [
        Verdict(r, a["result"], a["reason"], a["used"])
        for (_, r), a in zip(pairs, answers, strict=True)
    ]


def evaluator_version() -> str:
    package = EVALUATOR / "node_modules" / "@cloud-copilot" / "iam-simulate" / "package.json"
    return json.loads(package.read_text())["version"]


# -- applying with the calls recorded ---------------------------------------------------------

# LocalStack serves what it implements without provider waits; moto (behind the shim) what
# LocalStack community lacks (Athena, Step Functions), what it does not run here (EC2) and DynamoDB (DynamoDB Local has no
# UpdateContinuousBackups and describes no SSE).
LOCALSTACK_ENDPOINTS = (
    "cloudwatch",
    "cloudwatchlogs",
    "events",
    "iam",
    "kms",
    "s3",
    "secretsmanager",
    "sns",
    "sqs",
    "sts",
)
MOTO_ENDPOINTS = ("athena", "dynamodb", "ec2", "glue", "sfn")

_OVERRIDE = """terraform {
  backend "local" {}
}

provider "aws" {
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true
  # moto answers a few calls the provider retries with a 500: a few attempts are enough
  # (the default, 25, waits minutes), and a connection LocalStack closed is tried again.
  max_retries = 3
  endpoints {
%s
  }
}
"""


def emulator_override(localstack_url: str, moto_url: str) -> str:
    """A Terraform override file routing a root's provider to the emulators, state local."""
    lines = [f'    {s} = "{localstack_url}"' for s in LOCALSTACK_ENDPOINTS]
    lines += [f'    {s} = "{moto_url}"' for s in MOTO_ENDPOINTS]
    return _OVERRIDE % "\n".join(lines)


def resources(shown: dict[str, Any]) -> list[dict[str, Any]]:
    """Every resource of ``terraform show -json`` (state) or its planned values, child modules too."""
    root = shown.get("values") or shown.get("planned_values") or {}
    out, stack = [], [root.get("root_module") or {}]
    while stack:
        module = stack.pop()
        out.extend(module.get("resources") or [])
        stack.extend(module.get("child_modules") or [])
    return out


def load_resource_policies(acct: Account, state: dict[str, Any]) -> None:
    """Key, topic and queue policies, bucket keys from an applied state."""
    for r in resources(state):
        v = r.get("values") or {}
        if r["type"] == "aws_kms_key":
            acct.key_policies[v["key_id"]] = json.loads(v["policy"])
            acct.key_tags[v["key_id"]] = dict(v.get("tags_all") or {})
        elif r["type"] == "aws_glue_connection":
            acct.resource_tags[v["arn"]] = dict(v.get("tags_all") or {})
        elif r["type"] in EC2_TAGGED:
            acct.ec2_tags[v["id"]] = dict(v.get("tags_all") or {})
        elif r["type"] == "aws_dynamodb_table":
            for sse in v.get("server_side_encryption") or []:
                if sse.get("enabled") and sse.get("kms_key_arn"):
                    acct.table_keys[v["name"]] = acct.key_id(sse["kms_key_arn"])
        elif r["type"] == "aws_sns_topic_policy":
            acct.topic_policies[v["arn"]] = json.loads(v["policy"])
        elif r["type"] == "aws_sqs_queue_policy":
            name = v["queue_url"].rstrip("/").split("/")[-1]
            acct.queue_policies[acct.arn("sqs", name)] = json.loads(v["policy"])
        elif r["type"] == "aws_s3_bucket_server_side_encryption_configuration":
            for rule in v.get("rule") or []:
                for d in rule.get("apply_server_side_encryption_by_default") or []:
                    if d.get("kms_master_key_id"):
                        acct.bucket_keys[v["bucket"]] = acct.key_id(d["kms_master_key_id"])


def bucket_policies(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        r["values"]["bucket"]: json.loads(r["values"]["policy"])
        for r in resources(state)
        if r["type"] == "aws_s3_bucket_policy"
    }


def role_policies(shown: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Role name -> its inline policies, from a plan or a state."""
    names = {}
    for r in resources(shown):
        if r["type"] == "aws_iam_role":
            names[r["address"]] = r["values"]["name"]
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for r in resources(shown):
        if r["type"] != "aws_iam_role_policy":
            continue
        v = r["values"]
        role = v.get("role") or names.get(
            r["address"].replace("aws_iam_role_policy", "aws_iam_role")
        )
        out.setdefault(role, []).append((f"{role}/{v['name']}", json.loads(v["policy"])))
    return out


def apply_requests(calls: list[Call], acct: Account, state: dict[str, Any]) -> list[Request]:
    """The IAM requests of an apply's calls, resource policies in effect as the apply goes."""
    load_resource_policies(acct, state)
    final_bucket_policies = bucket_policies(state)
    out = []
    for call in calls:
        out.extend(requests_for(call, acct))
        if call.service == "S3" and call.operation == "PutBucketPolicy":
            bucket = unquote(urlparse(call.url).path).strip("/").split("/")[0]
            acct.bucket_policies[bucket] = final_bucket_policies[bucket]
    return out


@dataclass
class RecordedApply:
    """One root applied to the emulators with its provider's calls recorded."""

    environment: str
    directory: Path
    calls: list[Call]
    state: dict[str, Any]


def apply_recorded(
    directory: Path, var_file: str, environment: str, env: dict[str, str], tf: str
) -> RecordedApply:
    """``terraform apply`` of ``directory`` with the provider's debug log, then its state.

    The provider is started by this command (not reattached): its log is the record.
    """
    log = directory / "provider.log"
    # The release this checkout builds, as CI's plan pins it: the deploy then verifies it.
    env = {**env, "TF_VAR_release": deploy.release_id(ROOT)}
    run = {"cwd": directory, "capture_output": True, "text": True, "timeout": 600}
    init = subprocess.run([tf, "init", "-no-color"], env=env, **run)  # type: ignore[call-overload]
    assert init.returncode == 0, init.stdout[-3000:] + init.stderr[-3000:]
    for attempt in range(2):
        applied = subprocess.run(  # type: ignore[call-overload]
            [tf, "apply", "-auto-approve", "-no-color", f"-var-file={var_file}"],
            env={**env, "TF_LOG_CORE": "off", "TF_LOG_PROVIDER": "debug", "TF_LOG_PATH": str(log)},
            **run,
        )
        # An emulator's dropped connection is no finding: the apply resumes where it stopped
        # (the log keeps both attempts' calls; a call made twice is evaluated twice).
        if applied.returncode == 0 or attempt or not _dropped_connection(applied.stderr):
            break
    assert applied.returncode == 0, (
        f"terraform apply -var-file={var_file} failed:\n{applied.stdout[-3000:]}\n{applied.stderr[-4000:]}"
    )
    shown = subprocess.run([tf, "show", "-json"], env=env, **run)  # type: ignore[call-overload]
    return RecordedApply(
        environment, directory, provider_log_calls(log.read_text()), json.loads(shown.stdout)
    )


def _dropped_connection(stderr: str) -> bool:
    return any(
        sign in stderr
        for sign in ("use of closed network connection", "connection reset by peer", "EOF")
    )


def without_statement(principal: Principal, sid: str) -> Principal:
    """``principal`` with the identity statement ``sid`` (``<policy name>#<index>``) removed."""
    policies = []
    for name, document in principal.policies:
        statements = document["Statement"]
        statements = statements if isinstance(statements, list) else [statements]
        kept = [s for i, s in enumerate(statements) if f"{name}#{i}" != sid]
        policies.append((name, {**document, "Statement": kept}))
    return Principal(principal.arn, tuple(policies), principal.boundary)


def statement_ids(principal: Principal) -> dict[str, str]:
    """``<policy name>#<index>`` -> the statement's Sid (or the id itself), for every statement."""
    out = {}
    for name, document in principal.policies:
        statements = document["Statement"]
        statements = statements if isinstance(statements, list) else [statements]
        for i, s in enumerate(statements):
            out[f"{name}#{i}"] = s.get("Sid") or f"{name}#{i}"
    return out


def least_privilege_gaps(
    principal: Principal, verdicts: list[Verdict], account: str, justified: dict[str, str]
) -> list[str]:
    """Statements of ``principal`` no recorded call needs, unless ``justified`` names the call.

    A statement is needed when some call it allowed is refused without it: a statement used
    by no call, or only by calls other statements allow as well (a broad grant added beside
    the exact ones), is a gap.
    """
    gaps = []
    pairs: list[tuple[Principal, Request]] = []
    checked: list[tuple[str, int, int]] = []  # (label, first pair, pairs)
    for sid, label in statement_ids(principal).items():
        if label in justified:
            continue
        used_by = [v.request for v in verdicts if sid in v.used]
        if not used_by:
            gaps.append(f"{label}: used by no recorded call")
            continue
        # Distinct requests only: an apply repeats the same read many times.
        distinct = list(
            {
                (r.action, r.resource, json.dumps(r.context, sort_keys=True)): r for r in used_by
            }.values()
        )
        checked.append((label, len(pairs), len(distinct)))
        reduced = without_statement(principal, sid)
        pairs.extend((reduced, r) for r in distinct)
    again = evaluate_pairs(pairs, account) if pairs else []
    for label, first, count in checked:
        if all(v.result == "Allowed" for v in again[first : first + count]):
            example = again[first].request.describe()
            gaps.append(
                f"{label}: every call it allows ({count}, e.g. {example}) is allowed without it"
            )
    return gaps


@contextmanager
def recording_boto3_calls(origin: str) -> Iterator[list[Call]]:
    """Every botocore API call made meanwhile (service id, operation, parameters), in order.

    Recorded where botocore sends each call (``BaseClient._make_api_call``, which emits the
    ``before-call`` events), so clients the code under test created earlier are seen too.
    """
    import botocore.client

    calls: list[Call] = []
    original = botocore.client.BaseClient._make_api_call

    def record(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        service = str(self.meta.service_model.service_id)
        params = {k: v for k, v in api_params.items() if k != "Body"}
        url = ""
        if service == "S3":
            url = "/" + "/".join(str(params[n]) for n in ("Bucket", "Key") if params.get(n))
        calls.append(Call(service, operation_name, params, url=url, origin=origin))
        return original(self, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = record  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        botocore.client.BaseClient._make_api_call = original  # type: ignore[method-assign]


def requests_after_apply(calls: list[Call], acct: Account, state: dict[str, Any]) -> list[Request]:
    """The IAM requests of calls made once the apply is done: every resource policy in effect."""
    load_resource_policies(acct, state)
    acct.bucket_policies.update(bucket_policies(state))
    for r in resources(state):
        if r["type"] == "aws_kms_alias":
            acct.alias_targets[r["values"]["name"]] = r["values"]["target_key_id"]
            acct.key_aliases.setdefault(r["values"]["target_key_id"], set()).add(
                r["values"]["name"]
            )
    return [request for call in calls for request in requests_for(call, acct)]
