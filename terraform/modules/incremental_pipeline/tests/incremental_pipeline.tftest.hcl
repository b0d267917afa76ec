mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }

  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }

  mock_resource "aws_dynamodb_table" {
    defaults = { arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/glue-watermarks" }
  }

  mock_resource "aws_iam_role" {
    defaults = { arn = "arn:aws:iam::123456789012:role/mock-glue-role" }
  }

  mock_resource "aws_kms_key" {
    defaults = { arn = "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000" }
  }

  mock_resource "aws_s3_bucket" {
    defaults = { arn = "arn:aws:s3:::gi-test-scripts" }
  }

  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/aws-glue/jobs/mock" }
  }

  mock_resource "aws_sns_topic" {
    defaults = { arn = "arn:aws:sns:eu-west-1:123456789012:gi-test-oncall" }
  }
}

variables {
  name_prefix                 = "gi-test"
  deletion_protection_enabled = true
  scripts_bucket_name         = "gi-test-scripts"

  load_job = {
    schedule      = "cron(15 * * * ? *)"
    arguments     = { "--source" = "s3://gi-test-lake/raw/orders/", "--target_path" = "s3://gi-test-lake/curated/orders/" }
    read_s3_uris  = ["s3://gi-test-lake/raw/orders/"]
    write_s3_uris = ["s3://gi-test-lake/curated/orders/"]
  }

  join_job = {
    arguments     = { "--left_path" = "s3://gi-test-lake/curated/orders/", "--target_path" = "s3://gi-test-lake/curated/enriched/" }
    read_s3_uris  = ["s3://gi-test-lake/curated/orders/"]
    write_s3_uris = ["s3://gi-test-lake/curated/enriched/"]
  }

  alarms = {
    schedule_period_seconds         = 3600
    watermark_lag_threshold_seconds = 10800
  }

  oncall_subscriptions = [{ protocol = "email", endpoint = "oncall@example.com" }]
}

run "join_reads_exactly_the_load_jobs_committed_state" {
  assert {
    condition     = module.job["incremental_join"].default_arguments["--upstream_jobs"] == "left=gi-test-incremental-load"
    error_message = "The join's --upstream_jobs must name the load job's state as its left side (side=job)."
  }

  assert {
    condition     = module.job["incremental_load"].state_name == "gi-test-incremental-load" && module.job["incremental_join"].state_name == "gi-test-incremental-join"
    error_message = "Each job writes under its own job name."
  }
}

run "jobs_run_the_deployed_scripts_and_library" {
  assert {
    condition     = module.job["incremental_load"].default_arguments["--extra-py-files"] == "s3://gi-test-scripts/lib/current/glue_incremental.zip"
    error_message = "Jobs must load the library from s3://<bucket>/lib/<version>/glue_incremental.zip."
  }

  assert {
    condition     = module.job["incremental_load"].default_arguments["--TempDir"] == "s3://gi-test-scripts/tmp/gi-test-incremental-load/"
    error_message = "Each job's TempDir must be its own prefix under the expiring tmp/."
  }
}

run "join_is_started_by_the_load_succeeding" {
  assert {
    condition     = output.trigger_names == { "gi-test-incremental-load-schedule" = "gi-test-incremental-load-schedule", "gi-test-incremental-join-after-load" = "gi-test-incremental-join-after-load" }
    error_message = "The load job must be scheduled and the join started by a conditional trigger."
  }

  assert {
    condition     = output.workflow_name == "gi-test-incremental"
    error_message = "The triggers must be grouped in the pipeline's workflow."
  }
}

run "both_jobs_are_alarmed" {
  assert {
    condition     = keys(output.alarm_names) == ["incremental_join", "incremental_load"] && alltrue([for a in values(output.alarm_names) : length(setsubtract(["zero_records", "missed_run", "watermark_stale", "late_files", "null_watermarks", "future_watermarks", "metric_publish_failures"], keys(a))) == 0])
    error_message = "Each job must have its zero-record, missed-run, stale-watermark, late-file, null/future-watermark and metric-publish-failure alarms."
  }
}

run "rejects_a_configured_upstream_jobs_argument" {
  command = plan

  variables {
    join_job = {
      arguments     = { "--upstream_jobs" = "something-else" }
      read_s3_uris  = []
      write_s3_uris = ["s3://gi-test-lake/curated/enriched/"]
    }
  }

  expect_failures = [var.join_job]
}
