environment                 = "prod"
region                      = "eu-west-1"
name_prefix                 = "gi-prod"
watermarks_table_name       = "glue-watermarks"
scripts_bucket_name         = "example-gi-prod-scripts"
deletion_protection_enabled = true

load_job = {
  # Hourly at :15, after the upstream hourly drop has landed.
  schedule          = "cron(15 * * * ? *)"
  worker_type       = "G.2X"
  number_of_workers = 10
  timeout           = 45
  max_retries       = 1
  arguments = {
    "--source"           = "s3://example-gi-prod-lake/raw/orders/"
    "--source_table"     = "orders"
    "--source_format"    = "parquet"
    "--watermark_column" = "updated_at"
    "--primary_key"      = "order_id"
    "--target_path"      = "s3://example-gi-prod-lake/curated/orders/"
    "--partition_by"     = "order_date"
    "--lookback"         = "3600"
  }
  read_s3_uris  = ["s3://example-gi-prod-lake/raw/orders/"]
  write_s3_uris = ["s3://example-gi-prod-lake/curated/orders/"]
}

join_job = {
  worker_type       = "G.2X"
  number_of_workers = 10
  timeout           = 45
  max_retries       = 1
  arguments = {
    "--left_path"    = "s3://example-gi-prod-lake/curated/orders/"
    "--right_path"   = "s3://example-gi-prod-lake/raw/customers/"
    "--join_keys"    = "customer_id"
    "--join_type"    = "left"
    "--partition_by" = "order_date"
    "--target_path"  = "s3://example-gi-prod-lake/curated/orders_enriched/"
  }
  read_s3_uris  = ["s3://example-gi-prod-lake/curated/orders/", "s3://example-gi-prod-lake/raw/customers/"]
  write_s3_uris = ["s3://example-gi-prod-lake/curated/orders_enriched/"]
}

alarms = {
  schedule_period_seconds = 3600
  # Three hours: two missed or empty hourly loads in a row.
  watermark_lag_threshold_seconds = 10800
  missed_run_grace_seconds        = 900
  zero_records_evaluation_periods = 1
}

oncall_subscriptions = [
  { protocol = "https", endpoint = "https://events.pagerduty.example.com/integration/glue-incremental/enqueue" },
  { protocol = "email", endpoint = "data-platform-oncall@example.com" },
]
