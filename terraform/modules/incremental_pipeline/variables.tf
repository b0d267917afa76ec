variable "name_prefix" {
  description = "Prefix of every named resource (jobs, roles, topic, triggers, workflow), e.g. `gi-dev`."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 3-32 characters of [a-z0-9-], starting with a letter; got \"${var.name_prefix}\"."
  }
}

variable "watermarks_table_name" {
  description = "Name of the watermarks table (the library's default is `glue-watermarks`)."
  type        = string
  default     = "glue-watermarks"
}

variable "deletion_protection_enabled" {
  description = "Protect the watermarks table from deletion. No default: every environment states it."
  type        = bool
}

variable "point_in_time_recovery_enabled" {
  description = "Continuous backups of the watermarks table."
  type        = bool
  default     = true
}

variable "watermarks_kms_key_arn" {
  description = "Customer managed KMS key for the watermarks table; null uses the AWS managed key."
  type        = string
  default     = null
}

variable "scripts_bucket_name" {
  description = "Bucket CI deploys scripts and the library to; also holds the jobs' --TempDir under `tmp/`."
  type        = string
}

variable "scripts_bucket_force_destroy" {
  description = "Let destroy empty the scripts bucket (disposable environments only)."
  type        = bool
  default     = false
}

variable "scripts_bucket_kms_key_arn" {
  description = "Customer managed KMS key for the scripts bucket; null uses SSE-S3."
  type        = string
  default     = null
}

variable "data_kms_key_arns" {
  description = "KMS keys of the data buckets the jobs read and write (SSE-KMS); granted to both job roles."
  type        = list(string)
  default     = []
}

variable "artifact_version" {
  description = "Version folder CI deployed to: scripts at s3://<bucket>/scripts/<version>/<script>.py, library at s3://<bucket>/lib/<version>/glue_incremental.zip."
  type        = string
  default     = "current"

  validation {
    condition     = can(regex("^[A-Za-z0-9._+-]{1,128}$", var.artifact_version))
    error_message = "artifact_version must be 1-128 characters of [A-Za-z0-9._+-]; got \"${var.artifact_version}\"."
  }
}

variable "load_job" {
  description = "The incremental_load job: its runtime arguments (--source, --source_table, --source_format, --watermark_column, --primary_key, --target_path, --partition_by, --lookback), the S3 URIs it reads and writes, its schedule and its size."
  type = object({
    arguments         = map(string)
    read_s3_uris      = list(string)
    write_s3_uris     = list(string)
    schedule          = string
    worker_type       = optional(string, "G.1X")
    number_of_workers = optional(number, 2)
    timeout           = optional(number, 120)
    max_retries       = optional(number, 0)
    bookmark_option   = optional(string, "enable")
  })
}

variable "join_job" {
  description = "The incremental_join job, started when the load job SUCCEEDED: its runtime arguments (--left_path, --right_path, --join_keys, --join_type, --partition_by, --target_path; --upstream_jobs is set by this module), which join side (`left` or `right`) the load job writes, the S3 URIs it reads and writes, and its size."
  type = object({
    arguments         = map(string)
    load_side         = optional(string, "left")
    read_s3_uris      = list(string)
    write_s3_uris     = list(string)
    worker_type       = optional(string, "G.1X")
    number_of_workers = optional(number, 2)
    timeout           = optional(number, 120)
    max_retries       = optional(number, 0)
    bookmark_option   = optional(string, "enable")
  })

  validation {
    condition     = contains(["left", "right"], var.join_job.load_side)
    error_message = "join_job.load_side must be left or right (the join side the load job writes); got \"${var.join_job.load_side}\"."
  }

  validation {
    condition     = !contains(keys(var.join_job.arguments), "--upstream_jobs")
    error_message = "join_job.arguments must not set --upstream_jobs (got \"${lookup(var.join_job.arguments, "--upstream_jobs", "")}\"): the module derives it from the load job so that it always matches the role's read grant."
  }
}

variable "lease_seconds" {
  description = "Run lease duration passed to every job as non-overridable --lease_seconds."
  type        = number
  default     = 900
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the run metrics (glue_incremental.metrics.NAMESPACE)."
  type        = string
  default     = "GlueIncremental"
}

variable "log_retention_days" {
  description = "Retention of the jobs' log groups."
  type        = number
  default     = 365
}

variable "alarms" {
  description = "Alarm tuning shared by both jobs: the schedule interval (alarm period), missed-run grace, consecutive empty runs before paging, and the watermark lag that counts as stale."
  type = object({
    schedule_period_seconds         = number
    watermark_lag_threshold_seconds = number
    missed_run_grace_seconds        = optional(number, 3600)
    zero_records_evaluation_periods = optional(number, 1)
  })
}

variable "oncall_subscriptions" {
  description = "Endpoints paged by the on-call topic ({protocol, endpoint}); at least one."
  type = list(object({
    protocol             = string
    endpoint             = string
    raw_message_delivery = optional(bool, false)
  }))
}

variable "oncall_kms_key_arn" {
  description = "Existing KMS key for the on-call topic; null creates one."
  type        = string
  default     = null
}

variable "job_run_queuing_enabled" {
  description = "Queue runs beyond max_concurrent_runs (1) instead of failing them. Off only where the endpoint does not implement it."
  type        = bool
  default     = true
}

variable "triggers_enabled" {
  description = "Create the load job's scheduled trigger and the join's conditional trigger."
  type        = bool
  default     = true
}

variable "workflow_enabled" {
  description = "Group the triggers in a Glue workflow (one run graph per pipeline run)."
  type        = bool
  default     = true
}

variable "failure_events_enabled" {
  description = "Page on FAILED/TIMEOUT/STOPPED/ERROR runs through EventBridge."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags applied to every resource."
  type        = map(string)
  default     = {}
}
