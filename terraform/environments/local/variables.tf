variable "aws_endpoint_url" {
  description = "The LocalStack endpoint: every service but those given their own endpoint below."
  type        = string
  default     = "http://localhost:4566"

  validation {
    condition     = can(regex("^https?://[^/\\s]+/?$", var.aws_endpoint_url))
    error_message = "aws_endpoint_url must be an http(s)://host[:port] URL; got \"${var.aws_endpoint_url}\"."
  }
}

variable "dynamodb_endpoint_url" {
  description = "Endpoint for DynamoDB when it is not aws_endpoint_url (DynamoDB Local in tests and the demo); null: aws_endpoint_url."
  type        = string
  default     = null

  validation {
    condition     = var.dynamodb_endpoint_url == null || can(regex("^https?://[^/\\s]+/?$", var.dynamodb_endpoint_url))
    error_message = "dynamodb_endpoint_url must be an http(s)://host[:port] URL or null; got \"${coalesce(var.dynamodb_endpoint_url, "null")}\"."
  }
}

variable "glue_endpoint_url" {
  description = "Endpoint for Glue when it is not aws_endpoint_url (LocalStack community has no Glue: moto's server in tests and the demo); null: aws_endpoint_url."
  type        = string
  default     = null

  validation {
    condition     = var.glue_endpoint_url == null || can(regex("^https?://[^/\\s]+/?$", var.glue_endpoint_url))
    error_message = "glue_endpoint_url must be an http(s)://host[:port] URL or null; got \"${coalesce(var.glue_endpoint_url, "null")}\"."
  }
}

variable "alarm_period_seconds" {
  description = "Period of the zero-record and staleness alarms. 10 here: LocalStack evaluates an alarm every period, so a zero-record run pages within seconds."
  type        = number
  default     = 10

  validation {
    condition     = contains([10, 30], var.alarm_period_seconds) || (var.alarm_period_seconds >= 60 && var.alarm_period_seconds % 60 == 0)
    error_message = "alarm_period_seconds must be 10, 30 or a multiple of 60; got ${var.alarm_period_seconds}."
  }
}

variable "region" {
  description = "Region the emulator pretends to be."
  type        = string
  default     = "us-east-1"

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "region must look like us-east-1; got \"${var.region}\"."
  }
}

variable "name_prefix" {
  description = "Prefix of every named resource; change it to run two copies against one endpoint."
  type        = string
  default     = "gi-local"
}

variable "watermarks_table_name" {
  description = "Name of the watermarks table."
  type        = string
  default     = "glue-watermarks"
}

variable "scripts_bucket_name" {
  description = "Name of the scripts bucket."
  type        = string
  default     = "gi-local-scripts"
}

variable "data_bucket_name" {
  description = "Bucket the local jobs read from and write to (created here so the demo has somewhere to put data)."
  type        = string
  default     = "gi-local-data"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.data_bucket_name))
    error_message = "data_bucket_name must be a valid S3 bucket name; got \"${var.data_bucket_name}\"."
  }
}

variable "load_schedule" {
  description = "AWS cron schedule of the load job."
  type        = string
  default     = "cron(0 * * * ? *)"
}

variable "point_in_time_recovery_enabled" {
  description = "Continuous backups of the watermarks table (false for DynamoDB Local, which has no UpdateContinuousBackups)."
  type        = bool
  default     = true
}

variable "job_run_queuing_enabled" {
  description = "Set job_run_queuing_enabled on the Glue jobs. moto 5.2.5 does not store it, so the next plan would always want to change it."
  type        = bool
  default     = false
}

variable "triggers_enabled" {
  description = "Create the Glue scheduled/conditional triggers."
  type        = bool
  default     = true
}

variable "dashboard_enabled" {
  description = "Create the CloudWatch dashboard (toggle for emulators that cannot store dashboards)."
  type        = bool
  default     = true
}

variable "failure_events_enabled" {
  description = "Create the EventBridge rules paging on failed runs."
  type        = bool
  default     = true
}

variable "jdbc_source" {
  description = "A database for the `payments` JDBC load (table with payment_id and updated_at): its jdbc: URL, table and the Secrets Manager secret holding its username/password. Null declares no JDBC pipeline."
  type = object({
    uri        = string
    table      = string
    secret_arn = string
  })
  default = null
}

variable "release" {
  description = "The release every job runs: `make up`, `make apply` and `make demo` pass the id this checkout builds (`python -m glue_incremental deploy --print-release`) and then publish it. There are no mutable aliases (docs/releases.md)."
  type        = string
  nullable    = false
}
