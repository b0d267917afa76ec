variable "name" {
  description = "Name of the queue (the dead-letter queue gets `-dlq`), e.g. `gi-dev-orders-events`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,76}$", var.name))
    error_message = "name must be 1-76 letters, digits, `-` or `_` (SQS allows 80 characters; `-dlq` is added)."
  }
}

variable "source_uri" {
  description = "The source whose new objects are announced: `s3://bucket/prefix/` (the pipeline's `source.uri`)."
  type        = string

  validation {
    condition     = can(regex("^s3a?://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$", var.source_uri))
    error_message = "source_uri must be an s3://bucket/prefix URI: S3 event notifications exist for S3 sources only."
  }
}

variable "job_role_name" {
  description = "The Glue job's IAM role: it may receive, delete and change the visibility of messages on this queue only. Null: attach `job_policy_json` yourself."
  type        = string
  default     = null
}

variable "kms_key_arn" {
  description = "Customer key for the queues' encryption; null: SQS-managed SSE. The key policy must let s3.amazonaws.com use it (GenerateDataKey, Decrypt)."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:aws:kms:...) or null."
  }
}

variable "visibility_timeout_seconds" {
  description = "How long a received message stays hidden: longer than a run (the job deletes it only after its commit)."
  type        = number
  default     = 3600

  validation {
    condition     = var.visibility_timeout_seconds >= 60 && var.visibility_timeout_seconds <= 43200
    error_message = "visibility_timeout_seconds must be between 60 and 43200 (SQS's maximum, 12 hours)."
  }
}

variable "max_receive_count" {
  description = "Receives before a message moves to the dead-letter queue (a message that is not an S3 event is never deleted by the job)."
  type        = number
  default     = 10

  validation {
    condition     = var.max_receive_count >= 1 && var.max_receive_count <= 1000
    error_message = "max_receive_count must be between 1 and 1000."
  }
}

variable "message_retention_seconds" {
  description = "How long an unreceived event is kept: longer than the longest pause of the pipeline (the full listing every N runs still finds the files)."
  type        = number
  default     = 1209600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "message_retention_seconds must be between 60 and 1209600 (14 days)."
  }
}

variable "tags" {
  description = "Tags applied to both queues."
  type        = map(string)
  default     = {}
}
