environment                 = "prod"
region                      = "eu-west-1"
name_prefix                 = "gi-prod"
watermarks_table_name       = "glue-watermarks-prod"
scripts_bucket_name         = "example-gi-prod-scripts"
deletion_protection_enabled = true

pipelines = {
  orders = {
    kind             = "load"
    schedule         = "cron(15 * * * ? *)"
    source           = { uri = "s3://example-gi-prod-lake/raw/orders/", format = "parquet" }
    watermark_column = "updated_at"
    primary_key      = ["order_id"]
    arguments        = { "--lookback" = "1 hour" }
    target = {
      path = "s3://example-gi-prod-lake/curated/orders/"
      columns = [
        { name = "order_id", type = "bigint" },
        { name = "customer_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "updated_at", type = "timestamp" },
      ]
      partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
    }
    # No retries: Glue queues only runs of jobs without retries, and a queued
    # hourly run that waits beats a retried one that fails the next run's start
    # (docs/aws-limits.md). A failed run pages; the next hourly run re-reads
    # from the committed watermark, so nothing is lost.
    size = { worker_type = "G.2X", number_of_workers = 10, timeout = 45, max_retries = 0 }
  }

  customers = {
    kind             = "load"
    schedule         = "cron(15 * * * ? *)"
    source           = { uri = "s3://example-gi-prod-lake/raw/customers/", format = "json" }
    watermark_column = "updated_at"
    primary_key      = ["customer_id"]
    arguments        = { "--lookback" = "1 hour", "--partition_moves" = "ignore" }
    target = {
      path = "s3://example-gi-prod-lake/curated/customers/"
      columns = [
        { name = "customer_id", type = "bigint" },
        { name = "name", type = "string" },
        { name = "updated_at", type = "timestamp" },
      ]
    }
  }

  # Runs when both loads SUCCEEDED; reads their targets and committed states.
  orders_enriched = {
    kind = "join"
    join = {
      left  = { pipeline = "orders" }
      right = { pipeline = "customers" }
      keys  = ["customer_id"]
      type  = "left"
    }
    target = {
      path = "s3://example-gi-prod-lake/curated/orders_enriched/"
      columns = [
        { name = "customer_id", type = "bigint" },
        { name = "order_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "name", type = "string" },
      ]
      partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
    }
    # No retries: Glue queues only runs of jobs without retries, and a queued
    # hourly run that waits beats a retried one that fails the next run's start
    # (docs/aws-limits.md). A failed run pages; the next hourly run re-reads
    # from the committed watermark, so nothing is lost.
    size = { worker_type = "G.2X", number_of_workers = 10, timeout = 45, max_retries = 0 }
  }
}

# Hourly loads at :15, after the upstream hourly drop has landed.
alarms = {
  schedule_period_seconds = 3600
  # Three hours: two missed or empty hourly loads in a row.
  watermark_lag_threshold_seconds = 10800
  missed_run_grace_seconds        = 900
  zero_records_evaluation_periods = 1
}

# Customer managed keys for the lake, the watermarks table, the scripts bucket and
# the job logs, used by exactly the jobs' roles; S3 writes and bookmarks under a Glue
# security configuration. The CI publish role is a scripts key user by itself
# (scripts_writer_role_arns); add operators' roles to key_users.table.
encryption = {
  create_keys            = true
  security_configuration = { create = true }
}

oncall_subscriptions = [
  { protocol = "https", endpoint = "https://events.pagerduty.example.com/integration/glue-incremental/enqueue" },
  { protocol = "email", endpoint = "data-platform-oncall@example.com" },
]

# The state prod.backend.hcl names (the same bucket and key): the on-call role reads its
# outputs for `status --env prod` (docs/runbook.md).
state = {
  bucket = "example-terraform-state-prod"
  key    = "glue-incremental/prod/terraform.tfstate"
}
