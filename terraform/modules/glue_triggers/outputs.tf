output "workflow_name" {
  description = "Name of the Glue workflow, or null when the triggers are standalone."
  value       = try(aws_glue_workflow.this[0].name, null)
}

output "scheduled_trigger_names" {
  description = "Names of the scheduled triggers, keyed as in var.scheduled_triggers."
  value       = { for k, t in aws_glue_trigger.scheduled : k => t.name }
}

output "conditional_trigger_names" {
  description = "Names of the conditional triggers, keyed as in var.conditional_triggers."
  value       = { for k, t in aws_glue_trigger.conditional : k => t.name }
}

output "trigger_arns" {
  description = "ARNs of every trigger, keyed by trigger name."
  value       = merge({ for k, t in aws_glue_trigger.scheduled : k => t.arn }, { for k, t in aws_glue_trigger.conditional : k => t.arn })
}
