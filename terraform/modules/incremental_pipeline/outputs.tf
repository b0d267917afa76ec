locals {
  # What an environment publishes for deploy, status and the demo. Environments
  # re-export it whole as their `platform` output, so no output is declared twice.
  platform = {
    watermarks_table_name                        = module.watermarks_table.name
    watermarks_table_deletion_protection_enabled = module.watermarks_table.deletion_protection_enabled
    scripts_bucket_name                          = module.scripts_bucket.bucket_name
    job_names                                    = { for k, j in module.job : k => j.job_name }
    catalog_database_name                        = aws_glue_catalog_database.this.name
    athena_workgroup_name                        = try(aws_athena_workgroup.this[0].name, null)
    dashboard_name                               = try(aws_cloudwatch_dashboard.this[0].dashboard_name, null)
    oncall_topic_arn                             = module.oncall.topic_arn
    alarm_names                                  = { for k, a in module.alarms : k => a.alarm_names }
    pipelines = {
      for k, p in var.pipelines : k => {
        kind          = p.kind
        job_name      = local.jobs[k].name
        state_name    = module.job[k].state_name
        upstreams     = local.upstreams[k]
        script        = local.jobs[k].script
        arguments     = local.jobs[k].arguments
        run_arguments = module.job[k].run_arguments
        read_s3_uris  = local.jobs[k].read_s3_uris
        write_s3_uris = local.jobs[k].write_s3_uris
        secret_arn    = p.secret_arn
        connections   = local.pipeline_connections[k]
        target_path   = local.target_paths[k]
        table         = "${local.database_name}.${local.target_tables[k]}"
        alarm_names   = module.alarms[k].alarm_names
        trigger_name  = var.triggers_enabled ? (length(local.upstreams[k]) == 0 ? "${local.job_names[k]}-schedule" : var.orchestration == "events" ? "${local.job_names[k]}-upstream-succeeded" : "${local.job_names[k]}-after-upstreams") : null
      }
    }
  }
}

output "platform" {
  description = "Everything an environment publishes, as one object (each field is also an output below): watermarks_table_name, watermarks_table_deletion_protection_enabled, scripts_bucket_name, job_names, pipelines, catalog_database_name, athena_workgroup_name, dashboard_name, oncall_topic_arn, alarm_names. Environments re-export it as `platform`; `glue_incremental_tools.deploy.terraform_outputs` flattens it."
  value       = local.platform
}

output "watermarks_table_name" {
  description = "Name of the watermarks table."
  value       = local.platform.watermarks_table_name
}

output "watermarks_table_arn" {
  description = "ARN of the watermarks table."
  value       = module.watermarks_table.arn
}

output "watermarks_table_deletion_protection_enabled" {
  description = "Whether the watermarks table refuses deletion."
  value       = local.platform.watermarks_table_deletion_protection_enabled
}

output "scripts_bucket_name" {
  description = "Name of the scripts bucket CI deploys to."
  value       = local.platform.scripts_bucket_name
}

output "job_names" {
  description = "Glue job names keyed by pipeline name."
  value       = local.platform.job_names
}

output "job_role_arns" {
  description = "IAM role ARNs of the jobs, keyed by pipeline name."
  value       = { for k, j in module.job : k => j.role_arn }
}

output "pipelines" {
  description = "Per pipeline: kind, job, state name, upstream pipelines, the job's own arguments (derived ones included), the S3 URIs its role reads and writes, its catalog table, alarms and trigger. `run_arguments` is everything a run receives from the job definition. What `python -m glue_incremental status` and the environment contract test read."
  value       = local.platform.pipelines
}

output "catalog_database_name" {
  description = "Glue Data Catalog database holding every target table."
  value       = local.platform.catalog_database_name
}

output "athena_workgroup_name" {
  description = "Athena workgroup for the catalog database (encrypted results), or null when disabled."
  value       = local.platform.athena_workgroup_name
}

output "dashboard_name" {
  description = "The environment's CloudWatch dashboard, or null when disabled."
  value       = local.platform.dashboard_name
}

output "oncall_topic_arn" {
  description = "ARN of the on-call SNS topic."
  value       = local.platform.oncall_topic_arn
}

output "alarm_names" {
  description = "Alarm names per pipeline: {<pipeline> = {zero_records, missed_run, watermark_stale, ...}}."
  value       = local.platform.alarm_names
}

output "failure_event_rule_names" {
  description = "EventBridge failure rules per pipeline (null where disabled)."
  value       = { for k, a in module.alarms : k => a.failure_event_rule_name }
}

output "trigger_names" {
  description = "Scheduled and conditional trigger names (empty when triggers are disabled)."
  value       = try(merge(module.triggers[0].scheduled_trigger_names, module.triggers[0].conditional_trigger_names), {})
}

output "oncall_role_arn" {
  description = "Role the on-call assumes for `status` and `watermarks` (its grant on the table key included)."
  value       = aws_iam_role.oncall.arn
}

output "analyst_role_arn" {
  description = "Role analysts assume to query the targets in the Athena workgroup (its grants on the data and scripts keys included), or null without the workgroup."
  value       = try(aws_iam_role.analyst[0].arn, null)
}
