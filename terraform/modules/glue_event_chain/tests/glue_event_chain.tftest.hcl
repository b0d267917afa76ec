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
  name = "gi-test"
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
    condition = jsondecode(aws_iam_role_policy.state_machine.policy).Statement == [
      { Sid = "ReadUpstreamRuns", Effect = "Allow", Action = ["glue:GetJobRuns"], Resource = ["arn:aws:glue:eu-west-1:123456789012:job/gi-test-customers", "arn:aws:glue:eu-west-1:123456789012:job/gi-test-orders"] },
      { Sid = "StartDependents", Effect = "Allow", Action = ["glue:StartJobRun"], Resource = ["arn:aws:glue:eu-west-1:123456789012:job/gi-test-orders-enriched", "arn:aws:glue:eu-west-1:123456789012:job/gi-test-report"] },
    ]
    error_message = "The state machine may read the upstreams' runs and start the dependents, nothing else."
  }

  assert {
    condition     = jsondecode(aws_sfn_state_machine.this.definition).States.AllowedToStart.Default == "WaitForTheOtherUpstreams"
    error_message = "AND with an upstream whose latest run did not succeed must not start the job."
  }
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
