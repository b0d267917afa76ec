mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  name            = "gi-test-orders-event-dead-letters"
  rule_arns       = ["arn:aws:events:eu-west-1:123456789012:rule/gi-test-orders-run-slow", "arn:aws:events:eu-west-1:123456789012:rule/gi-test-orders-run-failed"]
  what            = "failed-run and slow-run pages of gi-test-orders"
  alarm_topic_arn = "arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"
}

run "only_eventbridge_from_exactly_the_given_rules_may_send_to_the_encrypted_queue" {
  command = plan

  assert {
    condition = aws_sqs_queue.this.sqs_managed_sse_enabled && jsondecode(aws_sqs_queue.this.policy).Statement == [{
      Sid       = "EventBridgeRulesDeadLetters"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = "arn:aws:sqs:eu-west-1:123456789012:gi-test-orders-event-dead-letters"
      Condition = { ArnEquals = { "aws:SourceArn" = [
        "arn:aws:events:eu-west-1:123456789012:rule/gi-test-orders-run-failed",
        "arn:aws:events:eu-west-1:123456789012:rule/gi-test-orders-run-slow",
      ] } }
    }]
    error_message = "The queue is SSE-SQS encrypted and admits EventBridge from exactly the given rules."
  }

  assert {
    condition     = aws_cloudwatch_metric_alarm.not_empty.metric_name == "ApproximateNumberOfMessagesVisible" && aws_cloudwatch_metric_alarm.not_empty.alarm_actions == toset(["arn:aws:sns:eu-west-1:123456789012:gi-test-oncall"]) && strcontains(aws_cloudwatch_metric_alarm.not_empty.alarm_description, "#event-delivery-failed")
    error_message = "A parked event pages on-call, linking the runbook section."
  }
}

run "rejects_a_queue_admitting_no_rule" {
  command = plan

  variables {
    rule_arns = []
  }

  expect_failures = [var.rule_arns]
}

run "rejects_a_fifo_queue_name" {
  command = plan

  variables {
    name = "gi-test-events.fifo"
  }

  expect_failures = [var.name]
}
