# Where EventBridge parks what it could not deliver: a failed-run or slow-run page the
# on-call topic refused (modules/job_alarms), or a StartExecution of the start-dependents
# state machine that failed (modules/glue_event_chain). Each target first retries
# (var.event_retry), then sends the event here instead of dropping it
# (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); the
# FailedInvocations alarm of the rule and the depth alarm below page on-call.
locals {
  # No rule, no queue: an SQS policy cannot name an empty list of sources.
  event_targets_exist     = var.failure_events_enabled || local.event_chain_enabled
  event_dead_letters_name = "${var.name_prefix}-event-dead-letters"
  event_dead_letters_arn  = "arn:${data.aws_partition.current.partition}:sqs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:${local.event_dead_letters_name}"
  # Exactly the rules whose targets name the queue: aws:SourceArn admits no other
  # rule, bus or account (confused deputy). Built from the rule names the modules give
  # (job_alarms: <job>-run-failed, <job>-run-slow; glue_event_chain:
  # <dependent>-upstream-succeeded) rather than from their outputs: the targets depend
  # on this queue, so the queue may not depend on the modules' rules (a cycle).
  # environments/local's apply compares them with the deployed rules
  # (tests/terraform/test_terraform_local.py).
  event_rule_prefix = "arn:${data.aws_partition.current.partition}:events:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:rule"
  event_rule_arns = sort(concat(
    var.failure_events_enabled ? flatten([for k in keys(var.pipelines) : ["${local.event_rule_prefix}/${local.job_names[k]}-run-failed", "${local.event_rule_prefix}/${local.job_names[k]}-run-slow"]]) : [],
    local.event_chain_enabled ? [for k in keys(var.pipelines) : "${local.event_rule_prefix}/${local.job_names[k]}-upstream-succeeded" if length(local.reach_1[k]) > 0] : [],
  ))
}

resource "aws_sqs_queue" "event_dead_letters" {
  count = local.event_targets_exist ? 1 : 0

  name = local.event_dead_letters_name
  # SSE-SQS: EventBridge can send to it with no key grant (a queue under the AWS managed
  # aws/sqs KMS key it cannot use).
  sqs_managed_sse_enabled   = true
  message_retention_seconds = 1209600
  tags                      = var.tags

  # Inline rather than aws_sqs_queue_policy: one attribute write (environments/local:
  # the provider waits for each write to settle). The rules do not depend on the queue,
  # only their targets do, so this is no cycle.
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "EventBridgeRulesDeadLetters"
        Effect    = "Allow"
        Principal = { Service = "events.amazonaws.com" }
        Action    = "sqs:SendMessage"
        Resource  = local.event_dead_letters_arn
        Condition = { ArnEquals = { "aws:SourceArn" = local.event_rule_arns } }
      },
    ]
  })
}

# An event parked here is a page or a dependent's start that did not happen: page
# until someone drains the queue (docs/runbook.md#event-delivery-failed).
resource "aws_cloudwatch_metric_alarm" "event_dead_letters" {
  count = local.event_targets_exist ? 1 : 0

  alarm_name        = "${local.event_dead_letters_name}-not-empty"
  alarm_description = "EventBridge parked undelivered events (a failed-run or slow-run page, or a dependent's start) in ${local.event_dead_letters_name}: read them, act on each, then delete them. Runbook: ${coalesce(var.runbook_base_url, "https://github.com/example/glue-incremental/blob/main/docs/runbook.md")}#event-delivery-failed"

  namespace   = "AWS/SQS"
  metric_name = "ApproximateNumberOfMessagesVisible"
  dimensions  = { QueueName = aws_sqs_queue.event_dead_letters[0].name }
  statistic   = "Maximum"
  period      = 300

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"

  alarm_actions = [module.oncall.topic_arn]
  ok_actions    = [module.oncall.topic_arn]
  tags          = var.tags
}
