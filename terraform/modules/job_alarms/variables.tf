variable "job_name" {
  description = "Glue job to watch: the `JobName` dimension of its run metrics and the jobName of its state-change events."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]{0,59}$", var.job_name))
    error_message = "job_name must be 1-60 characters of [A-Za-z0-9_.-]; got \"${var.job_name}\"."
  }
}

variable "alarm_topic_arn" {
  description = "On-call SNS topic: alarm_actions and ok_actions of every alarm, and the target of the failure event rule."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN; got \"${var.alarm_topic_arn}\"."
  }
}

variable "metrics_namespace" {
  description = "Namespace the runtime publishes run metrics to (glue_incremental.run.metrics.NAMESPACE)."
  type        = string
  default     = "GlueIncremental"

  validation {
    condition     = can(regex("^[A-Za-z0-9._/#:-]{1,255}$", var.metrics_namespace)) && !startswith(var.metrics_namespace, "AWS/")
    error_message = "metrics_namespace must be 1-255 characters of [A-Za-z0-9._/#:-] and must not start with AWS/; got \"${var.metrics_namespace}\"."
  }
}

variable "schedule_period_seconds" {
  description = "Interval between scheduled runs (3600 for hourly, 86400 for daily). Period of the zero-record and staleness alarms, so each period holds one run. 10, 20 and 30 (CloudWatch's high-resolution alarm periods) exist for local environments that must evaluate within seconds: the job publishes every metric with StorageResolution 1, which such periods need (glue_incremental.run.metrics)."
  type        = number

  validation {
    condition     = contains([10, 20, 30], var.schedule_period_seconds) || (var.schedule_period_seconds >= 60 && var.schedule_period_seconds <= 86400 && var.schedule_period_seconds % 60 == 0)
    error_message = "schedule_period_seconds must be 10, 20, 30 (high-resolution alarms) or a multiple of 60 from 60 to 86400, the alarm periods CloudWatch accepts (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html); got ${var.schedule_period_seconds}."
  }
}

variable "zero_records_evaluation_periods" {
  description = "Consecutive zero-record runs before paging (1 pages on the first empty run)."
  type        = number
  default     = 1

  validation {
    condition     = var.zero_records_evaluation_periods >= 1 && var.zero_records_evaluation_periods <= 24 && floor(var.zero_records_evaluation_periods) == var.zero_records_evaluation_periods
    error_message = "zero_records_evaluation_periods must be a whole number from 1 to 24; got ${var.zero_records_evaluation_periods}."
  }
}

variable "missed_run_grace_seconds" {
  description = "How late a run may be before it counts as missed. The missed-run alarm looks at a window of schedule_period_seconds + this: one period when it is at most a day (CloudWatch's longest alarm period), otherwise N equal periods of at most a day that must all be empty."
  type        = number
  default     = 3600

  validation {
    condition     = var.missed_run_grace_seconds >= 0 && var.missed_run_grace_seconds <= 86400 && var.missed_run_grace_seconds % 60 == 0
    error_message = "missed_run_grace_seconds must be a multiple of 60 from 0 to 86400; got ${var.missed_run_grace_seconds}."
  }
}

variable "watermark_lag_threshold_seconds" {
  description = "Page when a run reports WatermarkLagSeconds (now minus committed watermark) above this."
  type        = number

  validation {
    condition     = var.watermark_lag_threshold_seconds > 0
    error_message = "watermark_lag_threshold_seconds must be positive; got ${var.watermark_lag_threshold_seconds}."
  }
}

variable "enable_failure_events" {
  description = "Create the EventBridge rule that pages on FAILED, TIMEOUT, STOPPED and ERROR runs. Disable only on emulators that cannot serve EventBridge."
  type        = bool
  default     = true
}

variable "runbook_base_url" {
  description = "The on-call runbook (docs/runbook.md): every alarm description and the failed-run page link `<base>#<alarm key with - for _>` (zero-records, missed-run, watermark-stale, late-files, null-watermarks, future-watermarks, metric-publish-failures, run-failed). Null uses the repository's docs/runbook.md."
  type        = string
  default     = "https://github.com/example/glue-incremental/blob/main/docs/runbook.md"
  nullable    = false

  validation {
    # AlarmDescription is at most 1,024 characters (PutMetricAlarm); the longest
    # description leaves room for a base URL of 300.
    condition     = can(regex("^https://[^\\s#]{1,300}$", var.runbook_base_url))
    error_message = "runbook_base_url must be an https:// URL of at most 308 characters without a #fragment (alarm descriptions are at most 1,024 characters: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html); got \"${var.runbook_base_url}\"."
  }
}

variable "tags" {
  description = "Tags applied to the alarms and the event rule."
  type        = map(string)
  default     = {}
}

variable "count_alarms" {
  description = "Which per-run count alarms page (each fires when one run reports more than 0): late files, null watermarks, future watermarks. The metric-publish-failure alarm always exists."
  type = object({
    late_files        = optional(bool, true)
    null_watermarks   = optional(bool, true)
    future_watermarks = optional(bool, true)
  })
  default = {}
}

variable "slow_run_warning_enabled" {
  description = "Page when a run is still going past its job's NotifyDelayAfter (\"Glue Job Run Status\" event; set the job's notify_delay_after below its timeout)."
  type        = bool
  default     = false
}

variable "event_retry" {
  description = "EventBridge's retry policy for the page targets: how long (60-86,400 s) and how often (0-185) a failed publish is retried before the event goes to the job's dead-letter queue `<job>-event-dead-letters` (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html)."
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
