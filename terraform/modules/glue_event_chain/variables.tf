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
