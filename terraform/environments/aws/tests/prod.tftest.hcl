# terraform test -var-file=prod.tfvars -filter=tests/prod.tftest.hcl
mock_provider "aws" {
  source = "../../testing/aws"
}

run "prod_watermarks_table_refuses_deletion" {
  command = plan

  assert {
    condition     = var.environment == "prod" && output.watermarks_table_deletion_protection_enabled == true
    error_message = "prod must keep deletion protection on the watermarks table: losing it forgets every job's progress."
  }
}

run "prod_pages_on_the_first_empty_hourly_run" {
  command = plan

  assert {
    condition     = var.alarms.schedule_period_seconds == 3600 && var.alarms.zero_records_evaluation_periods == 1 && var.alarms.watermark_lag_threshold_seconds <= 3 * 3600
    error_message = "prod alarms must evaluate hourly, page on the first zero-record run, and call a watermark three hours behind stale."
  }
}

run "prod_loads_run_hourly_and_the_join_after_them" {
  command = plan

  assert {
    condition     = alltrue([for k in ["orders", "customers"] : var.pipelines[k].schedule == "cron(15 * * * ? *)"]) && output.pipelines["orders_enriched"].trigger_name == "gi-prod-orders-enriched-after-upstreams"
    error_message = "prod's loads run hourly at :15 and the join is started by their success."
  }
}
