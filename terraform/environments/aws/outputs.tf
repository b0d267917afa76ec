output "environment" {
  description = "Which environment this state is (deploy and status check it against --env)."
  value       = var.environment
}

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
  description = "Glue job names keyed by pipeline."
  value       = module.pipeline.job_names
}

output "pipelines" {
  description = "Per pipeline: job, state, upstreams, arguments, S3 grants, table, alarms, trigger."
  value       = module.pipeline.pipelines
}

output "catalog_database_name" {
  description = "Glue Data Catalog database of the targets."
  value       = module.pipeline.catalog_database_name
}

output "athena_workgroup_name" {
  description = "Athena workgroup for the catalog database."
  value       = module.pipeline.athena_workgroup_name
}

output "dashboard_name" {
  description = "The environment's CloudWatch dashboard."
  value       = module.pipeline.dashboard_name
}

output "oncall_topic_arn" {
  description = "ARN of the on-call topic."
  value       = module.pipeline.oncall_topic_arn
}

output "alarm_names" {
  description = "Alarm names per pipeline."
  value       = module.pipeline.alarm_names
}
