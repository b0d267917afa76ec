"""terraform/modules/watermarks_table, applied for real: the library works on the table it creates."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from glue_incremental import aws
from glue_incremental.watermarks import EXPIRES_ATTRIBUTE, Watermarks

from tests.harness.terraform import (
    DYNAMODB_LOCAL_GAPS,
    TERRAFORM,
    changed_attributes,
    tf,
)

pytestmark = pytest.mark.terraform

ROOT_MODULE = """
terraform {{
  required_providers {{
    aws = {{ source = "hashicorp/aws" }}
  }}
}}

provider "aws" {{
  region                      = "us-east-1"
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  endpoints {{
    dynamodb = "{dynamodb}"
    sts      = "{sts}"
  }}
}}

module "watermarks" {{
  source                      = "{module}"
  name                        = "{table}"
  deletion_protection_enabled = false
  # DynamoDB Local has no UpdateContinuousBackups.
  point_in_time_recovery_enabled = false
}}

output "name" {{ value = module.watermarks.name }}
"""


def test_the_library_works_on_the_table_the_module_creates_and_a_second_plan_is_empty(
    endpoint, tmp_path
):
    endpoint.reset()
    table = "glue-watermarks-module-test"
    (tmp_path / "main.tf").write_text(
        ROOT_MODULE.format(
            dynamodb=endpoint.dynamodb_url,
            sts=endpoint.localstack_url,
            module=TERRAFORM / "modules" / "watermarks_table",
            table=table,
        )
    )
    tf(tmp_path, "init", "-no-color")
    tf(tmp_path, "apply", "-auto-approve", "-no-color")
    try:
        assert tf(tmp_path, "output", "-raw", "name").stdout.strip() == table
        ttl = aws.client("dynamodb").describe_time_to_live(TableName=table)
        assert ttl["TimeToLiveDescription"]["TimeToLiveStatus"] == "ENABLED"
        assert ttl["TimeToLiveDescription"]["AttributeName"] == EXPIRES_ATTRIBUTE

        store = Watermarks(table)
        assert store.get_watermark("orders") is None
        moment = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
        store.add_watermark(store.create_watermark_item("orders", "jr_1", last_modified=moment))
        assert store.get_watermark("orders")["watermarks"]["last_modified"] == moment

        plan = tf(tmp_path, "plan", "-no-color", "-out=second.tfplan", check=False)
        assert plan.returncode == 0, plan.stdout[-4000:]
        shown = json.loads(tf(tmp_path, "show", "-json", "second.tfplan").stdout)
        changes = changed_attributes(shown)
        # DynamoDB Local never describes server-side encryption back: the one allowed difference.
        assert all(attributes <= DYNAMODB_LOCAL_GAPS for attributes in changes.values()), changes
    finally:
        tf(tmp_path, "destroy", "-auto-approve", "-no-color")
