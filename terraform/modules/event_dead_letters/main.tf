# Where EventBridge parks the events a rule's target refused after its retries
# (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html): one queue
# per module that owns rules (job_alarms: a job's page rules; glue_event_chain: the
# dependents' rules), so adding a pipeline creates its own queue and changes no other.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  arn = "arn:${data.aws_partition.current.partition}:sqs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:${var.name}"
}

resource "aws_sqs_queue" "this" {
  name = var.name
  # SSE-SQS: EventBridge sends to it with no key grant (it cannot use the AWS managed
  # aws/sqs KMS key).
  sqs_managed_sse_enabled   = true
  message_retention_seconds = 1209600
  tags                      = var.tags

  # Inline rather than aws_sqs_queue_policy: one attribute write (environments/local:
  # the provider waits for each write to settle). Exactly these rules: aws:SourceArn
  # admits no other rule, bus or account (confused deputy).
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "EventBridgeRulesDeadLetters"
        Effect    = "Allow"
        Principal = { Service = "events.amazonaws.com" }
        Action    = "sqs:SendMessage"
        Resource  = local.arn
        Condition = { ArnEquals = { "aws:SourceArn" = sort(var.rule_arns) } }
      },
    ]
  })
}

# An event parked here is a page or a dependent's start that did not happen: page until
# someone drains the queue.
resource "aws_cloudwatch_metric_alarm" "not_empty" {
  alarm_name        = "${var.name}-not-empty"
  alarm_description = "EventBridge parked undelivered events (${var.what}) in ${var.name}: read them, act on each, then delete them. Runbook: ${var.runbook_base_url}#event-delivery-failed"

  namespace   = "AWS/SQS"
  metric_name = "ApproximateNumberOfMessagesVisible"
  dimensions  = { QueueName = aws_sqs_queue.this.name }
  statistic   = "Maximum"
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
