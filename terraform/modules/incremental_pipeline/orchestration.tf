# orchestration = "events": dependents start on EventBridge "Glue Job State Change"
# SUCCEEDED events of their upstreams, however those runs were started, so a rerun
# by hand of a failed upstream starts them (modules/glue_event_chain). "triggers":
# Glue conditional triggers (modules/glue_triggers), which fire only for runs a
# trigger started. Exactly one of the two is created for a dependent.
module "event_chain" {
  source = "../glue_event_chain"
  count  = var.triggers_enabled && var.orchestration == "events" && length([for k, ups in local.reach_1 : k if length(ups) > 0]) > 0 ? 1 : 0

  name = var.name_prefix
  dependencies = {
    for k, p in var.pipelines : local.job_names[k] => {
      upstream_job_names = [for u in local.reach_1[k] : local.job_names[u]]
      logical            = p.trigger_logical
    } if length(local.reach_1[k]) > 0
  }
  permissions_boundary_arn = var.permissions_boundary_arn
  tags                     = var.tags

  # The rules may fire as soon as they exist: the jobs they start must exist first.
  depends_on = [module.job]
}
