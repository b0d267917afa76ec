mock_provider "aws" {
  source = "../../testing/aws"

  mock_resource "aws_sfn_state_machine" {
    defaults = { arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:gi-test-start-dependents" }
  }

  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

variables {
  name            = "gi-test"
  alarm_topic_arn = "arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"
  dependencies = {
    gi-test-orders-enriched = { upstream_job_names = ["gi-test-orders", "gi-test-customers"] }
    gi-test-report          = { upstream_job_names = ["gi-test-orders"], logical = "ANY" }
  }
}

run "an_upstream_success_however_started_reaches_the_state_machine_and_a_failure_never" {
  command = apply

  assert {
    condition = jsondecode(aws_cloudwatch_event_rule.upstream_succeeded["gi-test-orders-enriched"].event_pattern) == {
      source        = ["aws.glue"]
      "detail-type" = ["Glue Job State Change"]
      detail        = { jobName = ["gi-test-customers", "gi-test-orders"], state = ["SUCCEEDED"] }
    }
    error_message = "The rule must match every SUCCEEDED run of the upstreams (no trigger condition) and nothing else."
  }

  assert {
    condition     = aws_cloudwatch_event_target.upstream_succeeded["gi-test-report"].arn == aws_sfn_state_machine.this.arn
    error_message = "Glue is no EventBridge target: the rule starts the state machine."
  }

  assert {
    condition     = jsondecode(replace(aws_cloudwatch_event_target.upstream_succeeded["gi-test-orders-enriched"].input_transformer[0].input_template, "\"<finished>\"", "\"gi-test-orders\"")) == { job = "gi-test-orders-enriched", upstreams = ["gi-test-customers", "gi-test-orders"], logical = "AND", finished = "gi-test-orders" }
    error_message = "The state machine's input names the dependent, its upstreams, AND/ANY and the run that finished."
  }
}

run "the_state_machine_starts_only_its_dependents_and_reads_only_their_upstreams" {
  command = apply

  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.state_machine.policy).Statement : s if s.Sid != "DeliverExecutionLogs"] == [
      { Sid = "ReadUpstreamRuns", Effect = "Allow", Action = ["glue:GetJobRuns"], Resource = ["arn:aws:glue:eu-west-1:123456789012:job/gi-test-customers", "arn:aws:glue:eu-west-1:123456789012:job/gi-test-orders"] },
      { Sid = "StartDependents", Effect = "Allow", Action = ["glue:StartJobRun"], Resource = ["arn:aws:glue:eu-west-1:123456789012:job/gi-test-orders-enriched", "arn:aws:glue:eu-west-1:123456789012:job/gi-test-report"] },
    ]
    error_message = "The state machine may read the upstreams' runs and start the dependents, nothing else in Glue (its other statement is log delivery)."
  }

  assert {
    condition     = jsondecode(aws_sfn_state_machine.this.definition).States.AllowedToStart.Default == "WaitForTheOtherUpstreams"
    error_message = "AND with an upstream whose latest run did not succeed must not start the job."
  }
}

run "every_target_retries_then_parks_an_undelivered_event_in_the_dead_letter_queue" {
  command = apply

  variables {
    event_retry = { maximum_retry_attempts = 5 }
  }

  assert {
    condition = alltrue([for t in aws_cloudwatch_event_target.upstream_succeeded : (
      t.dead_letter_config[0].arn == module.dead_letters[0].arn &&
      t.retry_policy[0].maximum_retry_attempts == 5 && t.retry_policy[0].maximum_event_age_in_seconds == 3600
    )])
    error_message = "Every target retries as configured, then sends the event to the dead-letter queue instead of dropping it."
  }

  assert {
    condition     = output.dead_letter_queue_name == "gi-test-start-dependents-dead-letters" && contains(output.alarm_names, "gi-test-start-dependents-dead-letters-not-empty")
    error_message = "The rules' own dead-letter queue pages on-call while it holds an event."
  }
}

run "each_rule_and_the_state_machine_page_on_call_when_delivery_fails" {
  command = apply

  assert {
    condition = { for job, a in aws_cloudwatch_metric_alarm.failed_invocations : job => "${a.namespace}/${a.metric_name} RuleName=${a.dimensions.RuleName} -> ${join(",", a.alarm_actions)}" } == {
      gi-test-orders-enriched = "AWS/Events/FailedInvocations RuleName=gi-test-orders-enriched-upstream-succeeded -> arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"
      gi-test-report          = "AWS/Events/FailedInvocations RuleName=gi-test-report-upstream-succeeded -> arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"
    }
    error_message = "Each rule has a FailedInvocations alarm (AWS/Events, RuleName) paging the on-call topic."
  }

  assert {
    condition = toset([for q in aws_cloudwatch_metric_alarm.executions_failed.metric_query : "${q.metric[0].namespace}/${q.metric[0].metric_name}=${q.metric[0].dimensions.StateMachineArn}" if length(q.metric) > 0]) == toset([
      "AWS/States/ExecutionsFailed=arn:aws:states:eu-west-1:123456789012:stateMachine:gi-test-start-dependents",
      "AWS/States/ExecutionsTimedOut=arn:aws:states:eu-west-1:123456789012:stateMachine:gi-test-start-dependents",
    ])
    error_message = "The state machine's alarm sums ExecutionsFailed and ExecutionsTimedOut (AWS/States, StateMachineArn)."
  }

  assert {
    condition     = aws_cloudwatch_metric_alarm.executions_failed.alarm_actions == toset(["arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"]) && strcontains(aws_cloudwatch_metric_alarm.executions_failed.alarm_description, "#start-dependents-failed")
    error_message = "The failed-execution alarm pages on-call and links its runbook section."
  }
}

run "the_state_machine_logs_errors_without_execution_data" {
  command = apply

  assert {
    condition = (
      aws_sfn_state_machine.this.logging_configuration[0].level == "ERROR" &&
      aws_sfn_state_machine.this.logging_configuration[0].include_execution_data == false &&
      aws_sfn_state_machine.this.logging_configuration[0].log_destination == "${aws_cloudwatch_log_group.state_machine.arn}:*" &&
      aws_cloudwatch_log_group.state_machine.name == "/aws/vendedlogs/states/gi-test-start-dependents"
    )
    error_message = "The state machine logs at least its errors, and no inputs or outputs, to its own log group."
  }

  assert {
    condition     = contains([for s in jsondecode(aws_iam_role_policy.state_machine.policy).Statement : s.Sid], "DeliverExecutionLogs")
    error_message = "The state machine's role may set up its log delivery."
  }
}

run "rejects_more_retries_than_eventbridge_allows" {
  command = plan

  variables {
    event_retry = { maximum_retry_attempts = 186 }
  }

  expect_failures = [var.event_retry]
}

run "rejects_a_retry_window_under_a_minute" {
  command = plan

  variables {
    event_retry = { maximum_event_age_in_seconds = 59 }
  }

  expect_failures = [var.event_retry]
}

run "rejects_a_log_level_that_would_hide_failed_executions" {
  command = plan

  variables {
    log_level = "OFF"
  }

  expect_failures = [var.log_level]
}

run "rejects_a_job_depending_on_itself" {
  command = plan

  variables {
    dependencies = { gi-test-a = { upstream_job_names = ["gi-test-a"] } }
  }

  expect_failures = [var.dependencies]
}

run "rejects_a_logical_that_is_not_and_or_any" {
  command = plan

  variables {
    dependencies = { gi-test-a = { upstream_job_names = ["gi-test-b"], logical = "OR" } }
  }

  expect_failures = [var.dependencies]
}
