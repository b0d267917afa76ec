mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }

  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }

  mock_resource "aws_sqs_queue" {
    defaults = {
      arn = "arn:aws:sqs:eu-west-1:123456789012:gi-dev-orders-events"
      id  = "https://sqs.eu-west-1.amazonaws.com/123456789012/gi-dev-orders-events"
    }
  }
}

variables {
  name          = "gi-dev-orders-events"
  source_uri    = "s3://gi-lake/raw/orders/"
  job_role_name = "gi-dev-orders-load"
}

run "the_bucket_announces_new_objects_under_the_source_prefix_only" {
  command = plan

  assert {
    condition = (aws_s3_bucket_notification.source.bucket == "gi-lake"
      && one(aws_s3_bucket_notification.source.queue).filter_prefix == "raw/orders/"
    && one(aws_s3_bucket_notification.source.queue).events == toset(["s3:ObjectCreated:*"]))
    error_message = "The notification must cover s3:ObjectCreated:* under the source prefix of the source bucket."
  }
}

run "only_s3_for_the_source_bucket_may_send" {
  assert {
    condition = jsondecode(aws_sqs_queue_policy.events.policy).Statement == [{
      Sid       = "S3EventsFromTheSourceBucket"
      Effect    = "Allow"
      Principal = { Service = "s3.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = "arn:aws:sqs:eu-west-1:123456789012:gi-dev-orders-events"
      Condition = {
        ArnEquals    = { "aws:SourceArn" = "arn:aws:s3:::gi-lake" }
        StringEquals = { "aws:SourceAccount" = "123456789012" }
      }
    }]
    error_message = "The queue policy must let S3 send for the source bucket of this account, and nothing else."
  }
}

run "the_job_may_receive_and_delete_on_exactly_this_queue" {
  assert {
    condition = jsondecode(aws_iam_role_policy.job[0].policy).Statement == [{
      Sid      = "DrainTheSourceEventsQueue"
      Effect   = "Allow"
      Action   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"]
      Resource = "arn:aws:sqs:eu-west-1:123456789012:gi-dev-orders-events"
    }]
    error_message = "The job role may drain this queue only, with no other SQS action."
  }

  assert {
    condition     = aws_iam_role_policy.job[0].role == "gi-dev-orders-load"
    error_message = "The policy belongs on the job's role."
  }
}

run "queues_are_encrypted_and_failures_go_to_the_dead_letter_queue" {
  assert {
    condition     = aws_sqs_queue.events.sqs_managed_sse_enabled && aws_sqs_queue.dead_letters.sqs_managed_sse_enabled
    error_message = "Without a KMS key both queues must use SQS-managed SSE."
  }

  assert {
    condition     = jsondecode(aws_sqs_queue.events.redrive_policy).maxReceiveCount == 10
    error_message = "A message received max_receive_count (10) times must move to the dead-letter queue."
  }

  assert {
    condition     = aws_sqs_queue.events.visibility_timeout_seconds == 3600
    error_message = "Received messages must stay hidden longer than a run (default 3600 s)."
  }
}

run "a_customer_key_encrypts_both_queues_and_the_job_may_decrypt" {
  variables {
    kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/0f5c1f5e-1111-2222-3333-444455556666"
  }

  assert {
    condition     = aws_sqs_queue.events.kms_master_key_id == var.kms_key_arn && aws_sqs_queue.dead_letters.kms_master_key_id == var.kms_key_arn
    error_message = "With a KMS key both queues must be encrypted with it."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.job[0].policy).Statement : s if s.Sid == "DecryptTheSourceEvents"]).Resource == var.kms_key_arn
    error_message = "The job must be allowed to decrypt with the queue's key."
  }
}

run "a_source_at_the_bucket_root_announces_the_whole_bucket" {
  command = plan

  variables {
    source_uri = "s3://gi-lake"
  }

  assert {
    condition     = one(aws_s3_bucket_notification.source.queue).filter_prefix == null
    error_message = "A source at the bucket root must not filter by prefix."
  }
}

run "a_source_that_is_not_on_s3_is_refused" {
  command = plan

  variables {
    source_uri = "jdbc:postgresql://db/shop"
  }

  expect_failures = [var.source_uri]
}

run "a_visibility_timeout_shorter_than_a_minute_is_refused" {
  command = plan

  variables {
    visibility_timeout_seconds = 5
  }

  expect_failures = [var.visibility_timeout_seconds]
}

run "a_queue_name_sqs_cannot_take_is_refused" {
  command = plan

  variables {
    name = "orders events!"
  }

  expect_failures = [var.name]
}
