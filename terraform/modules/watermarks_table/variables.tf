variable "name" {
  description = "Name of the DynamoDB table holding run watermarks, leases and commits. The Python library defaults to `glue-watermarks`."
  type        = string
  default     = "glue-watermarks"

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]{3,255}$", var.name))
    error_message = "DynamoDB table names are 3-255 characters of [A-Za-z0-9_.-]; got \"${var.name}\"."
  }
}

variable "billing_mode" {
  description = "PAY_PER_REQUEST (default: a few items per run, bursty) or PROVISIONED (then set read_capacity and write_capacity)."
  type        = string
  default     = "PAY_PER_REQUEST"

  validation {
    condition     = contains(["PAY_PER_REQUEST", "PROVISIONED"], var.billing_mode)
    error_message = "billing_mode must be PAY_PER_REQUEST or PROVISIONED; got \"${var.billing_mode}\"."
  }
}

variable "read_capacity" {
  description = "Provisioned read capacity units; required when billing_mode is PROVISIONED, ignored otherwise."
  type        = number
  default     = null

  validation {
    condition     = var.read_capacity == null || try(var.read_capacity >= 1 && var.read_capacity <= 40000 && floor(var.read_capacity) == var.read_capacity, false)
    error_message = "read_capacity must be a whole number between 1 and 40000; got ${coalesce(var.read_capacity, -1)}."
  }
}

variable "write_capacity" {
  description = "Provisioned write capacity units; required when billing_mode is PROVISIONED, ignored otherwise."
  type        = number
  default     = null

  validation {
    condition     = var.write_capacity == null || try(var.write_capacity >= 1 && var.write_capacity <= 40000 && floor(var.write_capacity) == var.write_capacity, false)
    error_message = "write_capacity must be a whole number between 1 and 40000; got ${coalesce(var.write_capacity, -1)}."
  }
}

variable "point_in_time_recovery_enabled" {
  description = "Keep 35 days of continuous backups. A lost or corrupted watermark means reprocessing or skipping data, so this stays on outside emulators that cannot serve it."
  type        = bool
  default     = true
}

variable "kms_key_arn" {
  description = "ARN of a customer managed KMS key for server-side encryption. Null uses the AWS managed key `alias/aws/dynamodb`."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>); got \"${coalesce(var.kms_key_arn, "null")}\"."
  }
}

variable "kms_encryption_enabled" {
  description = "Encrypt the table with a KMS key: kms_key_arn, or the AWS managed key when that is null. false leaves DynamoDB's default AWS owned key; only for an emulator that does not describe a table's encryption back (DynamoDB Local), where every plan would update it and the update fails."
  type        = bool
  default     = true
  nullable    = false
}

variable "deletion_protection_enabled" {
  description = "Refuse DeleteTable. Deleting the table forgets every job's watermark, so it is on unless an environment is disposable."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags applied to the table."
  type        = map(string)
  default     = {}
}

variable "history_ttl_enabled" {
  description = "Let DynamoDB delete history and run-pointer items past the library's retention (their `expires_at`, 400 days after the commit); rewinds reach back that far. The current state and the lease never expire."
  type        = bool
  default     = true
}
