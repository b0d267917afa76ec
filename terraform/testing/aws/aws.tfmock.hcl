# Shared by every .tftest.hcl that plans or applies against a mocked AWS
# provider: `mock_provider "aws" { source = "<relative path to this dir>" }`.
# Values are only those whose shape the modules check or parse (ARNs, names).

mock_data "aws_partition" {
  defaults = { partition = "aws" }
}

mock_data "aws_region" {
  defaults = { name = "eu-west-1" }
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
  defaults = { arn = "arn:aws:sns:eu-west-1:123456789012:mock-oncall" }
}

mock_resource "aws_sqs_queue" {
  defaults = { arn = "arn:aws:sqs:eu-west-1:123456789012:mock-pages" }
}

mock_resource "aws_cloudwatch_metric_alarm" {
  defaults = { arn = "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:mock" }
}

# modules/glue_network: the VPC's CIDR and the ids its rules and endpoints reference.
mock_data "aws_vpc" {
  defaults = { cidr_block = "10.20.0.0/16" }
}

mock_data "aws_vpc_endpoint" {
  defaults = { prefix_list_id = "pl-0123456789abcdef0" }
}

mock_resource "aws_vpc_endpoint" {
  defaults = { prefix_list_id = "pl-0123456789abcdef1" }
}

mock_resource "aws_security_group" {
  defaults = { id = "sg-0123456789abcdef0" }
}
