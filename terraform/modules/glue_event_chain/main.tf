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

  # The vendedlogs prefix keeps the log-delivery resource policy Step Functions writes
  # under its size limit (https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html).
  log_group_name = "/aws/vendedlogs/states/${var.name}-start-dependents"
}

# Naming the role in the Comment also leaves a new definition unknown until the role
# exists: the provider's plan-time ValidateStateMachineDefinition call then waits for
# apply, so an offline plan (tests/harness/environments.py) needs no Step Functions API.
module "definition" {
  source  = "./definition"
  comment = "Starts ${var.name}'s dependent Glue jobs after an upstream SUCCEEDED (AND: once every upstream's latest run SUCCEEDED); runs as ${aws_iam_role.state_machine.arn}."
}

resource "aws_sfn_state_machine" "this" {
  #checkov:skip=CKV_AWS_285:Logging is on (level ERROR, every failed execution's error and cause) with include_execution_data false on purpose: inputs name jobs and runs only, and the execution history keeps them 90 days.
  #checkov:skip=CKV_AWS_284:Four states and two Glue calls per execution: X-Ray would trace nothing the execution history does not already show.
  name       = "${var.name}-start-dependents"
  role_arn   = aws_iam_role.state_machine.arn
  definition = module.definition.json
  tags       = var.tags

  # ERROR: every failed execution's error and cause reach the log group; execution data
  # (inputs and outputs) stays out of the logs (the history keeps it 90 days).
  # https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html
  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.state_machine.arn}:*"
    include_execution_data = false
    level                  = var.log_level
  }

  depends_on = [aws_iam_role_policy.state_machine]
}

resource "aws_cloudwatch_log_group" "state_machine" {
  #checkov:skip=CKV_AWS_158:CloudWatch Logs encrypts at rest by default; a CMK is opt-in through var.log_kms_key_arn (incremental_pipeline passes the environment's logs key).
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = var.tags
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

  # A throttled or refused StartExecution is retried, then parked in the dead-letter
  # queue (never dropped); FailedInvocations below pages on it.
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
  retry_policy {
    maximum_event_age_in_seconds = var.event_retry.maximum_event_age_in_seconds
    maximum_retry_attempts       = var.event_retry.maximum_retry_attempts
  }

  dead_letter_config {
    arn = module.dead_letters[0].arn
  }

  input_transformer {
    input_paths    = { finished = "$.detail.jobName" }
    input_template = "{\"job\": ${jsonencode(each.key)}, \"upstreams\": ${jsonencode(sort(each.value.upstream_job_names))}, \"logical\": ${jsonencode(each.value.logical)}, \"finished\": \"<finished>\"}"
  }
}

# The StartExecutions EventBridge gave up on wait here, admitting exactly these rules.
module "dead_letters" {
  source = "../event_dead_letters"
  count  = length(var.dependencies) > 0 ? 1 : 0

  name             = "${var.name}-start-dependents-dead-letters"
  rule_arns        = [for r in aws_cloudwatch_event_rule.upstream_succeeded : r.arn]
  what             = "upstream successes whose dependent ${aws_sfn_state_machine.this.name} did not start"
  alarm_topic_arn  = var.alarm_topic_arn
  runbook_base_url = var.runbook_base_url
  tags             = var.tags
}

# --- paging ---------------------------------------------------------------------
# FailedInvocations: events whose StartExecution failed permanently (after the retries),
# sent only when not zero, so no datapoint is no failure. AWS/Events, dimension RuleName:
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-monitoring.html
resource "aws_cloudwatch_metric_alarm" "failed_invocations" {
  for_each = var.dependencies

  alarm_name        = "${aws_cloudwatch_event_rule.upstream_succeeded[each.key].name}-failed-invocations"
  alarm_description = "EventBridge could not start ${aws_sfn_state_machine.this.name} for ${each.key} after its retries: ${each.key} was not started; the event waits in the target's dead-letter queue (aws events list-targets-by-rule --rule ${aws_cloudwatch_event_rule.upstream_succeeded[each.key].name}). Runbook: ${var.runbook_base_url}#event-delivery-failed"

  namespace   = "AWS/Events"
  metric_name = "FailedInvocations"
  dimensions  = { RuleName = aws_cloudwatch_event_rule.upstream_succeeded[each.key].name }
  statistic   = "Sum"
  period      = 300

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"

  alarm_actions = [var.alarm_topic_arn]
  ok_actions    = [var.alarm_topic_arn]
  tags          = var.tags
}

# An execution that failed or timed out (a Glue call refused, a dependent at its
# concurrency limit) started nothing. AWS/States, dimension StateMachineArn:
# https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html
resource "aws_cloudwatch_metric_alarm" "executions_failed" {
  alarm_name        = "${aws_sfn_state_machine.this.name}-executions-failed"
  alarm_description = "State machine ${aws_sfn_state_machine.this.name} had failed or timed-out executions: a dependent job may not have been started. Errors: log group ${local.log_group_name}. Runbook: ${var.runbook_base_url}#start-dependents-failed"

  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  datapoints_to_alarm = 1
  treat_missing_data  = "notBreaching"

  metric_query {
    id          = "failed"
    expression  = "FILL(executions_failed, 0) + FILL(executions_timed_out, 0)"
    label       = "Failed or timed-out executions"
    return_data = true
  }

  dynamic "metric_query" {
    for_each = { executions_failed = "ExecutionsFailed", executions_timed_out = "ExecutionsTimedOut" }
    content {
      id = metric_query.key
      metric {
        namespace   = "AWS/States"
        metric_name = metric_query.value
        dimensions  = { StateMachineArn = aws_sfn_state_machine.this.arn }
        stat        = "Sum"
        period      = 300
      }
    }
  }

  alarm_actions = [var.alarm_topic_arn]
  ok_actions    = [var.alarm_topic_arn]
  tags          = var.tags
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
      # Log delivery is set up by the service on the role's behalf and takes no resource
      # scoping: https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html
      {
        Sid    = "DeliverExecutionLogs"
        Effect = "Allow"
        Action = [
          "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery", "logs:ListLogDeliveries",
          "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
        ]
        Resource = "*"
      },
    ]
  })
}
