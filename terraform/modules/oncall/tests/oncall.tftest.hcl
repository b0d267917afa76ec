mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  name = "gi-oncall"
  subscriptions = [
    { protocol = "email", endpoint = "oncall@example.com" },
    { protocol = "sqs", endpoint = "arn:aws:sqs:eu-west-1:123456789012:pages", raw_message_delivery = true },
  ]
}

run "topic_is_encrypted_with_a_key_alarms_and_events_may_use" {
  assert {
    condition     = aws_sns_topic.this.kms_master_key_id == aws_kms_key.this[0].arn && aws_kms_key.this[0].enable_key_rotation
    error_message = "The topic must be encrypted with the module's rotating customer managed key."
  }

  assert {
    condition     = toset(one([for s in jsondecode(aws_kms_key.this[0].policy).Statement : s if s.Sid == "PublishersEncryptForTopic"]).Principal.Service) == toset(["cloudwatch.amazonaws.com", "events.amazonaws.com"])
    error_message = "CloudWatch alarms and EventBridge must be allowed to use the topic key."
  }
}

run "eventbridge_may_publish_for_this_account_only" {
  assert {
    condition = contains(
      [for s in jsondecode(aws_sns_topic_policy.this.policy).Statement : s.Condition.StringEquals["aws:SourceAccount"] if try(contains(s.Principal.Service, "events.amazonaws.com"), false) && s.Action == "SNS:Publish"],
      "123456789012",
    )
    error_message = "The topic policy must let events.amazonaws.com publish, conditioned on this account."
  }
}

run "subscribes_every_endpoint" {
  assert {
    condition     = [for k in sort(keys(aws_sns_topic_subscription.this)) : [aws_sns_topic_subscription.this[k].protocol, aws_sns_topic_subscription.this[k].endpoint]] == [["email", "oncall@example.com"], ["sqs", "arn:aws:sqs:eu-west-1:123456789012:pages"]]
    error_message = "Each listed endpoint must be subscribed to the topic."
  }

  assert {
    condition     = aws_sns_topic_subscription.this["1"].raw_message_delivery == true
    error_message = "raw_message_delivery must be passed through for SQS."
  }
}

run "uses_a_supplied_key_instead_of_creating_one" {
  variables {
    kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000"
  }

  assert {
    condition     = length(aws_kms_key.this) == 0 && aws_sns_topic.this.kms_master_key_id == "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000"
    error_message = "A supplied key must be used and no key created."
  }
}

run "rejects_empty_subscription_list" {
  command = plan

  variables {
    subscriptions = []
  }

  expect_failures = [var.subscriptions]
}

run "rejects_unknown_protocol" {
  command = plan

  variables {
    subscriptions = [{ protocol = "pager", endpoint = "oncall@example.com" }]
  }

  expect_failures = [var.subscriptions]
}

run "a_page_that_cannot_be_delivered_is_kept_and_alarms" {
  assert {
    condition     = alltrue([for s in values(aws_sns_topic_subscription.this) : jsondecode(s.redrive_policy).deadLetterTargetArn == aws_sqs_queue.undelivered.arn])
    error_message = "Every subscription must dead-letter undeliverable pages to the module's queue."
  }

  assert {
    condition     = one([for s in jsondecode(aws_sqs_queue_policy.undelivered.policy).Statement : s.Condition.ArnEquals["aws:SourceArn"] if s.Principal.Service == "sns.amazonaws.com"]) == aws_sns_topic.this.arn
    error_message = "Only the on-call topic may send to the dead-letter queue."
  }

  assert {
    condition = (
      toset([for q in aws_cloudwatch_metric_alarm.page_delivery_failures.metric_query : try(q.metric[0].metric_name, q.expression)]) == toset(["NumberOfNotificationsFailed", "ApproximateNumberOfMessagesVisible", "delivery + parked"]) &&
      aws_cloudwatch_metric_alarm.page_delivery_failures.alarm_actions == toset([aws_sns_topic.this.arn])
    )
    error_message = "The delivery-failure alarm must watch failed deliveries and parked pages and page the topic."
  }

  assert {
    condition     = endswith(aws_cloudwatch_metric_alarm.page_delivery_failures.alarm_description, "/docs/runbook.md#page-delivery-failures")
    error_message = "The delivery-failure alarm must link its runbook section."
  }
}

run "the_account_administers_the_topic_key_but_cannot_read_pages_or_grant" {
  assert {
    condition     = !anytrue([for a in flatten([for s in jsondecode(aws_kms_key.this[0].policy).Statement : s.Action if s.Sid == "AccountAdministersKey"]) : contains(["kms:*", "kms:Decrypt", "kms:Encrypt", "kms:CreateGrant"], a) || startswith(a, "kms:GenerateDataKey") || startswith(a, "kms:ReEncrypt")])
    error_message = "The account statement of the topic key must name administrative actions only: no kms:*, use or grant."
  }
}
