output "watermarks_table_name" {
  description = "Name of the watermarks table."
  value       = module.pipeline.watermarks_table_name
}

output "scripts_bucket_name" {
  description = "Name of the scripts bucket."
  value       = module.pipeline.scripts_bucket_name
}

output "data_bucket_name" {
  description = "Name of the demo data bucket."
  value       = aws_s3_bucket.data.bucket
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

output "oncall_queue_url" {
  description = "URL of the SQS queue subscribed to the on-call topic (where pages can be read)."
  value       = aws_sqs_queue.pages.id
}

output "alarm_names" {
  description = "Alarm names per pipeline: {<pipeline> = {zero_records, missed_run, watermark_stale}}."
  value       = module.pipeline.alarm_names
}
