output "arn" {
  description = "The queue's ARN: each rule target's dead_letter_config."
  value       = aws_sqs_queue.this.arn
}

output "name" {
  description = "The queue's name."
  value       = aws_sqs_queue.this.name
}

output "alarm_name" {
  description = "The not-empty alarm (runbook anchor event-delivery-failed)."
  value       = aws_cloudwatch_metric_alarm.not_empty.alarm_name
}
