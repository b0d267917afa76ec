environment                 = "dev"
region                      = "eu-west-1"
name_prefix                 = "gi-dev"
watermarks_table_name       = "glue-watermarks"
scripts_bucket_name         = "example-gi-dev-scripts"
deletion_protection_enabled = false

load_job = {
  # Daily at 06:00 UTC: dev only needs fresh-enough data to test against.
  schedule = "cron(0 6 * * ? *)"
  arguments = {
    "--source"           = "s3://example-gi-dev-lake/raw/orders/"
    "--source_table"     = "orders"
    "--source_format"    = "parquet"
    "--watermark_column" = "updated_at"
    "--primary_key"      = "order_id"
    "--target_path"      = "s3://example-gi-dev-lake/curated/orders/"
    "--partition_by"     = "order_date"
    "--lookback"         = "3600"
  }
  read_s3_uris  = ["s3://example-gi-dev-lake/raw/orders/"]
  write_s3_uris = ["s3://example-gi-dev-lake/curated/orders/"]
}

join_job = {
  arguments = {
    "--left_path"    = "s3://example-gi-dev-lake/curated/orders/"
    "--right_path"   = "s3://example-gi-dev-lake/raw/customers/"
    "--join_keys"    = "customer_id"
    "--join_type"    = "left"
    "--partition_by" = "order_date"
    "--target_path"  = "s3://example-gi-dev-lake/curated/orders_enriched/"
  }
  read_s3_uris  = ["s3://example-gi-dev-lake/curated/orders/", "s3://example-gi-dev-lake/raw/customers/"]
  write_s3_uris = ["s3://example-gi-dev-lake/curated/orders_enriched/"]
}

alarms = {
  schedule_period_seconds = 86400
  # Two days: one missed dev run is not worth a page.
  watermark_lag_threshold_seconds = 172800
  missed_run_grace_seconds        = 7200
  zero_records_evaluation_periods = 2
}

oncall_subscriptions = [
  { protocol = "email", endpoint = "data-platform-dev@example.com" },
]
