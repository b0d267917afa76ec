# S3 event notifications of one file source to an SQS queue, for `--discovery notifications`.
#
# S3 allows ONE notification configuration per bucket (aws_s3_bucket_notification
# replaces the whole of it): every pipeline reading one bucket must go through one
# instance of this module per bucket, or the last apply wins. The incremental_pipeline
# module refuses two notifying pipelines on one bucket.

locals {
  bucket = split("/", replace(var.source_uri, "/^s3a?:\\/\\//", ""))[0]
  prefix = trimprefix(replace(var.source_uri, "/^s3a?:\\/\\/[^/]+/?/", ""), "/")
  # The whole bucket when the source is the bucket itself.
  filter_prefix = local.prefix == "" ? null : (endswith(local.prefix, "/") ? local.prefix : "${local.prefix}/")
  bucket_arn    = "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}"
}

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

resource "aws_sqs_queue" "dead_letters" {
  name                              = "${var.name}-dlq"
  message_retention_seconds         = 1209600
  sqs_managed_sse_enabled           = var.kms_key_arn == null ? true : null
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = var.kms_key_arn == null ? null : 300
  tags                              = var.tags
}

resource "aws_sqs_queue" "events" {
  name                              = var.name
  visibility_timeout_seconds        = var.visibility_timeout_seconds
  message_retention_seconds         = var.message_retention_seconds
  sqs_managed_sse_enabled           = var.kms_key_arn == null ? true : null
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = var.kms_key_arn == null ? null : 300
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dead_letters.arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}

resource "aws_sqs_queue_redrive_allow_policy" "dead_letters" {
  queue_url = aws_sqs_queue.dead_letters.id
  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.events.arn]
  })
}

# Only S3, for this bucket in this account, may send; nothing else gets any access here.
# jsonencode rather than aws_iam_policy_document keeps the documents known at plan (and testable).
resource "aws_sqs_queue_policy" "events" {
  queue_url = aws_sqs_queue.events.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "S3EventsFromTheSourceBucket"
      Effect    = "Allow"
      Principal = { Service = "s3.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = aws_sqs_queue.events.arn
      Condition = {
        ArnEquals    = { "aws:SourceArn" = local.bucket_arn }
        StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id }
      }
    }]
  })
}

resource "aws_s3_bucket_notification" "source" {
  bucket = local.bucket

  queue {
    id            = var.name
    queue_arn     = aws_sqs_queue.events.arn
    events        = ["s3:ObjectCreated:*"]
    filter_prefix = local.filter_prefix
  }

  # S3 checks that it may send to the queue when the configuration is written.
  depends_on = [aws_sqs_queue_policy.events]
}

locals {
  job_policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      [{
        Sid      = "DrainTheSourceEventsQueue"
        Effect   = "Allow"
        Action   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"]
        Resource = aws_sqs_queue.events.arn
      }],
      var.kms_key_arn == null ? [] : [{
        Sid      = "DecryptTheSourceEvents"
        Effect   = "Allow"
        Action   = "kms:Decrypt"
        Resource = var.kms_key_arn
      }],
    )
  })
}

# Without job_role_name the caller attaches `job_policy_json` itself (incremental_pipeline
# does: the job's arguments need the queue URL, so the queue must exist before the job).
resource "aws_iam_role_policy" "job" {
  count = var.job_role_name == null ? 0 : 1

  name   = "${var.name}-receive"
  role   = var.job_role_name
  policy = local.job_policy
}
