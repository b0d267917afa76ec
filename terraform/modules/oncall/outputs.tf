output "topic_arn" {
  description = "ARN of the on-call topic; every alarm's alarm_actions and ok_actions and every failure event rule target it."
  value       = aws_sns_topic.this.arn
}

output "topic_name" {
  description = "Name of the on-call topic."
  value       = aws_sns_topic.this.name
}

output "kms_key_arn" {
  description = "ARN of the KMS key encrypting the topic (created or supplied)."
  value       = local.kms_key_arn
}

output "subscription_arns" {
  description = "ARNs of the subscriptions, in the order of var.subscriptions (email ones stay `pending confirmation` until confirmed)."
  value       = [for i in range(length(var.subscriptions)) : aws_sns_topic_subscription.this[tostring(i)].arn]
}

output "undelivered_queue_arn" {
  description = "Dead-letter queue of every subscription: pages SNS could not deliver."
  value       = aws_sqs_queue.undelivered.arn
}

output "delivery_failure_alarm_name" {
  description = "Alarm on failed or parked pages (runbook anchor page-delivery-failures)."
  value       = aws_cloudwatch_metric_alarm.page_delivery_failures.alarm_name
}
