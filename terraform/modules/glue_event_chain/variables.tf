variable "name" {
  description = "Prefix of the state machine, its roles and rules (the environment's name prefix)."
  type        = string

  # Role names (glue-<name>-start-dependents, named so the CI deploy role of
  # modules/ci_roles may manage them) are at most 64 characters:
  # https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html
  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,36}$", var.name))
    error_message = "name must be 1-36 characters of [A-Za-z0-9_-] (it prefixes IAM role names of at most 64 characters, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html); got \"${var.name}\"."
  }
}

variable "dependencies" {
  description = "Dependent Glue job name => the upstream job names whose SUCCEEDED runs start it, and `logical`: AND (every upstream's latest run SUCCEEDED) or ANY."
  type = map(object({
    upstream_job_names = list(string)
    logical            = optional(string, "AND")
  }))

  validation {
    condition     = alltrue([for job, d in var.dependencies : length(d.upstream_job_names) > 0 && !contains(d.upstream_job_names, job)])
    error_message = "each dependency needs at least one upstream, not itself; invalid: ${join(", ", [for job, d in var.dependencies : job if length(d.upstream_job_names) == 0 || contains(d.upstream_job_names, job)])}."
  }

  validation {
    condition     = alltrue([for d in values(var.dependencies) : contains(["AND", "ANY"], d.logical)])
    error_message = "logical must be AND or ANY (as a Glue trigger predicate, https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-trigger.html#aws-glue-api-jobs-trigger-Predicate); invalid: ${join(", ", [for job, d in var.dependencies : "${job} (${d.logical})" if !contains(["AND", "ANY"], d.logical)])}."
  }

  # Rule names are at most 64 characters; the suffix is 19.
  # https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html
  validation {
    condition     = alltrue([for job in keys(var.dependencies) : length(job) <= 45])
    error_message = "a dependent job name must be at most 45 characters (it names the EventBridge rule, at most 64, https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html); too long: ${join(", ", [for job in keys(var.dependencies) : job if length(job) > 45])}."
  }
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary of the two roles; null: none."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags applied to every resource."
  type        = map(string)
  default     = {}
}

variable "alarm_topic_arn" {
  description = "The on-call SNS topic the FailedInvocations and failed-execution alarms page (modules/oncall topic_arn)."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>); got \"${var.alarm_topic_arn}\"."
  }
}

variable "event_retry" {
  description = "EventBridge's retry policy for each rule's target: how long (60-86,400 s) and how often (0-185) a failed StartExecution is retried before the event goes to the dead-letter queue `<name>-start-dependents-dead-letters` (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html)."
  type = object({
    maximum_event_age_in_seconds = optional(number, 3600)
    maximum_retry_attempts       = optional(number, 20)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.event_retry.maximum_event_age_in_seconds >= 60 && var.event_retry.maximum_event_age_in_seconds <= 86400 && floor(var.event_retry.maximum_event_age_in_seconds) == var.event_retry.maximum_event_age_in_seconds
    error_message = "event_retry.maximum_event_age_in_seconds must be whole seconds from 60 to 86400 (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html); got ${var.event_retry.maximum_event_age_in_seconds}."
  }

  validation {
    condition     = var.event_retry.maximum_retry_attempts >= 0 && var.event_retry.maximum_retry_attempts <= 185 && floor(var.event_retry.maximum_retry_attempts) == var.event_retry.maximum_retry_attempts
    error_message = "event_retry.maximum_retry_attempts must be a whole number from 0 to 185 (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html); got ${var.event_retry.maximum_retry_attempts}."
  }
}

variable "log_level" {
  description = "What the state machine logs to its log group: ERROR (every failed execution's error and cause) or ALL (every state too). Execution data (inputs, outputs) is never logged."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ERROR", "ALL"], var.log_level)
    error_message = "log_level must be ERROR or ALL (FATAL and OFF would hide a failed execution's error: https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html); got \"${var.log_level}\"."
  }
}

variable "log_retention_days" {
  description = "Retention of the state machine's log group."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653); got ${var.log_retention_days}."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key ARN for the state machine's log group (its key policy must allow logs.<region>.amazonaws.com). Null keeps CloudWatch Logs' default encryption."
  type        = string
  default     = null

  validation {
    condition     = var.log_kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.log_kms_key_arn))
    error_message = "log_kms_key_arn must be a KMS key ARN; got \"${coalesce(var.log_kms_key_arn, "null")}\"."
  }
}

variable "runbook_base_url" {
  description = "The on-call runbook the alarms link as `<base>#event-delivery-failed` and `<base>#start-dependents-failed`."
  type        = string
  default     = "https://github.com/example/glue-incremental/blob/main/docs/runbook.md"
  nullable    = false

  validation {
    condition     = can(regex("^https://[^\\s#]{1,300}$", var.runbook_base_url))
    error_message = "runbook_base_url must be an https:// URL of at most 308 characters without a #fragment; got \"${var.runbook_base_url}\"."
  }
}
