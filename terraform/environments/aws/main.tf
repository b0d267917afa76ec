module "pipeline" {
  source = "../../modules/incremental_pipeline"

  name_prefix                 = var.name_prefix
  watermarks_table_name       = var.watermarks_table_name
  deletion_protection_enabled = var.deletion_protection_enabled
  scripts_bucket_name         = var.scripts_bucket_name
  pipelines                   = var.pipelines
  networks                    = var.networks
  alarms                      = var.alarms
  runbook_base_url            = var.runbook_base_url
  oncall_subscriptions        = var.oncall_subscriptions
  oncall_state                = var.state
  encryption                  = var.encryption
  permissions_boundary_arn    = var.permissions_boundary_arn

  # A rerun by hand of a failed upstream starts its dependents (docs/runbook.md).
  orchestration = "events"

  # docs/releases.md: jobs run one immutable release; only CI's publish role writes code.
  release                  = var.release
  scripts_writer_role_arns = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${coalesce(var.publish_role_name, "gi-ci-${var.environment}-publish")}"]
  # The keys name the role that applies them: its identity policy administers no key.
  key_admin_role_arns = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${coalesce(var.deploy_role_name, "gi-ci-${var.environment}-deploy")}"]
}

data "aws_partition" "current" {}
data "aws_caller_identity" "current" {}
