mock_provider "aws" {}

run "key_schema_matches_the_library_contract" {
  assert {
    condition     = aws_dynamodb_table.this.name == "glue-watermarks" && aws_dynamodb_table.this.hash_key == "job_name" && aws_dynamodb_table.this.range_key == "sk"
    error_message = "glue_incremental.watermarks expects table glue-watermarks keyed job_name (hash) and sk (range)."
  }

  assert {
    condition     = aws_dynamodb_table.this.attribute == toset([{ name = "job_name", type = "S" }, { name = "sk", type = "S" }])
    error_message = "Both key attributes are strings, and no other attribute is declared (no GSI)."
  }

  assert {
    condition     = aws_dynamodb_table.this.billing_mode == "PAY_PER_REQUEST"
    error_message = "The table must default to on-demand billing."
  }
}

run "protected_recoverable_and_encrypted_by_default" {
  assert {
    condition     = aws_dynamodb_table.this.deletion_protection_enabled == true
    error_message = "Deletion protection must default to on."
  }

  assert {
    condition     = aws_dynamodb_table.this.point_in_time_recovery[0].enabled == true
    error_message = "Point-in-time recovery must default to on."
  }

  assert {
    condition     = aws_dynamodb_table.this.server_side_encryption[0].enabled == true
    error_message = "Server-side encryption with KMS must be on."
  }
}

run "uses_a_customer_key_and_provisioned_capacity_when_asked" {
  variables {
    kms_key_arn    = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    billing_mode   = "PROVISIONED"
    read_capacity  = 5
    write_capacity = 5
  }

  assert {
    condition     = aws_dynamodb_table.this.server_side_encryption[0].kms_key_arn == "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    error_message = "The customer managed key must be used for encryption."
  }

  assert {
    condition     = aws_dynamodb_table.this.read_capacity == 5 && aws_dynamodb_table.this.write_capacity == 5
    error_message = "Provisioned capacities must be applied."
  }
}

run "rejects_provisioned_billing_without_capacities" {
  command = plan

  variables {
    billing_mode = "PROVISIONED"
  }

  expect_failures = [aws_dynamodb_table.this]
}

run "rejects_malformed_kms_key_and_capacity" {
  command = plan

  variables {
    kms_key_arn   = "alias/aws/dynamodb"
    read_capacity = 0
  }

  expect_failures = [var.kms_key_arn, var.read_capacity]
}

run "history_items_expire_by_the_librarys_attribute" {
  assert {
    condition     = aws_dynamodb_table.this.ttl[0].enabled == true && aws_dynamodb_table.this.ttl[0].attribute_name == "expires_at"
    error_message = "TTL must be on, on expires_at (glue_incremental.watermarks.EXPIRES_ATTRIBUTE), which only HIST# and RUN# items carry."
  }
}
