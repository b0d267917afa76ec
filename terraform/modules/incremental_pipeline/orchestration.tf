# orchestration = "events": dependents start on EventBridge "Glue Job State Change"
# SUCCEEDED events of their upstreams, however those runs were started, so a rerun
# by hand of a failed upstream starts them (modules/glue_event_chain). "triggers":
# Glue conditional triggers (modules/glue_triggers), which fire only for runs a
# trigger started. Exactly one of the two is created for a dependent.
locals {
  event_chain_enabled = var.triggers_enabled && var.orchestration == "events" && length([for k, ups in local.reach_1 : k if length(ups) > 0]) > 0
}

module "event_chain" {
  source = "../glue_event_chain"
  count  = local.event_chain_enabled ? 1 : 0

  name = var.name_prefix
  dependencies = {
    for k, p in var.pipelines : local.job_names[k] => {
      upstream_job_names = [for u in local.reach_1[k] : local.job_names[u]]
      logical            = p.trigger_logical
    } if length(local.reach_1[k]) > 0
  }
  alarm_topic_arn          = module.oncall.topic_arn
  event_retry              = var.event_retry
  log_retention_days       = var.log_retention_days
  log_kms_key_arn          = local.logs_key_arn
  runbook_base_url         = var.runbook_base_url
  permissions_boundary_arn = var.permissions_boundary_arn
  tags                     = var.tags

  # The rules may fire as soon as they exist: the jobs they start must exist first.
  depends_on = [module.job]
}
