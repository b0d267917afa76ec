# Dependents start on EventBridge "Glue Job State Change" events, which Glue emits
# for every run however it was started: a rerun by hand of a failed upstream starts
# its dependents, which Glue's conditional triggers (fired only by runs a trigger
# started) do not. Glue is not an EventBridge target, so each rule targets one
# Step Functions state machine that applies the AND/ANY rule and starts the job
# (glue_incremental_tools.orchestration.dependents_to_start is the same logic, unit-tested).
# https://docs.aws.amazon.com/glue/latest/dg/automating-awsglue-with-cloudwatch-events.html
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-targets.html
# https://docs.aws.amazon.com/step-functions/latest/dg/connect-glue.html

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  job_arn_prefix = "arn:${data.aws_partition.current.partition}:glue:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:job"
  upstream_jobs  = sort(distinct(flatten([for d in values(var.dependencies) : d.upstream_job_names])))

  # JSONata: the latest run of every upstream (GetJobRuns lists the newest first);
  # the finished run counts as SUCCEEDED whatever the lookup says (it may lag).
  definition = {
    # Naming the role also leaves a new definition unknown until the role exists: the
    # provider's plan-time ValidateStateMachineDefinition call then waits for apply,
    # so an offline plan (tests/harness/environments.py) needs no Step Functions API.
    Comment       = "Starts ${var.name}'s dependent Glue jobs after an upstream SUCCEEDED (AND: once every upstream's latest run SUCCEEDED); runs as ${aws_iam_role.state_machine.arn}."
    QueryLanguage = "JSONata"
    StartAt       = "LatestRuns"
    States = {
      LatestRuns = {
        Type  = "Map"
        Items = "{% $states.input.upstreams %}"
        ItemProcessor = {
          ProcessorConfig = { Mode = "INLINE" }
          StartAt         = "LatestRun"
          States = {
            LatestRun = {
              Type      = "Task"
              Resource  = "arn:aws:states:::aws-sdk:glue:getJobRuns"
              Arguments = { JobName = "{% $states.input %}", MaxResults = 1 }
              Output    = "{% {'job': $states.input, 'state': $states.result.JobRuns[0].JobRunState} %}"
              End       = true
            }
          }
        }
        Output = "{% $merge([$states.input, {'latest': $states.result}]) %}"
        Next   = "AllowedToStart"
      }
      AllowedToStart = {
        Type = "Choice"
        Choices = [{
          Condition = "{% $states.input.logical = 'ANY' or $count($states.input.latest[job != $states.input.finished and state != 'SUCCEEDED']) = 0 %}"
          Next      = "StartJob"
        }]
        Default = "WaitForTheOtherUpstreams"
      }
      StartJob = {
        Type      = "Task"
        Resource  = "arn:aws:states:::glue:startJobRun"
        Arguments = { JobName = "{% $states.input.job %}" }
        End       = true
      }
      WaitForTheOtherUpstreams = {
        Type    = "Succeed"
        Comment = "Another upstream's latest run has not SUCCEEDED: its own success (a rerun included) starts the job."
      }
    }
  }
}

resource "aws_sfn_state_machine" "this" {
  #checkov:skip=CKV_AWS_285:A STANDARD state machine keeps every execution's history (inputs, each decision, the StartJobRun) for 90 days in Step Functions itself; on-call reads it there (docs/runbook.md failed-upstream).
  #checkov:skip=CKV_AWS_284:Four states and two Glue calls per execution: X-Ray would trace nothing the execution history does not already show.
  name       = "${var.name}-start-dependents"
  role_arn   = aws_iam_role.state_machine.arn
  definition = jsonencode(local.definition)
  tags       = var.tags
}

resource "aws_cloudwatch_event_rule" "upstream_succeeded" {
  for_each = var.dependencies

  name        = "${each.key}-upstream-succeeded"
  description = "A run of ${join(" or ", sort(each.value.upstream_job_names))} SUCCEEDED, however started: start ${each.key} (${each.value.logical})."
  tags        = var.tags

  event_pattern = jsonencode({
    source        = ["aws.glue"]
    "detail-type" = ["Glue Job State Change"]
    detail = {
      jobName = sort(each.value.upstream_job_names)
      state   = ["SUCCEEDED"]
    }
  })
}

resource "aws_cloudwatch_event_target" "upstream_succeeded" {
  for_each = var.dependencies

  rule      = aws_cloudwatch_event_rule.upstream_succeeded[each.key].name
  target_id = "start-dependent"
  arn       = aws_sfn_state_machine.this.arn
  role_arn  = aws_iam_role.events.arn

  input_transformer {
    input_paths    = { finished = "$.detail.jobName" }
    input_template = "{\"job\": ${jsonencode(each.key)}, \"upstreams\": ${jsonencode(sort(each.value.upstream_job_names))}, \"logical\": ${jsonencode(each.value.logical)}, \"finished\": \"<finished>\"}"
  }
}

# --- roles ---------------------------------------------------------------------

data "aws_iam_policy_document" "events_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "events" {
  name                 = "glue-${var.name}-events-to-sfn"
  assume_role_policy   = data.aws_iam_policy_document.events_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags
}

resource "aws_iam_role_policy" "events" {
  name = "start-dependents"
  role = aws_iam_role.events.id
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Sid = "StartTheStateMachine", Effect = "Allow", Action = ["states:StartExecution"], Resource = [aws_sfn_state_machine.this.arn] }]
  })
}

data "aws_iam_policy_document" "states_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "state_machine" {
  name                 = "glue-${var.name}-start-dependents"
  assume_role_policy   = data.aws_iam_policy_document.states_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags
}

resource "aws_iam_role_policy" "state_machine" {
  name = "start-dependents"
  role = aws_iam_role.state_machine.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      { Sid = "ReadUpstreamRuns", Effect = "Allow", Action = ["glue:GetJobRuns"], Resource = [for j in local.upstream_jobs : "${local.job_arn_prefix}/${j}"] },
      { Sid = "StartDependents", Effect = "Allow", Action = ["glue:StartJobRun"], Resource = [for j in sort(keys(var.dependencies)) : "${local.job_arn_prefix}/${j}"] },
    ]
  })
}
