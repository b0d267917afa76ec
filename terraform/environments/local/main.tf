data "aws_caller_identity" "current" {}

locals {
  data = "s3://${aws_s3_bucket.data.bucket}"
}

resource "aws_s3_bucket" "data" {
  #checkov:skip=CKV_AWS_18:Emulator-only demo bucket, recreated on every run.
  #checkov:skip=CKV_AWS_144:Emulator-only demo bucket, recreated on every run.
  #checkov:skip=CKV_AWS_145:Emulator-only demo bucket; the emulator does not encrypt anyway.
  #checkov:skip=CKV2_AWS_62:Emulator-only demo bucket; nothing consumes its events.
  #checkov:skip=CKV2_AWS_61:Emulator-only demo bucket, destroyed with the environment.
  #checkov:skip=CKV2_AWS_6:Emulator-only demo bucket; the emulator has no public access.
  #checkov:skip=CKV_AWS_21:Emulator-only demo bucket; versioning would only slow destroy.
  bucket        = var.data_bucket_name
  force_destroy = true
}

module "pipeline" {
  source = "../../modules/incremental_pipeline"

  name_prefix                    = var.name_prefix
  watermarks_table_name          = var.watermarks_table_name
  deletion_protection_enabled    = false
  point_in_time_recovery_enabled = var.point_in_time_recovery_enabled
  scripts_bucket_name            = var.scripts_bucket_name
  scripts_bucket_force_destroy   = true

  load_job = {
    schedule = var.load_schedule
    arguments = {
      "--source"           = "${local.data}/raw/orders/"
      "--source_table"     = "orders"
      "--source_format"    = "parquet"
      "--watermark_column" = "updated_at"
      "--primary_key"      = "order_id"
      "--target_path"      = "${local.data}/curated/orders/"
      "--partition_by"     = "order_date"
      "--lookback"         = "0"
    }
    read_s3_uris  = ["${local.data}/raw/orders/"]
    write_s3_uris = ["${local.data}/curated/orders/"]
  }

  join_job = {
    arguments = {
      "--left_path"    = "${local.data}/curated/orders/"
      "--right_path"   = "${local.data}/raw/customers/"
      "--join_keys"    = "customer_id"
      "--join_type"    = "left"
      "--partition_by" = "order_date"
      "--target_path"  = "${local.data}/curated/orders_enriched/"
    }
    read_s3_uris  = ["${local.data}/curated/orders/", "${local.data}/raw/customers/"]
    write_s3_uris = ["${local.data}/curated/orders_enriched/"]
  }

  alarms = {
    schedule_period_seconds         = var.alarm_period_seconds
    watermark_lag_threshold_seconds = 7200
  }

  oncall_subscriptions = [{ protocol = "sqs", endpoint = aws_sqs_queue.pages.arn, raw_message_delivery = true }]

  job_run_queuing_enabled = var.job_run_queuing_enabled
  triggers_enabled        = var.triggers_enabled
  workflow_enabled        = var.workflow_enabled
  failure_events_enabled  = var.failure_events_enabled
}

# Stands in for the pager: tests and the demo read pages from this queue.
resource "aws_sqs_queue" "pages" {
  name                    = "${var.name_prefix}-oncall-pages"
  sqs_managed_sse_enabled = true

  # Inline rather than aws_sqs_queue_policy: the provider waits ~25 s for
  # each queue attribute write to settle, and one write is half the wait.
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "OncallTopicDelivers"
        Effect    = "Allow"
        Principal = { Service = "sns.amazonaws.com" }
        Action    = "sqs:SendMessage"
        Resource  = "arn:aws:sqs:${var.region}:${data.aws_caller_identity.current.account_id}:${var.name_prefix}-oncall-pages"
        Condition = { ArnEquals = { "aws:SourceArn" = module.pipeline.oncall_topic_arn } }
      },
    ]
  })
}
