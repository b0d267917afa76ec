# Plans prod's own terraform.tfvars against a mocked provider: no credentials
# and no network, but the real composition and the real values.
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
    defaults = { arn = "arn:aws:s3:::mock-bucket" }
  }

  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/aws-glue/jobs/mock" }
  }

  mock_resource "aws_sns_topic" {
    defaults = { arn = "arn:aws:sns:eu-west-1:123456789012:gi-prod-oncall" }
  }
}

run "prod_watermarks_table_refuses_deletion" {
  assert {
    condition     = output.watermarks_table_deletion_protection_enabled == true
    error_message = "prod must keep deletion protection on the watermarks table: losing it forgets every job's progress."
  }
}

run "prod_pages_on_the_first_empty_hourly_run" {
  assert {
    condition     = var.alarms.schedule_period_seconds == 3600 && var.alarms.zero_records_evaluation_periods == 1
    error_message = "prod alarms must evaluate hourly and page on the first zero-record run."
  }

  assert {
    condition     = var.alarms.watermark_lag_threshold_seconds <= 3 * 3600
    error_message = "prod's stale-watermark threshold must not exceed three hours."
  }
}

run "prod_has_an_hourly_schedule" {
  assert {
    condition     = var.load_job.schedule == "cron(15 * * * ? *)"
    error_message = "prod's load job runs hourly at :15."
  }
}
