# Every environment's promises, in one file planned once per var file:
#   terraform test -var-file=dev.tfvars  (and -var-file=prod.tfvars)
# What differs between dev and prod is stated here as data, not as a second copy.
mock_provider "aws" {
  source = "../../testing/aws"
}

# CI passes the commit's release (-var release=...); any well-formed id plans the same.
variables {
  release = "0123456789abcdef"
}

run "only_prod_protects_the_watermarks_table_from_deletion" {
  command = plan

  assert {
    condition     = output.platform.watermarks_table_deletion_protection_enabled == (var.environment == "prod")
    error_message = "prod must keep deletion protection on the watermarks table (losing it forgets every job's progress); dev is disposable and keeps it off."
  }
}

run "dev_tolerates_an_empty_run_and_prod_pages_on_the_first_empty_hourly_run" {
  command = plan

  assert {
    condition = (var.environment == "prod"
      ? var.alarms.schedule_period_seconds == 3600 && var.alarms.zero_records_evaluation_periods == 1 && var.alarms.watermark_lag_threshold_seconds <= 3 * 3600
      : var.alarms.zero_records_evaluation_periods > 1 && var.alarms.watermark_lag_threshold_seconds > 3 * 3600
    )
    error_message = "prod alarms evaluate hourly, page on the first zero-record run and call a watermark three hours behind stale; dev alarms tolerate a missed or empty run."
  }
}

run "two_loads_feed_a_join_started_by_their_success" {
  command = plan

  assert {
    condition     = length(output.platform.pipelines) >= 3 && length(output.platform.pipelines["orders_enriched"].upstreams) == 2 && output.platform.pipelines["orders_enriched"].trigger_name == "${var.name_prefix}-orders-enriched-upstream-succeeded"
    error_message = "every environment carries at least three pipelines: two loads feeding a join that their success starts, however their runs were started (the join's EventBridge rule, orchestration = events)."
  }
}

run "loads_run_daily_in_dev_and_hourly_in_prod" {
  command = plan

  assert {
    condition     = alltrue([for k in ["orders", "customers"] : var.pipelines[k].schedule == (var.environment == "prod" ? "cron(15 * * * ? *)" : "cron(0 6 * * ? *)")])
    error_message = "the loads run at 06:00 UTC in dev and hourly at :15 in prod."
  }
}

run "dev_aggregates_daily_revenue_when_orders_succeeds" {
  command = plan

  assert {
    # try(): prod has no daily_revenue, and `||` does not short-circuit.
    condition = (var.environment != "dev" || try(
      one(output.platform.pipelines["daily_revenue"].upstreams) == "orders"
      # dev orchestrates by events: the EventBridge rule on the upstream's success starts it.
      && output.platform.pipelines["daily_revenue"].trigger_name == "${var.name_prefix}-daily-revenue-upstream-succeeded"
      && output.platform.pipelines["daily_revenue"].arguments["--orders_path"] == var.pipelines["orders"].target.path
      && output.platform.pipelines["daily_revenue"].arguments["--day_column"] == var.pipelines["orders"].target.partitions[0].name,
      false
    ))
    error_message = "dev runs the custom aggregation daily_revenue on the orders target, partitioned as orders is, started by the orders job's success."
  }
}

run "dev_labels_payments_with_a_custom_job_reading_the_shop_database_as_the_jdbc_load_does" {
  command = plan

  assert {
    # try(): prod has no payments_labelled, and `||` does not short-circuit.
    condition = (var.environment != "dev" || try(
      output.platform.pipelines["payments_labelled"].script == "label_payments"
      && output.platform.pipelines["payments_labelled"].arguments["--payments_url"] == var.pipelines["payments"].source.uri
      && output.platform.pipelines["payments_labelled"].arguments["--payments_table"] == var.pipelines["payments"].source.table
      && output.platform.pipelines["payments_labelled"].run_arguments["--source_secret_id"] == var.pipelines["payments"].secret_arn
      && output.platform.pipelines["payments_labelled"].connections == var.pipelines["payments"].connections
      && length(output.platform.pipelines["payments_labelled"].read_s3_uris) == 0,
      false
    ))
    error_message = "dev runs the custom job payments_labelled on the shop database the payments load reads, with the same secret and connection, reading no S3 source."
  }
}
