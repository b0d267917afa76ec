output "state_machine_arn" {
  description = "The state machine that starts dependents (its executions show every decision)."
  value       = aws_sfn_state_machine.this.arn
}

output "rule_names" {
  description = "Dependent job name => the EventBridge rule that may start it."
  value       = { for job, rule in aws_cloudwatch_event_rule.upstream_succeeded : job => rule.name }
}

output "rule_arns" {
  description = "Dependent job name => the ARN of its EventBridge rule (the dead-letter queue admits exactly these)."
  value       = { for job, rule in aws_cloudwatch_event_rule.upstream_succeeded : job => rule.arn }
}

output "log_group_name" {
  description = "The state machine's log group (failed executions' errors; no execution data)."
  value       = aws_cloudwatch_log_group.state_machine.name
}

output "alarm_names" {
  description = "The alarms paging on-call: each rule's FailedInvocations, the state machine's failed or timed-out executions, the dead-letter queue not empty."
  value       = concat([for a in aws_cloudwatch_metric_alarm.failed_invocations : a.alarm_name], [aws_cloudwatch_metric_alarm.executions_failed.alarm_name], module.dead_letters[*].alarm_name)
}

output "dead_letter_queue_name" {
  description = "The queue (`<name>-start-dependents-dead-letters`) where the events EventBridge could not deliver wait."
  value       = try(module.dead_letters[0].name, null)
}
