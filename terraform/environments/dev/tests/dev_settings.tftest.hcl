# Plans dev's own terraform.tfvars against a mocked provider.
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
    defaults = { arn = "arn:aws:sns:eu-west-1:123456789012:gi-dev-oncall" }
  }
}

run "dev_watermarks_table_can_be_torn_down" {
  assert {
    condition     = output.watermarks_table_deletion_protection_enabled == false
    error_message = "dev is disposable: deletion protection stays off so the environment can be destroyed."
  }
}

run "dev_alarms_are_looser_than_prod" {
  assert {
    condition     = var.alarms.zero_records_evaluation_periods > 1 && var.alarms.watermark_lag_threshold_seconds > 3 * 3600
    error_message = "dev alarms should tolerate a missed or empty run before paging."
  }
}
