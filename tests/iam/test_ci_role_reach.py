"""What the CI deploy role may NOT do, evaluated on the policies terraform/ci renders.

terraform/ci is planned (never applied) with its committed ``example.tfvars`` (dev and prod
in one account) and a permissions boundary; the only AWS call a plan makes, STS
GetCallerIdentity for the account id, is answered by a stub. The rendered deploy-role
policy of dev is evaluated by the pinned @cloud-copilot/iam-simulate
(``tests/harness/iam.py``) against requests a reviewer would try: reaching prod's keys and
security groups through dev's own Environment tag, the account-wide Glue Data Catalog
settings, and the role tagging a boundary requires. Each has a twin the apply really makes,
which must stay allowed. modules/oncall is planned the same way for its topic key's policy:
an account-wide kms:* identity may administer it but not read a page or grant, and the
services that page (CloudWatch, EventBridge) may still encrypt for the topic.
tests/iam/test_iam_evaluation.py evaluates the recorded calls.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness.iam import EVALUATOR, EVALUATOR_PACKAGE, Call, Principal, Request, evaluate
from tests.harness.terraform import TF, copy_tree, tf

pytestmark = pytest.mark.terraform

ACCOUNT = "111122223333"
REGION = "eu-west-1"
BOUNDARY = f"arn:aws:iam::{ACCOUNT}:policy/gi-boundary"

if not os.access(TF, os.X_OK):
    pytest.skip(f"terraform CLI not found ({TF})", allow_module_level=True)
if not (EVALUATOR / "node_modules" / EVALUATOR_PACKAGE).exists() or not shutil.which("node"):
    pytest.skip("the IAM evaluator is not installed; run scripts/setup.sh", allow_module_level=True)

_IDENTITY = (
    '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
    f"<GetCallerIdentityResult><Arn>arn:aws:iam::{ACCOUNT}:user/plan</Arn><UserId>AIDAPLAN</UserId>"
    f"<Account>{ACCOUNT}</Account></GetCallerIdentityResult>"
    "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>"
).encode()

_OVERRIDE = """terraform {
  backend "local" {}
}

provider "aws" {
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  endpoints {
    sts = "%s"
  }
}
"""


class _CallerIdentity(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(_IDENTITY)))
        self.end_headers()
        self.wfile.write(_IDENTITY)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def dev_deploy(tmp_path_factory) -> Iterator[Principal]:
    """dev's deploy role, its policy as terraform/ci renders it with a permissions boundary."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CallerIdentity)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ci = copy_tree(tmp_path_factory.mktemp("ci-reach")) / "ci"
        (ci / "override.tf").write_text(_OVERRIDE % f"http://127.0.0.1:{server.server_address[1]}")
        tf(ci, "init", "-no-color")
        tf(
            ci,
            "plan",
            "-no-color",
            "-var-file=example.tfvars",
            f"-var=permissions_boundary_arn={BOUNDARY}",
            "-out=ci.tfplan",
        )
        shown = json.loads(tf(ci, "show", "-json", "ci.tfplan").stdout)
    finally:
        server.shutdown()
    address = 'module.roles["dev"].aws_iam_role_policy.this["deploy"]'
    modules = shown["planned_values"]["root_module"]["child_modules"]
    policy = next(
        json.loads(r["values"]["policy"])
        for m in modules
        for r in m["resources"]
        if r["address"] == address
    )
    yield Principal(f"arn:aws:iam::{ACCOUNT}:role/gi-ci-dev-deploy", (("dev-deploy", policy),))


# What modules/kms_key gives every key: the account administers it, IAM decides who may.
KEY_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
            "Action": [
                "kms:CreateAlias",
                "kms:PutKeyPolicy",
                "kms:TagResource",
                "kms:ScheduleKeyDeletion",
            ],
            "Resource": "*",
        }
    ],
}


def _arn(service: str, resource: str) -> str:
    region = "" if service == "iam" else REGION
    return f"arn:aws:{service}:{region}:{ACCOUNT}:{resource}"


def _request(action: str, resource: str, key: bool = False, **context: Any) -> Request:
    call = Call(action.split(":")[0], action.split(":")[1], {}, origin="a reviewer")
    policy = ("key", KEY_POLICY) if key else None
    return Request(call, action, resource, context, policy)


def _verdicts(role: Principal, requests: list[Request]) -> dict[str, str]:
    return {
        f"{v.request.action} {v.request.resource}": v.result
        for v in evaluate(role, requests, ACCOUNT)
    }


DEV_TAG = {"aws:RequestTag/Environment": "dev", "aws:TagKeys": ["Environment"]}


def test_a_deploy_role_cannot_retag_the_other_environments_key_as_its_own(dev_deploy):
    """Retagging prod's key Environment=dev would hand it to dev's tag-scoped grants (the
    DynamoDB grant, the publish role's uploads); tagging a key dev creates stays allowed."""
    prod_key = _request(
        "kms:TagResource",
        _arn("kms", "key/prod"),
        key=True,
        **DEV_TAG,
        **{"aws:ResourceTag/Environment": "prod"},
    )
    created = _request("kms:TagResource", "*", **DEV_TAG)
    own_key = _request(
        "kms:TagResource",
        _arn("kms", "key/dev"),
        key=True,
        **DEV_TAG,
        **{"aws:ResourceTag/Environment": "dev"},
    )
    assert list(_verdicts(dev_deploy, [prod_key, created, own_key]).values()) == [
        "ImplicitlyDenied",
        "Allowed",
        "Allowed",
    ]


def test_a_deploy_role_opens_only_the_security_groups_its_environment_made(dev_deploy):
    """A rule or an endpoint added to prod's (or the network team's) group, in a request
    tagged dev, is refused; dev's own group and the rule and endpoint it creates are not."""
    requests = [
        _request(
            "ec2:AuthorizeSecurityGroupIngress",
            _arn("ec2", "security-group/sg-prod"),
            **DEV_TAG,
            **{"aws:ResourceTag/Environment": "prod"},
        ),
        _request(
            "ec2:AuthorizeSecurityGroupIngress", _arn("ec2", "security-group/sg-db"), **DEV_TAG
        ),
        _request(
            "ec2:CreateVpcEndpoint",
            _arn("ec2", "security-group/sg-prod"),
            **DEV_TAG,
            **{"aws:ResourceTag/Environment": "prod"},
        ),
    ]
    own = [
        _request(
            "ec2:AuthorizeSecurityGroupIngress",
            _arn("ec2", "security-group/sg-dev"),
            **DEV_TAG,
            **{"aws:ResourceTag/Environment": "dev"},
        ),
        _request(
            "ec2:AuthorizeSecurityGroupIngress", _arn("ec2", "security-group-rule/*"), **DEV_TAG
        ),
        _request("ec2:CreateSecurityGroup", _arn("ec2", "security-group/*"), **DEV_TAG),
        _request("ec2:CreateVpcEndpoint", _arn("ec2", "vpc-endpoint/*"), **DEV_TAG),
    ]
    verdicts = list(_verdicts(dev_deploy, requests + own).values())
    assert verdicts == ["ImplicitlyDenied"] * 3 + ["Allowed"] * 4


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("glue:PutResourcePolicy", "ImplicitlyDenied"),
        ("glue:DeleteResourcePolicy", "ImplicitlyDenied"),
        ("glue:PutDataCatalogEncryptionSettings", "ImplicitlyDenied"),
        ("glue:CreateDatabase", "Allowed"),
        ("glue:UpdateTable", "Allowed"),
        ("glue:GetPartitionIndexes", "Allowed"),
        ("glue:CreateConnection", "Allowed"),
    ],
)
def test_a_deploy_role_names_the_root_catalog_only_for_its_own_catalog_objects(
    dev_deploy, action, expected
):
    """The account's catalog-wide settings (shared with prod) are not dev's to change."""
    (verdict,) = _verdicts(dev_deploy, [_request(action, _arn("glue", "catalog"))]).values()
    assert verdict == expected


def test_a_deploy_role_with_a_permissions_boundary_tags_the_roles_it_creates(dev_deploy):
    """CreateRole with tags needs iam:TagRole, which never carries iam:PermissionsBoundary:
    under the boundary condition it would be refused and with it every tagged role."""
    role = _arn("iam", "role/glue-gi-dev-orders")
    requests = [
        _request("iam:CreateRole", role, **{"iam:PermissionsBoundary": BOUNDARY}, **DEV_TAG),
        _request("iam:TagRole", role, **DEV_TAG),
        _request("iam:TagRole", _arn("iam", "role/glue-gi-prod-orders"), **DEV_TAG),
    ]
    assert list(_verdicts(dev_deploy, requests).values()) == [
        "Allowed",
        "Allowed",
        "ImplicitlyDenied",
    ]


# -- the on-call topic's key (modules/oncall) ---------------------------------------------------

ONCALL_ROOT = """
module "oncall" {
  source        = "../modules/oncall"
  name          = "gi-dev-oncall"
  subscriptions = [{ protocol = "email", endpoint = "oncall@example.com" }]
}
"""


def _planned_root(directory: Any, text: str) -> dict[str, Any]:
    """``terraform show -json`` of a plan of a root module ``text`` beside terraform/modules."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CallerIdentity)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        root = copy_tree(directory) / "root"
        root.mkdir()
        (root / "main.tf").write_text(text)
        (root / "override.tf").write_text(
            _OVERRIDE % f"http://127.0.0.1:{server.server_address[1]}"
        )
        tf(root, "init", "-no-color")
        tf(root, "plan", "-no-color", "-out=root.tfplan")
        return json.loads(tf(root, "show", "-json", "root.tfplan").stdout)
    finally:
        server.shutdown()


def _planned_key_policies(shown: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """address -> policy of every key the plan creates."""
    return {
        r["address"]: json.loads(r["values"]["policy"])
        for module in shown["planned_values"]["root_module"]["child_modules"]
        for r in module["resources"]
        if r["type"] == "aws_kms_key"
    }


@pytest.fixture(scope="module")
def oncall_key_policy(tmp_path_factory) -> dict[str, Any]:
    """The key policy modules/oncall gives the topic's key it creates, as planned."""
    shown = _planned_root(tmp_path_factory.mktemp("oncall-key"), ONCALL_ROOT)
    return _planned_key_policies(shown)["module.oncall.aws_kms_key.this[0]"]


ONCALL_KEY = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/0000aaaa-0000-0000-0000-000000000000"
KMS_STAR = Principal(
    f"arn:aws:iam::{ACCOUNT}:role/platform-admin",
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


def _key_requests(
    principal_actions: list[str], policy: dict[str, Any], **context: Any
) -> list[Request]:
    call = Call("KMS", "(key use)", {}, origin="the on-call topic")
    return [
        Request(call, a, ONCALL_KEY, dict(context), ("oncall key", policy))
        for a in principal_actions
    ]


def test_an_account_wide_kms_star_identity_cannot_read_or_grant_with_the_oncall_topic_key(
    oncall_key_policy,
):
    """The account statement administers the topic's key and names no use: a role whose
    identity policy allows kms:* on * can neither decrypt a page nor make a grant (not even
    one an AWS service asks for: nothing uses the topic's key through a grant), while
    administering the key (what the CI deploy role's apply does) stays allowed."""
    uses = [
        "kms:Decrypt",
        "kms:GenerateDataKey",
        "kms:Encrypt",
        "kms:ReEncryptFrom",
        "kms:CreateGrant",
    ]
    refused = _key_requests(uses, oncall_key_policy)
    refused += _key_requests(
        ["kms:CreateGrant"], oncall_key_policy, **{"kms:GrantIsForAWSResource": "true"}
    )
    administer = _key_requests(
        [
            "kms:DescribeKey",
            "kms:GetKeyPolicy",
            "kms:PutKeyPolicy",
            "kms:EnableKeyRotation",
            "kms:TagResource",
            "kms:ScheduleKeyDeletion",
        ],
        oncall_key_policy,
    )
    verdicts = evaluate(KMS_STAR, refused + administer, ACCOUNT)
    assert [v.result for v in verdicts[: len(refused)]] == ["ImplicitlyDenied"] * len(refused), [
        v.reason for v in verdicts[: len(refused)]
    ]
    assert {v.result for v in verdicts[len(refused) :]} == {"Allowed"}, [
        v.reason for v in verdicts[len(refused) :]
    ]


@pytest.mark.parametrize("service", ["cloudwatch.amazonaws.com", "events.amazonaws.com"])
def test_alarms_and_failure_events_can_still_publish_to_the_encrypted_topic(
    oncall_key_policy, service
):
    """A CloudWatch alarm's or an EventBridge rule's publish makes SNS use the topic's key
    as that service: kms:GenerateDataKey and kms:Decrypt, by the key policy alone."""
    publisher = Principal(service, ())
    requests = _key_requests(["kms:GenerateDataKey", "kms:Decrypt"], oncall_key_policy)
    verdicts = evaluate(publisher, requests, ACCOUNT)
    assert {v.result for v in verdicts} == {"Allowed"}, [v.reason for v in verdicts]


def test_a_ci_role_lists_its_states_workspaces_and_nothing_else_of_the_state_bucket(dev_deploy):
    """terraform init/plan/apply list the S3 backend's workspaces (prefix ``env:/``): allowed
    on dev's state bucket; the whole bucket, another prefix, and prod's bucket are not."""
    dev, prod = "example-terraform-state-dev", "example-terraform-state-prod"
    requests = [
        _request("s3:ListBucket", f"arn:aws:s3:::{bucket}", **{"s3:prefix": prefix})
        for bucket, prefix in (
            (dev, "env:/"),
            (dev, ""),
            (dev, "glue-incremental/"),
            (prod, "env:/"),
        )
    ]
    results = [v.result for v in evaluate(dev_deploy, requests, ACCOUNT)]
    assert results == ["Allowed"] + ["ImplicitlyDenied"] * 3, results


# -- the platform's keys: administered by the deploy role their policies name -----------------

PLATFORM_KEYS_ROOT = f"""
module "key" {{
  source          = "../modules/kms_key"
  name            = "gi-dev-data"
  description     = "dev's data"
  user_role_arns  = ["arn:aws:iam::{ACCOUNT}:role/glue-gi-dev-orders"]
  admin_role_arns = ["arn:aws:iam::{ACCOUNT}:role/gi-ci-dev-deploy"]
}}

module "oncall" {{
  source              = "../modules/oncall"
  name                = "gi-dev-oncall"
  subscriptions       = [{{ protocol = "email", endpoint = "oncall@example.com" }}]
  key_admin_role_arns = ["arn:aws:iam::{ACCOUNT}:role/gi-ci-dev-deploy"]
}}
"""

# What an apply does to a key it manages (modules/kms_key deployer_actions).
KEY_ADMIN_ACTIONS = [
    "kms:PutKeyPolicy",
    "kms:ScheduleKeyDeletion",
    "kms:CreateAlias",
    "kms:EnableKeyRotation",
    "kms:UntagResource",
]


@pytest.fixture(scope="module")
def platform_key_policies(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """The policies modules/kms_key and modules/oncall give their keys when they name dev's
    deploy role (environments/aws passes it), as planned."""
    return _planned_key_policies(
        _planned_root(tmp_path_factory.mktemp("platform-keys"), PLATFORM_KEYS_ROOT)
    )


def test_a_deploy_role_cannot_administer_a_key_of_the_account_by_tagging_it_as_its_own(
    dev_deploy,
):
    """An existing key with no Environment tag (another workload's, the account's default
    policy: IAM decides) may still be tagged Environment=dev (kms:TagResource on "*" is what
    tagging a key at CreateKey needs, and no condition tells the two apart), but once tagged
    the deploy role can neither rewrite its policy, schedule its deletion nor alias it: no
    identity statement administers a key by its tag."""
    tag_untagged = _request("kms:TagResource", _arn("kms", "key/other"), key=True, **DEV_TAG)
    tagged = {"aws:ResourceTag/Environment": "dev"}
    administer = [
        _request(action, _arn("kms", "key/other"), key=True, **tagged)
        for action in KEY_ADMIN_ACTIONS
    ]
    verdicts = evaluate(dev_deploy, [tag_untagged, *administer], ACCOUNT)
    assert verdicts[0].result == "Allowed", verdicts[0].reason
    assert [v.result for v in verdicts[1:]] == ["ImplicitlyDenied"] * len(administer), [
        (v.request.action, v.result) for v in verdicts[1:]
    ]


@pytest.mark.parametrize(
    "address", ["module.key.aws_kms_key.this", "module.oncall.aws_kms_key.this[0]"]
)
def test_a_deploy_role_administers_the_keys_whose_policies_name_it(
    dev_deploy, platform_key_policies, address
):
    """The platform's keys (modules/kms_key's and the on-call topic's) name the deploy role:
    the apply's actions on them are allowed by the key policy alone; the job role the data
    key names as a user may not administer it."""
    policy = platform_key_policies[address]
    key = _arn("kms", "key/0000bbbb-0000-0000-0000-000000000000")
    call = Call("KMS", "(apply)", {}, origin="an apply")
    requests = [
        Request(call, action, key, {"aws:ResourceTag/Environment": "dev"}, ("key", policy))
        for action in KEY_ADMIN_ACTIONS
    ]
    verdicts = evaluate(dev_deploy, requests, ACCOUNT)
    assert {v.result for v in verdicts} == {"Allowed"}, [
        (v.request.action, v.reason) for v in verdicts
    ]
    job_role = Principal(f"arn:aws:iam::{ACCOUNT}:role/glue-gi-dev-orders", ())
    assert {v.result for v in evaluate(job_role, requests, ACCOUNT)} == {"ImplicitlyDenied"}


# -- a pipeline with source.notifications: its source bucket's notification configuration ----

NOTIFYING_ROLES_ROOT = f"""
module "roles" {{
  source                      = "../modules/ci_roles"
  github_repository           = "example/glue-incremental"
  environment                 = "dev"
  github_environment          = "dev"
  oidc_provider_arn           = "arn:aws:iam::{ACCOUNT}:oidc-provider/token.actions.githubusercontent.com"
  name_prefix                 = "gi-dev"
  state                       = {{ bucket = "example-terraform-state-dev", key = "dev.tfstate" }}
  scripts_bucket_name         = "example-glue-scripts-dev"
  notification_source_buckets = ["example-landing-dev"]
  pull_request_plan_role      = true
}}
"""


@pytest.fixture(scope="module")
def notifying_roles(tmp_path_factory) -> dict[str, Principal]:
    """dev's CI roles as modules/ci_roles renders them for a pipeline whose source bucket
    ``example-landing-dev`` sends notifications."""
    shown = _planned_root(tmp_path_factory.mktemp("notifying-roles"), NOTIFYING_ROLES_ROOT)
    (module,) = shown["planned_values"]["root_module"]["child_modules"]
    roles = {}
    for resource in module["resources"]:
        if resource["type"] == "aws_iam_role_policy":
            kind = resource["index"]  # the role's name is known after apply only
            policy = json.loads(resource["values"]["policy"])
            arn = f"arn:aws:iam::{ACCOUNT}:role/gi-ci-dev-{kind}"
            roles[kind] = Principal(arn, ((kind, policy),))
    return roles


def _notification_requests(action: str) -> list[Request]:
    return [
        _request(action, f"arn:aws:s3:::{bucket}")
        for bucket in ("example-landing-dev", "example-landing-prod")
    ]


def test_the_deploy_role_configures_notifications_of_the_source_buckets_it_is_given_only(
    dev_deploy, notifying_roles
):
    """modules/s3_notifications' apply writes and reads the source bucket's notification
    configuration: allowed on the bucket terraform/ci names for the environment, refused on
    any other, and refused everywhere when none is named (the committed example)."""
    deploy = notifying_roles["deploy"]
    for action in ("s3:PutBucketNotification", "s3:GetBucketNotification"):
        results = [v.result for v in evaluate(deploy, _notification_requests(action), ACCOUNT)]
        assert results == ["Allowed", "ImplicitlyDenied"], (action, results)
    unnamed = evaluate(dev_deploy, _notification_requests("s3:PutBucketNotification"), ACCOUNT)
    assert {v.result for v in unnamed} == {"ImplicitlyDenied"}
    for plan in ("plan", "pull_request"):
        reads = evaluate(
            notifying_roles[plan], _notification_requests("s3:GetBucketNotification"), ACCOUNT
        )
        writes = evaluate(
            notifying_roles[plan], _notification_requests("s3:PutBucketNotification"), ACCOUNT
        )
        assert [v.result for v in reads] == ["Allowed", "ImplicitlyDenied"], plan
        assert {v.result for v in writes} == {"ImplicitlyDenied"}, plan
