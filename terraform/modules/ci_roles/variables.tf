variable "github_repository" {
  description = "The repository whose workflow assumes the roles, `owner/name`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", var.github_repository))
    error_message = "github_repository must be owner/name; got \"${var.github_repository}\"."
  }
}

variable "environment" {
  description = "The environment these roles plan and deploy (dev or prod): names the roles and scopes the deploy role to the environment's resources."
  type        = string

  validation {
    condition     = contains(["dev", "prod"], var.environment)
    error_message = "environment must be dev or prod; got \"${var.environment}\"."
  }
}

variable "github_environment" {
  description = "The GitHub environment whose jobs may assume the deploy role (its required reviewers guard it): `dev` or `production` in .github/workflows/platform.yml."
  type        = string
}

variable "oidc_provider_arn" {
  description = "The account's GitHub OIDC provider (token.actions.githubusercontent.com); null creates it (once per account)."
  type        = string
  default     = null
}

variable "pull_request_plan_role" {
  description = "Create the environment's pull-request plan role (gi-ci-<env>-pull-request-plan: pull requests plan each environment with its own)."
  type        = bool
  default     = false
}

variable "name_prefix" {
  description = "The environment's name_prefix (its jobs, roles, topic, queues, alarms, keys are named `<prefix>-...`)."
  type        = string
}

variable "state" {
  description = "The environment's Terraform state: S3 bucket and key (`<key>.tflock` is the S3-native lock)."
  type = object({
    bucket = string
    key    = string
  })
}

variable "scripts_bucket_name" {
  description = "Bucket deploy uploads scripts and the library to."
  type        = string
}

variable "watermarks_table_name" {
  description = "The environment's watermarks table."
  type        = string
  default     = "glue-watermarks"
}

variable "notification_source_buckets" {
  description = "The source buckets of the environment's pipelines that set `source.notifications` (modules/s3_notifications): the deploy role writes their notification configuration, the plan roles read it. Required for such a pipeline: without it its apply is refused (s3:PutBucketNotification)."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for b in var.notification_source_buckets : can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", b))])
    error_message = "notification_source_buckets must be bucket names (no s3://, no prefix, no wildcard)."
  }
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary the deploy role must set on every role it creates (and carries itself); null: none."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags of the roles and the provider."
  type        = map(string)
  default     = {}
}
