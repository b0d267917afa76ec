output "state_machine_arn" {
  description = "The state machine that starts dependents (its executions show every decision)."
  value       = aws_sfn_state_machine.this.arn
}

output "rule_names" {
  description = "Dependent job name => the EventBridge rule that may start it."
  value       = { for job, rule in aws_cloudwatch_event_rule.upstream_succeeded : job => rule.name }
}
