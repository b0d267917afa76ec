data "aws_caller_identity" "current" {}

locals {
  # From the variable, not the bucket resource, so the pipelines' arguments
  # are known before apply (terraform console, the environment contract test).
  data = "s3://${var.data_bucket_name}"

  # The orders load, into Parquet (`orders`) and into Iceberg (`orders_iceberg`). The
  # source is CDC-shaped: `op` = D marks a deleted order, which leaves the target. The
  # files are JSON, as the demo and `make up` land them: `run JOB_NAME` needs no arguments.
  orders_load = {
    kind             = "load"
    schedule         = var.load_schedule
    source           = { uri = "${local.data}/raw/orders/", format = "json" }
    watermark_column = "updated_at"
    primary_key      = ["order_id"]
    arguments        = { "--lookback" = "0", "--delete_marker" = "op=D" }
  }

  # The demo's daily customer snapshots: the join's side (`customers`) and a dimension
  # with history (`customers_history`) load the same files.
  customers_load = {
    kind             = "load"
    schedule         = var.load_schedule
    source           = { uri = "${local.data}/raw/customers/", format = "json" }
    watermark_column = "updated_at"
    arguments        = { "--lookback" = "0" }
  }

  # A JDBC load when a database is given (tests: PostgreSQL, its secret in
  # LocalStack's Secrets Manager); none otherwise, so the demo needs no database.
  jdbc_pipelines = var.jdbc_source == null ? {} : {
    payments = {
      kind             = "load"
      schedule         = var.load_schedule
      source           = { uri = var.jdbc_source.uri, table = var.jdbc_source.table }
      watermark_column = "updated_at"
      primary_key      = ["payment_id"]
      arguments        = { "--lookback" = "0" }
      secret_arn       = var.jdbc_source.secret_arn
      target           = { path = "${local.data}/curated/payments/" }
    }
  }

  # Two loads feeding a join: the chain the demo runs and `status` shows; the customers
  # again with history; and an Iceberg load of the same orders.
  pipelines = {
    orders = merge(local.orders_load, {
      target = {
        path       = "${local.data}/curated/orders/"
        partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
      }
    })
    # A daily snapshot of the customers, partitioned like the orders: the join is
    # maintained per partition, so both of its sides carry order_date.
    customers = merge(local.customers_load, {
      primary_key = ["customer_id", "order_date"]
      target = {
        path       = "${local.data}/curated/customers/"
        partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
      }
    })
    # The same customer snapshots kept as a dimension with history (docs/history.md): one
    # row per version of a customer, a new version when its segment changes. A pipeline of
    # its own: a join side cannot have history (the join would match every version).
    customers_history = merge(local.customers_load, {
      primary_key = ["customer_id"]
      history     = { columns = ["segment"] }
      target      = { path = "${local.data}/curated/customers_history/" }
    })
    # The same orders into an Iceberg table: its job creates <database>.orders_iceberg
    # under this warehouse on its first run, one snapshot per run; the demo rewinds it.
    orders_iceberg = merge(local.orders_load, {
      target = { format = "iceberg", path = "${local.data}/iceberg/", partitions = [{ name = "order_date" }] }
    })
    orders_enriched = {
      kind = "join"
      join = {
        left  = { pipeline = "orders" }
        right = { pipeline = "customers" }
        keys  = ["customer_id"]
        type  = "left"
      }
      target = {
        path       = "${local.data}/curated/orders_enriched/"
        partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
      }
    }
    # Daily revenue per customer, recomputing only the days an orders run touched:
    # the custom script of glue_scripts/, triggered when the orders job succeeds.
    # The orders load infers its JSON source, so `amount` lands as a double here.
    daily_revenue = {
      kind      = "custom"
      script    = "aggregate_daily_revenue"
      sources   = { orders = { pipeline = "orders", upstream_argument = "upstream_job" } }
      arguments = { "--day_column" = "order_date", "--amount_type" = "double" }
      target    = { path = "${local.data}/marts/daily_revenue/", partitions = [{ name = "day" }] }
    }
  }
}

resource "aws_s3_bucket" "data" {
  #checkov:skip=CKV_AWS_18:Emulator-only demo bucket, recreated on every run.
  #checkov:skip=CKV_AWS_144:Emulator-only demo bucket, recreated on every run.
  #checkov:skip=CKV_AWS_145:Emulator-only demo bucket; S3A cannot copy SSE-KMS objects over the emulator's plain HTTP (see aws_kms_key.lake).
  #checkov:skip=CKV2_AWS_62:Emulator-only demo bucket; nothing consumes its events.
  #checkov:skip=CKV2_AWS_61:Emulator-only demo bucket, destroyed with the environment.
  #checkov:skip=CKV2_AWS_6:Emulator-only demo bucket; the emulator has no public access.
  #checkov:skip=CKV_AWS_21:Emulator-only demo bucket; versioning would only slow destroy.
  bucket        = var.data_bucket_name
  force_destroy = true
}

# The lake's customer managed key, granted to the jobs (data_kms_key_arns) as in
# AWS, where dev and prod create theirs through `encryption`. Sources written
# SSE-KMS with it are read by the jobs (tests/terraform/test_terraform_local.py). The
# bucket has no SSE-KMS default: S3A (AWS SDK v1) refuses to copy SSE-KMS
# objects over LocalStack's plain-HTTP endpoint ("HTTPS must be used"), and its
# commit renames are copies. LocalStack enforces no key policy or IAM grant.
resource "aws_kms_key" "lake" {
  #checkov:skip=CKV2_AWS_64:Emulator-only key; LocalStack enforces no key policy, and dev/prod keys (modules/kms_key) carry theirs.
  description             = "Encrypts ${var.name_prefix}'s lake sources (emulator)."
  enable_key_rotation     = true
  deletion_window_in_days = 7
}

module "pipeline" {
  source = "../../modules/incremental_pipeline"

  name_prefix                    = var.name_prefix
  watermarks_table_name          = var.watermarks_table_name
  deletion_protection_enabled    = false
  point_in_time_recovery_enabled = var.point_in_time_recovery_enabled
  # DynamoDB Local does not describe SSE back: `make apply` re-applies to the running stack.
  watermarks_kms_encryption_enabled = false
  scripts_bucket_name               = var.scripts_bucket_name
  scripts_bucket_force_destroy      = true
  data_kms_key_arns                 = [aws_kms_key.lake.arn]
  release                           = var.release

  pipelines = merge(local.pipelines, local.jdbc_pipelines)

  alarms = {
    schedule_period_seconds         = var.alarm_period_seconds
    watermark_lag_threshold_seconds = 7200
  }

  oncall_subscriptions = [{ protocol = "sqs", endpoint = aws_sqs_queue.pages.arn, raw_message_delivery = true }]

  job_run_queuing_enabled = var.job_run_queuing_enabled
  triggers_enabled        = var.triggers_enabled
  dashboard_enabled       = var.dashboard_enabled
  # Athena tags are read back by ARN, which has no account id here (see README).
  athena_workgroup_enabled = false
  failure_events_enabled   = var.failure_events_enabled
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
