variable "environment" {
  description = "Environment name (dev or prod): tags, and the check that the tfvars and backend belong together."
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

variable "pipelines" {
  description = "The environment's pipelines; see modules/incremental_pipeline's `pipelines` for the fields."
  # Deliberately untyped here, like `alarms` and `oncall_subscriptions`: the one
  # definition of each object, its defaults and its validations is the module's
  # variable, so this root cannot drift from it (the drift that left environments
  # unable to set load_side).
  type = any
}

variable "alarms" {
  description = "Alarm tuning every pipeline starts from; see modules/incremental_pipeline's `alarms` (typed and validated there, like `pipelines`)."
  type        = any
}

variable "runbook_base_url" {
  description = "On-call runbook every alarm and page links as `<base>#<alarm key with - for _>`; null: the repository's docs/runbook.md (modules/job_alarms validates it)."
  type        = string
  default     = null
}

variable "oncall_subscriptions" {
  description = "Who the on-call topic pages; see modules/incremental_pipeline's `oncall_subscriptions` (typed and validated there)."
  type        = any
}

variable "encryption" {
  description = "Keys and Glue security configuration of the environment; see modules/incremental_pipeline's `encryption` (typed and validated there). Null: no customer managed keys."
  type        = any
  default     = null
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary of every job role; null: none."
  type        = string
  default     = null
}

variable "release" {
  description = "The release every job runs (the id `deploy` printed; a pipeline's `release` overrides it); null: the `artifact_version` folders. See docs/releases.md."
  type        = string
  default     = null
}

variable "deploy_role_name" {
  description = "The CI deploy role that alone may write the scripts bucket's code prefixes (terraform/ci, modules/ci_roles); null: gi-ci-<environment>-deploy."
  type        = string
  default     = null
}
