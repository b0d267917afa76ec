resource "aws_dynamodb_table" "this" {
  name                        = var.name
  billing_mode                = var.billing_mode
  read_capacity               = var.billing_mode == "PROVISIONED" ? var.read_capacity : null
  write_capacity              = var.billing_mode == "PROVISIONED" ? var.write_capacity : null
  deletion_protection_enabled = var.deletion_protection_enabled

  # Fixed by glue_incremental.watermarks: one partition per job or logical
  # pipeline (the state name), so IAM can confine a job to its own items
  # with dynamodb:LeadingKeys.
  hash_key  = "job_name"
  range_key = "sk"

  attribute {
    name = "job_name"
    type = "S"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  # History (HIST#) and run pointers (RUN#) carry `expires_at`, written by the
  # library (glue_incremental.watermarks.keys: EXPIRES_ATTRIBUTE,
  # HISTORY_RETENTION_DAYS); the current state and the lease never do.
  ttl {
    attribute_name = var.history_ttl_enabled ? "expires_at" : ""
    enabled        = var.history_ttl_enabled
  }

  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  # Without the block DynamoDB keeps its default AWS owned key (kms_encryption_enabled false:
  # emulators only).
  dynamic "server_side_encryption" {
    for_each = var.kms_encryption_enabled ? [var.kms_key_arn] : []
    content {
      enabled     = true
      kms_key_arn = server_side_encryption.value
    }
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = var.billing_mode != "PROVISIONED" || (var.read_capacity != null && var.write_capacity != null)
      error_message = "billing_mode PROVISIONED needs both read_capacity and write_capacity."
    }
  }
}
