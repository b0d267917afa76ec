variable "name" {
  description = "Name of the on-call SNS topic every alarm and failure event pages."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,256}$", var.name))
    error_message = "name must be 1-256 characters of [A-Za-z0-9_-] (standard topic); got \"${var.name}\"."
  }
}

variable "subscriptions" {
  description = "Who gets paged. At least one: a topic nobody reads turns every alarm into silence."
  type = list(object({
    protocol             = string
    endpoint             = string
    raw_message_delivery = optional(bool, false)
  }))

  validation {
    condition     = length(var.subscriptions) > 0
    error_message = "subscriptions must list at least one {protocol, endpoint}; got an empty list, so nobody would be paged."
  }

  validation {
    condition     = alltrue([for s in var.subscriptions : contains(["email", "email-json", "https", "sqs", "lambda", "sms"], s.protocol)])
    error_message = "subscription protocol must be one of email, email-json, https, sqs, lambda, sms; got: ${join(", ", [for s in var.subscriptions : "\"${s.protocol}\"" if !contains(["email", "email-json", "https", "sqs", "lambda", "sms"], s.protocol)])}."
  }

  validation {
    condition = alltrue([for s in var.subscriptions : (
      contains(["email", "email-json"], s.protocol) ? can(regex("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", s.endpoint)) :
      s.protocol == "https" ? startswith(s.endpoint, "https://") :
      s.protocol == "sqs" ? can(regex("^arn:aws[a-z-]*:sqs:", s.endpoint)) :
      s.protocol == "lambda" ? can(regex("^arn:aws[a-z-]*:lambda:", s.endpoint)) :
      can(regex("^\\+[0-9]{6,15}$", s.endpoint))
    )])
    error_message = "Each subscription endpoint must match its protocol (email address, https:// URL, SQS or Lambda ARN, E.164 phone number); mismatched: ${join(", ", [for s in var.subscriptions : "${s.protocol} \"${s.endpoint}\"" if !(
      contains(["email", "email-json"], s.protocol) ? can(regex("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", s.endpoint)) :
      s.protocol == "https" ? startswith(s.endpoint, "https://") :
      s.protocol == "sqs" ? can(regex("^arn:aws[a-z-]*:sqs:", s.endpoint)) :
      s.protocol == "lambda" ? can(regex("^arn:aws[a-z-]*:lambda:", s.endpoint)) :
      can(regex("^\\+[0-9]{6,15}$", s.endpoint))
    )])}."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the topic; its policy must let cloudwatch.amazonaws.com and events.amazonaws.com use it. Null creates such a key. (The AWS managed alias/aws/sns key cannot be used: alarms and EventBridge may not use it.)"
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN; got \"${coalesce(var.kms_key_arn, "null")}\"."
  }
}

variable "key_admin_role_arns" {
  description = "Roles that apply the topic's key it creates (the CI deploy role), named as its principals for the apply's actions on it (modules/kms_key `admin_role_arns`)."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "kms_key_deletion_window_in_days" {
  description = "Waiting period before a destroyed topic key is deleted."
  type        = number
  default     = 30

  validation {
    condition     = var.kms_key_deletion_window_in_days >= 7 && var.kms_key_deletion_window_in_days <= 30 && floor(var.kms_key_deletion_window_in_days) == var.kms_key_deletion_window_in_days
    error_message = "kms_key_deletion_window_in_days must be a whole number from 7 to 30; got ${var.kms_key_deletion_window_in_days}."
  }
}

variable "tags" {
  description = "Tags applied to the topic and its key."
  type        = map(string)
  default     = {}
}

variable "runbook_base_url" {
  description = "The on-call runbook the delivery-failure alarm links as `<base>#page-delivery-failures`; null: the repository's docs/runbook.md (the same default as modules/job_alarms)."
  type        = string
  default     = "https://github.com/example/glue-incremental/blob/main/docs/runbook.md"
  nullable    = false

  validation {
    condition     = can(regex("^https://[^\\s#]{1,300}$", var.runbook_base_url))
    error_message = "runbook_base_url must be an https:// URL of at most 308 characters without a #fragment (alarm descriptions are at most 1,024 characters: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html); got \"${var.runbook_base_url}\"."
  }
}
