resource "aws_glue_workflow" "this" {
  count = var.workflow == null ? 0 : 1

  name        = var.workflow.name
  description = var.workflow.description
  # One pipeline run at a time, for the same reason each job runs alone:
  # overlapping runs race on the same watermarks.
  max_concurrent_runs = var.workflow.max_concurrent_runs
  tags                = var.tags
}

resource "aws_glue_trigger" "scheduled" {
  for_each = var.scheduled_triggers

  name          = each.key
  description   = each.value.description
  type          = "SCHEDULED"
  schedule      = each.value.schedule
  enabled       = each.value.enabled
  workflow_name = try(aws_glue_workflow.this[0].name, null)
  tags          = var.tags

  actions {
    job_name  = each.value.job_name
    arguments = length(each.value.arguments) == 0 ? null : each.value.arguments
  }
}

resource "aws_glue_trigger" "conditional" {
  for_each = var.conditional_triggers

  name          = each.key
  description   = each.value.description
  type          = "CONDITIONAL"
  enabled       = each.value.enabled
  workflow_name = try(aws_glue_workflow.this[0].name, null)
  tags          = var.tags

  actions {
    job_name  = each.value.job_name
    arguments = length(each.value.arguments) == 0 ? null : each.value.arguments
  }

  predicate {
    logical = each.value.logical

    dynamic "conditions" {
      for_each = each.value.upstream_job_names

      content {
        job_name         = conditions.value
        state            = each.value.state
        logical_operator = "EQUALS"
      }
    }
  }
}
