output "queue_url" {
  description = "The queue's URL: the job's `--notification_queue_url`."
  value       = aws_sqs_queue.events.id
}

output "queue_arn" {
  description = "ARN of the queue receiving the source's S3 events."
  value       = aws_sqs_queue.events.arn
}

output "dead_letter_queue_arn" {
  description = "ARN of the dead-letter queue (messages received max_receive_count times: not S3 events). Alarm on it."
  value       = aws_sqs_queue.dead_letters.arn
}

output "filter_prefix" {
  description = "The key prefix the bucket notification announces (null: the whole bucket)."
  value       = local.filter_prefix
}

output "job_policy_json" {
  description = "The job role's policy for this queue (attached here when job_role_name is set)."
  value       = local.job_policy
}
