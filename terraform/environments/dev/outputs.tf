output "watermarks_table_name" {
  description = "Name of the watermarks table."
  value       = module.pipeline.watermarks_table_name
}

output "watermarks_table_deletion_protection_enabled" {
  description = "Whether the watermarks table refuses deletion."
  value       = module.pipeline.watermarks_table_deletion_protection_enabled
}

output "scripts_bucket_name" {
  description = "Bucket CI deploys to (make deploy ENV=<env>)."
  value       = module.pipeline.scripts_bucket_name
}

output "job_names" {
  description = "Glue job names keyed incremental_load and incremental_join."
  value       = module.pipeline.job_names
}

output "oncall_topic_arn" {
  description = "ARN of the on-call topic."
  value       = module.pipeline.oncall_topic_arn
}

output "alarm_names" {
  description = "Alarm names per job."
  value       = module.pipeline.alarm_names
}

output "workflow_name" {
  description = "Glue workflow grouping the triggers."
  value       = module.pipeline.workflow_name
}
