data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_id   = data.aws_caller_identity.current.account_id
  account_root = "arn:${data.aws_partition.current.partition}:iam::${local.account_id}:root"
  # Alarm actions and EventBridge targets publish as these service principals.
  publisher_services = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]
  kms_key_arn        = var.kms_key_arn != null ? var.kms_key_arn : aws_kms_key.this[0].arn

  # The account administers the topic's key but cannot use it: every administrative action
  # is named, as modules/kms_key does (AWS KMS permissions reference:
  # https://docs.aws.amazon.com/kms/latest/developerguide/kms-api-permissions-reference.html).
  # kms:* would include kms:Decrypt, and kms:CreateGrant, which hands Decrypt to anyone:
  # an identity policy with kms:* in the account could then read every page. No grant at
  # all: SNS, CloudWatch and EventBridge use the key by the key policy alone, not by grants
  # (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html).
  key_admin_actions = [
    "kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias", "kms:DescribeKey", "kms:EnableKey", "kms:DisableKey",
    "kms:EnableKeyRotation", "kms:DisableKeyRotation", "kms:RotateKeyOnDemand", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus",
    "kms:ListGrants", "kms:ListKeyPolicies", "kms:ListKeyRotations", "kms:ListResourceTags", "kms:PutKeyPolicy",
    "kms:UpdateKeyDescription", "kms:RevokeGrant", "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion",
    "kms:CancelKeyDeletion",
  ]
}

resource "aws_kms_key" "this" {
  count = var.kms_key_arn == null ? 1 : 0

  description             = "Encrypts on-call topic ${var.name}."
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_key_deletion_window_in_days
  tags                    = var.tags

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat([
      {
        # Without an account statement the key becomes unmanageable; it names no use.
        Sid       = "AccountAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.key_admin_actions
        Resource  = "*"
      },
      ], length(var.key_admin_role_arns) == 0 ? [] : [
      {
        # The deploy role administers this key by this statement alone, as modules/kms_key's
        # keys (see its deployer_actions): its identity policy has no admin action on key/*.
        Sid       = "DeployRoleAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = sort(var.key_admin_role_arns) }
        Action    = ["kms:EnableKeyRotation", "kms:PutKeyPolicy", "kms:TagResource", "kms:UntagResource", "kms:UpdateKeyDescription", "kms:ScheduleKeyDeletion", "kms:CreateAlias", "kms:DeleteAlias"]
        Resource  = "*"
      },
      ], [
      {
        # SNS encrypts with the publisher's permissions, so the publishers
        # need the key, not SNS: kms:Decrypt and kms:GenerateDataKey* for the
        # CloudWatch alarms and EventBridge rules that page ("Enable compatibility
        # between event sources from AWS services and encrypted topics",
        # https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services).
        Sid       = "PublishersEncryptForTopic"
        Effect    = "Allow"
        Principal = { Service = local.publisher_services }
        Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
        Resource  = "*"
      },
    ])
  })
}

resource "aws_kms_alias" "this" {
  count = var.kms_key_arn == null ? 1 : 0

  name          = "alias/${var.name}"
  target_key_id = aws_kms_key.this[0].key_id
}

resource "aws_sns_topic" "this" {
  name              = var.name
  kms_master_key_id = local.kms_key_arn
  tags              = var.tags
}

resource "aws_sns_topic_policy" "this" {
  arn = aws_sns_topic.this.arn

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountManagesTopic"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action = [
          "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission", "SNS:RemovePermission",
          "SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish",
        ]
        Resource = aws_sns_topic.this.arn
      },
      {
        # Failure events (EventBridge) and alarms (CloudWatch) of this
        # account only: aws:SourceAccount guards against confused deputies.
        Sid       = "AlarmsAndEventsPublish"
        Effect    = "Allow"
        Principal = { Service = local.publisher_services }
        Action    = "SNS:Publish"
        Resource  = aws_sns_topic.this.arn
        Condition = {
          StringEquals = { "aws:SourceAccount" = local.account_id }
        }
      },
    ]
  })
}

resource "aws_sns_topic_subscription" "this" {
  # Keyed by position, not endpoint, so endpoints only known after apply
  # (a queue created alongside) still plan.
  for_each = { for i, s in var.subscriptions : tostring(i) => s }

  topic_arn            = aws_sns_topic.this.arn
  protocol             = each.value.protocol
  endpoint             = each.value.endpoint
  raw_message_delivery = contains(["sqs", "https", "firehose"], each.value.protocol) ? each.value.raw_message_delivery : null
  redrive_policy       = jsonencode({ deadLetterTargetArn = aws_sqs_queue.undelivered.arn })

  depends_on = [aws_sqs_queue_policy.undelivered]
}

# A page SNS could not deliver (the pager's endpoint down, a deleted queue)
# lands here instead of being dropped after SNS's retries, and an alarm says so.
resource "aws_sqs_queue" "undelivered" {
  name                      = "${var.name}-undelivered"
  sqs_managed_sse_enabled   = true
  message_retention_seconds = 1209600
  tags                      = var.tags
}

resource "aws_sqs_queue_policy" "undelivered" {
  queue_url = aws_sqs_queue.undelivered.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "TopicDeadLetters"
        Effect    = "Allow"
        Principal = { Service = "sns.amazonaws.com" }
        Action    = "sqs:SendMessage"
        Resource  = aws_sqs_queue.undelivered.arn
        Condition = { ArnEquals = { "aws:SourceArn" = aws_sns_topic.this.arn } }
      },
    ]
  })
}

# Fires on the first failed delivery (NumberOfNotificationsFailed) or a page
# parked in the dead-letter queue. It pages the same topic: the subscriptions
# that still work (email next to a pager) carry it.
resource "aws_cloudwatch_metric_alarm" "page_delivery_failures" {
  alarm_name        = "${var.name}-page-delivery-failures"
  alarm_description = "On-call topic ${var.name} could not deliver a page to a subscriber; undelivered pages wait in ${aws_sqs_queue.undelivered.name}. Runbook: ${var.runbook_base_url}#page-delivery-failures"

  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  datapoints_to_alarm = 1
  treat_missing_data  = "notBreaching"

  metric_query {
    id          = "failed"
    expression  = "delivery + parked"
    label       = "Failed or parked pages"
    return_data = true
  }

  metric_query {
    id = "delivery"
    metric {
      namespace   = "AWS/SNS"
      metric_name = "NumberOfNotificationsFailed"
      dimensions  = { TopicName = aws_sns_topic.this.name }
      stat        = "Sum"
      period      = 300
    }
  }

  metric_query {
    id = "parked"
    metric {
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      dimensions  = { QueueName = aws_sqs_queue.undelivered.name }
      stat        = "Maximum"
      period      = 300
    }
  }

  alarm_actions = [aws_sns_topic.this.arn]
  ok_actions    = [aws_sns_topic.this.arn]
  tags          = var.tags
}
