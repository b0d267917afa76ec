mock_provider "aws" {}

variables {
  workflow = { name = "gi-incremental" }

  scheduled_triggers = {
    "orders-load-schedule" = {
      job_name = "orders-load"
      schedule = "cron(15 * * * ? *)"
    }
  }

  conditional_triggers = {
    "orders-join-after-load" = {
      job_name           = "orders-join"
      upstream_job_names = ["orders-load"]
    }
  }
}

run "schedules_the_load_and_starts_the_join_when_it_succeeded" {
  assert {
    condition = (aws_glue_trigger.scheduled["orders-load-schedule"].type == "SCHEDULED" &&
      aws_glue_trigger.scheduled["orders-load-schedule"].schedule == "cron(15 * * * ? *)" &&
    aws_glue_trigger.scheduled["orders-load-schedule"].actions[0].job_name == "orders-load")
    error_message = "The load job must be started by its cron schedule."
  }

  assert {
    condition = (aws_glue_trigger.conditional["orders-join-after-load"].type == "CONDITIONAL" &&
      aws_glue_trigger.conditional["orders-join-after-load"].actions[0].job_name == "orders-join" &&
    [for c in aws_glue_trigger.conditional["orders-join-after-load"].predicate[0].conditions : [c.job_name, c.state, c.logical_operator]] == [["orders-load", "SUCCEEDED", "EQUALS"]])
    error_message = "The join must start when, and only when, the load job SUCCEEDED."
  }

  assert {
    condition     = aws_glue_trigger.scheduled["orders-load-schedule"].enabled && aws_glue_trigger.conditional["orders-join-after-load"].enabled
    error_message = "Triggers must be created enabled."
  }
}

run "groups_the_triggers_in_one_workflow" {
  assert {
    condition     = aws_glue_trigger.scheduled["orders-load-schedule"].workflow_name == "gi-incremental" && aws_glue_trigger.conditional["orders-join-after-load"].workflow_name == "gi-incremental"
    error_message = "Every trigger must belong to the workflow when one is configured."
  }

  assert {
    condition     = aws_glue_workflow.this[0].max_concurrent_runs == 1
    error_message = "One pipeline run at a time."
  }
}

run "standalone_triggers_without_a_workflow" {
  variables {
    workflow = null
  }

  assert {
    condition     = length(aws_glue_workflow.this) == 0 && aws_glue_trigger.scheduled["orders-load-schedule"].workflow_name == null
    error_message = "Without a workflow the triggers must be standalone."
  }
}

run "rejects_invalid_cron_expression" {
  command = plan

  variables {
    scheduled_triggers = {
      "five-fields" = { job_name = "orders-load", schedule = "cron(0 2 * * *)" }
    }
  }

  expect_failures = [var.scheduled_triggers]
}

run "rejects_cron_without_a_question_mark_day_field" {
  command = plan

  variables {
    scheduled_triggers = {
      "both-days" = { job_name = "orders-load", schedule = "cron(0 2 * * MON *)" }
    }
  }

  expect_failures = [var.scheduled_triggers]
}

run "rejects_conditional_trigger_without_upstream" {
  command = plan

  variables {
    conditional_triggers = {
      "orphan" = { job_name = "orders-join", upstream_job_names = [], state = "DONE" }
    }
  }

  expect_failures = [var.conditional_triggers]
}
