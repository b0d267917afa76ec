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
  description = "Glue job names keyed incremental_load and incremental_join."
  value       = { for k, j in module.job : k => j.job_name }
}

output "job_role_arns" {
  description = "IAM role ARNs of the jobs, keyed like job_names."
  value       = { for k, j in module.job : k => j.role_arn }
}

output "oncall_topic_arn" {
  description = "ARN of the on-call SNS topic."
  value       = module.oncall.topic_arn
}

output "alarm_names" {
  description = "Alarm names per job: {incremental_load = {zero_records, missed_run, watermark_stale}, incremental_join = {...}}."
  value       = { for k, a in module.alarms : k => a.alarm_names }
}

output "failure_event_rule_names" {
  description = "EventBridge failure rules per job (null where disabled)."
  value       = { for k, a in module.alarms : k => a.failure_event_rule_name }
}

output "workflow_name" {
  description = "Glue workflow grouping the triggers, or null."
  value       = try(module.triggers[0].workflow_name, null)
}

output "trigger_names" {
  description = "Scheduled and conditional trigger names (empty when triggers are disabled)."
  value       = try(merge(module.triggers[0].scheduled_trigger_names, module.triggers[0].conditional_trigger_names), {})
}
