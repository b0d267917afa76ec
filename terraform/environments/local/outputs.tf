output "platform" {
  description = "What deploy, status and the demo read (modules/incremental_pipeline's `platform`)."
  value       = module.pipeline.platform
}

output "data_bucket_name" {
  description = "Name of the demo data bucket."
  value       = aws_s3_bucket.data.bucket
}

output "oncall_queue_url" {
  description = "URL of the SQS queue subscribed to the on-call topic (where pages can be read)."
  value       = aws_sqs_queue.pages.id
}
