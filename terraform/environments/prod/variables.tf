variable "environment" {
  description = "Environment name, used in tags."
  type        = string

  validation {
    condition     = contains(["dev", "prod"], var.environment)
    error_message = "environment must be dev or prod; got \"${var.environment}\"."
  }
}

variable "region" {
  description = "AWS region."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "region must look like eu-west-1; got \"${var.region}\"."
  }
}

variable "name_prefix" {
  description = "Prefix of every named resource."
  type        = string
}

variable "watermarks_table_name" {
  description = "Name of the watermarks table."
  type        = string
  default     = "glue-watermarks"
}

variable "deletion_protection_enabled" {
  description = "Protect the watermarks table from deletion."
  type        = bool
}

variable "scripts_bucket_name" {
  description = "Bucket CI deploys scripts and the library to."
  type        = string
}

variable "artifact_version" {
  description = "Version folder of the deployed scripts and library (`current` follows the latest deploy)."
  type        = string
  default     = "current"
}

variable "load_job" {
  description = "incremental_load job: runtime arguments, S3 URIs read and written, schedule (AWS cron) and size."
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
  description = "incremental_join job (started when the load SUCCEEDED): runtime arguments, S3 URIs read and written, and size."
  type = object({
    arguments         = map(string)
    read_s3_uris      = list(string)
    write_s3_uris     = list(string)
    worker_type       = optional(string, "G.1X")
    number_of_workers = optional(number, 2)
    timeout           = optional(number, 120)
    max_retries       = optional(number, 0)
    bookmark_option   = optional(string, "enable")
  })
}

variable "alarms" {
  description = "Alarm tuning: schedule interval (alarm period), stale-watermark threshold, missed-run grace and consecutive empty runs before paging."
  type = object({
    schedule_period_seconds         = number
    watermark_lag_threshold_seconds = number
    missed_run_grace_seconds        = optional(number, 3600)
    zero_records_evaluation_periods = optional(number, 1)
  })
}

variable "oncall_subscriptions" {
  description = "Who the on-call topic pages ({protocol, endpoint}); at least one."
  type = list(object({
    protocol             = string
    endpoint             = string
    raw_message_delivery = optional(bool, false)
  }))
}
