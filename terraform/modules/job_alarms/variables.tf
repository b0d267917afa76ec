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
  description = "Namespace the runtime publishes run metrics to (glue_incremental.metrics.NAMESPACE)."
  type        = string
  default     = "GlueIncremental"

  validation {
    condition     = can(regex("^[A-Za-z0-9._/#:-]{1,255}$", var.metrics_namespace)) && !startswith(var.metrics_namespace, "AWS/")
    error_message = "metrics_namespace must be 1-255 characters of [A-Za-z0-9._/#:-] and must not start with AWS/; got \"${var.metrics_namespace}\"."
  }
}

variable "schedule_period_seconds" {
  description = "Interval between scheduled runs (3600 for hourly, 86400 for daily). Period of the zero-record and staleness alarms, so each period holds one run. 10 and 30 (CloudWatch's high-resolution alarm periods) exist for local environments that must evaluate within seconds."
  type        = number

  validation {
    condition     = contains([10, 30], var.schedule_period_seconds) || (var.schedule_period_seconds >= 60 && var.schedule_period_seconds <= 86400 && var.schedule_period_seconds % 60 == 0)
    error_message = "schedule_period_seconds must be 10, 30 (high-resolution alarms) or a multiple of 60 from 60 to 86400; got ${var.schedule_period_seconds}."
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
  description = "How late a run may be before it counts as missed. The missed-run alarm looks at one window of schedule_period_seconds + this."
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

variable "runbook_url" {
  description = "On-call runbook URL appended to every alarm description (the page links to it). Null adds none."
  type        = string
  default     = null

  validation {
    condition     = var.runbook_url == null || can(regex("^https://[^\\s]{1,400}$", var.runbook_url))
    error_message = "runbook_url must be an https:// URL of at most 408 characters; got \"${coalesce(var.runbook_url, "null")}\"."
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
