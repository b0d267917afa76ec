provider "aws" {
  region = var.region

  default_tags {
    tags = { Project = "glue-incremental", ManagedBy = "terraform", Purpose = "ci" }
  }
}

# The account's GitHub OIDC provider, unless it exists already.
resource "aws_iam_openid_connect_provider" "github" {
  count = var.oidc_provider_arn == null ? 1 : 0

  url            = "https://token.actions.githubusercontent.com"
  client_id_list = ["sts.amazonaws.com"]
}

module "roles" {
  source   = "../modules/ci_roles"
  for_each = var.environments

  github_repository        = var.github_repository
  environment              = each.key
  github_environment       = each.value.github_environment
  oidc_provider_arn        = coalesce(var.oidc_provider_arn, try(aws_iam_openid_connect_provider.github[0].arn, null))
  pull_request_plan_role   = true
  name_prefix              = each.value.name_prefix
  state                    = each.value.state
  scripts_bucket_name      = each.value.scripts_bucket_name
  watermarks_table_name    = each.value.watermarks_table_name
  permissions_boundary_arn = var.permissions_boundary_arn
  # Pipelines with source.notifications: their source buckets (modules/s3_notifications).
  notification_source_buckets = each.value.notification_source_buckets
}
