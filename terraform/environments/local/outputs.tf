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

output "lake_kms_key_arn" {
  description = "The lake key: sources written SSE-KMS with it, granted to every job role."
  value       = aws_kms_key.lake.arn
}
