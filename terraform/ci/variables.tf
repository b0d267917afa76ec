variable "region" {
  description = "AWS region of the environments."
  type        = string
}

variable "github_repository" {
  description = "The repository whose workflow assumes the roles, `owner/name`."
  type        = string
}

variable "oidc_provider_arn" {
  description = "The account's existing GitHub OIDC provider; null creates it."
  type        = string
  default     = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary of the CI roles and of every role the deploy role creates; null: none."
  type        = string
  default     = null
}

variable "environments" {
  description = "The environments of this account (dev, prod): GitHub environment, name prefix, state, scripts bucket and watermarks table, as in environments/aws/<env>.tfvars and <env>.backend.hcl."
  type = map(object({
    github_environment  = string
    name_prefix         = string
    scripts_bucket_name = string
    # As watermarks_table_name in environments/aws/<env>.tfvars: one table per environment,
    # so dev and prod can share an account (terraform/README.md "Accounts").
    watermarks_table_name = string
    state                 = object({ bucket = string, key = string })
    # The buckets of pipelines with source.notifications = true (docs/bootstrap.md): the
    # deploy role configures their notifications; empty when no pipeline uses them.
    notification_source_buckets = optional(list(string), [])
  }))

  validation {
    condition     = length(var.environments) > 0
    error_message = "environments must name at least one environment."
  }
}
