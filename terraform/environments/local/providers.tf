provider "aws" {
  region = var.region

  # Dummy credentials for an emulator; nothing here can reach real AWS
  # because every service used is redirected below.
  access_key                  = "test" #checkov:skip=CKV_AWS_41:Fixed dummy credentials that only an AWS emulator accepts; no real key.
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true

  endpoints {
    cloudwatch     = var.aws_endpoint_url
    cloudwatchlogs = var.aws_endpoint_url
    dynamodb       = coalesce(var.dynamodb_endpoint_url, var.aws_endpoint_url)
    events         = var.aws_endpoint_url
    glue           = coalesce(var.glue_endpoint_url, var.aws_endpoint_url)
    iam            = var.aws_endpoint_url
    kms            = var.aws_endpoint_url
    s3             = var.aws_endpoint_url
    secretsmanager = var.aws_endpoint_url
    sns            = var.aws_endpoint_url
    sqs            = var.aws_endpoint_url
    sts            = var.aws_endpoint_url
  }

  # No default_tags: with skip_requesting_account_id the provider builds Glue
  # ARNs without an account id, cannot read Glue tags back, and every plan
  # would then want to re-tag the jobs, triggers and workflow.
}
