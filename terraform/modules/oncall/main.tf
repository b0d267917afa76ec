data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_id   = data.aws_caller_identity.current.account_id
  account_root = "arn:${data.aws_partition.current.partition}:iam::${local.account_id}:root"
  # Alarm actions and EventBridge targets publish as these service principals.
  publisher_services = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]
  kms_key_arn        = var.kms_key_arn != null ? var.kms_key_arn : aws_kms_key.this[0].arn
}

resource "aws_kms_key" "this" {
  count = var.kms_key_arn == null ? 1 : 0

  description             = "Encrypts on-call topic ${var.name}."
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_key_deletion_window_in_days
  tags                    = var.tags

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        # Without an account statement the key becomes unmanageable.
        Sid       = "AccountAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        # SNS encrypts with the publisher's permissions, so the publishers
        # need the key, not SNS.
        Sid       = "PublishersEncryptForTopic"
        Effect    = "Allow"
        Principal = { Service = local.publisher_services }
        Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
        Resource  = "*"
      },
    ]
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
}
