output "watermarks_table_name" {
  description = "Name of the watermarks table."
  value       = module.watermarks_table.name
}

output "watermarks_table_arn" {
  description = "ARN of the watermarks table."
  value       = module.watermarks_table.arn
}

output "watermarks_table_deletion_protection_enabled" {
  description = "Whether the watermarks table refuses deletion."
  value       = module.watermarks_table.deletion_protection_enabled
}

output "scripts_bucket_name" {
  description = "Name of the scripts bucket CI deploys to."
  value       = module.scripts_bucket.bucket_name
}

output "job_names" {
  description = "Glue job names keyed by pipeline name."
  value       = { for k, j in module.job : k => j.job_name }
}

output "job_role_arns" {
  description = "IAM role ARNs of the jobs, keyed by pipeline name."
  value       = { for k, j in module.job : k => j.role_arn }
}

output "pipelines" {
  description = "Per pipeline: kind, job, state name, upstream pipelines, the job's own arguments (derived ones included), the S3 URIs its role reads and writes, its catalog table, alarms and trigger. `run_arguments` is everything a run receives from the job definition. What `python -m glue_incremental status` and the environment contract test read."
  value = {
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
      target_path   = local.target_paths[k]
      table         = "${local.database_name}.${local.target_tables[k]}"
      alarm_names   = module.alarms[k].alarm_names
      trigger_name  = var.triggers_enabled ? (length(local.upstreams[k]) == 0 ? "${local.job_names[k]}-schedule" : "${local.job_names[k]}-after-upstreams") : null
    }
  }
}

output "catalog_database_name" {
  description = "Glue Data Catalog database holding every target table."
  value       = aws_glue_catalog_database.this.name
}

output "athena_workgroup_name" {
  description = "Athena workgroup for the catalog database (encrypted results), or null when disabled."
  value       = try(aws_athena_workgroup.this[0].name, null)
}

output "dashboard_name" {
  description = "The environment's CloudWatch dashboard, or null when disabled."
  value       = try(aws_cloudwatch_dashboard.this[0].dashboard_name, null)
}

output "oncall_topic_arn" {
  description = "ARN of the on-call SNS topic."
  value       = module.oncall.topic_arn
}

output "alarm_names" {
  description = "Alarm names per pipeline: {<pipeline> = {zero_records, missed_run, watermark_stale}}."
  value       = { for k, a in module.alarms : k => a.alarm_names }
}

output "failure_event_rule_names" {
  description = "EventBridge failure rules per pipeline (null where disabled)."
  value       = { for k, a in module.alarms : k => a.failure_event_rule_name }
}

output "trigger_names" {
  description = "Scheduled and conditional trigger names (empty when triggers are disabled)."
  value       = try(merge(module.triggers[0].scheduled_trigger_names, module.triggers[0].conditional_trigger_names), {})
}
