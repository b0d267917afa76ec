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

variable "pipelines" {
  description = "The environment's pipelines, keyed by name; see modules/incremental_pipeline's `pipelines` for the fields and their validations."
  # Exactly the module variable's type (fields and optional() defaults), so the
  # tfvars are shaped here as the module would; its validations stay there alone.
  # tests/unit/test_environment_variable_types.py fails when the two drift apart.
  type = map(object({
    kind            = string
    description     = optional(string)
    schedule        = optional(string)
    upstreams       = optional(list(string), [])
    trigger_logical = optional(string, "AND")

    source = optional(object({
      uri           = string
      format        = optional(string, "parquet")
      table         = optional(string)
      notifications = optional(bool, false)
    }))
    watermark_column = optional(string)
    primary_key      = optional(list(string), [])

    join = optional(object({
      left  = object({ path = optional(string), pipeline = optional(string), format = optional(string, "parquet") })
      right = object({ path = optional(string), pipeline = optional(string), format = optional(string, "parquet") })
      keys  = list(string)
      type  = optional(string, "inner")
    }))

    target = object({
      format  = optional(string, "parquet")
      path    = string
      table   = optional(string)
      columns = optional(list(object({ name = string, type = string })), [])
      partitions = optional(list(object({
        name       = string
        type       = optional(string, "string")
        projection = optional(string, "injected")
        range      = optional(string)
        format     = optional(string)
        values     = optional(list(string))
      })), [])
    })

    arguments    = optional(map(string), {})
    read_s3_uris = optional(list(string), [])
    size = optional(object({
      worker_type       = optional(string, "G.1X")
      number_of_workers = optional(number, 2)
      timeout           = optional(number, 120)
      max_retries       = optional(number, 0)
      execution_class   = optional(string, "STANDARD")
      auto_scaling      = optional(bool, false)
      slow_run_after    = optional(number)
    }), {})
    bookmark_option = optional(string, "enable")
    release         = optional(string)
    alarms = optional(object({
      schedule_period_seconds         = optional(number)
      watermark_lag_threshold_seconds = optional(number)
      missed_run_grace_seconds        = optional(number)
      zero_records_evaluation_periods = optional(number)
    }), {})
    secret_arn  = optional(string)
    connections = optional(list(string), [])
    network = optional(object({
      subnet_ids         = list(string)
      security_group_ids = list(string)
    }))
    network_name = optional(string)
    transform = optional(object({
      function = string
      package  = string
    }))
    history = optional(object({
      columns = optional(list(string), [])
    }))
    script = optional(string)
    sources = optional(map(object({
      path              = optional(string)
      pipeline          = optional(string)
      uri               = optional(string)
      table             = optional(string)
      format            = optional(string)
      upstream_argument = optional(string)
    })), {})
  }))
}

variable "alarms" {
  description = "Alarm tuning every pipeline starts from; see modules/incremental_pipeline's `alarms` (validated there)."
  type = object({
    schedule_period_seconds         = number
    watermark_lag_threshold_seconds = number
    missed_run_grace_seconds        = optional(number, 3600)
    zero_records_evaluation_periods = optional(number, 1)
  })
}

variable "runbook_base_url" {
  description = "On-call runbook every alarm and page links as `<base>#<alarm key with - for _>`; null: the repository's docs/runbook.md (modules/job_alarms validates it)."
  type        = string
  default     = null
}

variable "oncall_subscriptions" {
  description = "Who the on-call topic pages; see modules/incremental_pipeline's `oncall_subscriptions` (validated there)."
  type = list(object({
    protocol             = string
    endpoint             = string
    raw_message_delivery = optional(bool, false)
  }))
}

variable "encryption" {
  description = "Keys and Glue security configuration of the environment; see modules/incremental_pipeline's `encryption` (validated there). Null: no customer managed keys."
  type = object({
    create_keys     = optional(bool, false)
    log_kms_key_arn = optional(string)
    key_users = optional(object({
      data    = optional(list(string), [])
      table   = optional(list(string), [])
      scripts = optional(list(string), [])
    }), {})
    security_configuration = optional(object({
      create = optional(bool, false)
      name   = optional(string)
    }), {})
  })
  default = null
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary of every job role; null: none."
  type        = string
  default     = null
}

variable "release" {
  description = "The release every job runs (a pipeline's `release` overrides it): CI passes `-var release=$(python -m glue_incremental deploy --print-release)` at plan, so the reviewed plan is the pin, and `deploy` publishes that release after the apply. Required: there are no mutable aliases. See docs/releases.md."
  type        = string
  nullable    = false
}

variable "state" {
  description = "This environment's Terraform state as its <env>.backend.hcl names it (bucket, key; kms_key_arn if the state bucket uses a customer managed key): the on-call role may read it, so the runbook's `status --env` works as the on-call (modules/incremental_pipeline `oncall_state`, validated there). Null: the on-call reads no state."
  type = object({
    bucket      = string
    key         = string
    kms_key_arn = optional(string)
  })
  default = null
}

variable "publish_role_name" {
  description = "The CI publish role that alone may write the scripts bucket's code prefixes and use its key for deploy (terraform/ci, modules/ci_roles); null: gi-ci-<environment>-publish. The deploy role that applies cannot write releases (docs/releases.md)."
  type        = string
  default     = null
}

variable "deploy_role_name" {
  description = "The CI deploy role that applies this environment (terraform/ci, modules/ci_roles); null: gi-ci-<environment>-deploy. Every key the environment creates names it as the principal of the apply's actions on it (modules/kms_key `admin_role_arns`); it must exist before the first apply."
  type        = string
  default     = null
}

variable "networks" {
  description = "VPC networks created for JDBC pipelines (their `network_name`); see modules/incremental_pipeline's `networks` (validated in modules/glue_network) and docs/jdbc-networking.md."
  type = map(object({
    vpc_id             = string
    subnet_id          = string
    availability_zone  = string
    route_table_ids    = optional(list(string), [])
    existing_endpoints = optional(map(string), {})
    database = object({
      port        = number
      cidr_blocks = list(string)
    })
  }))
  default  = {}
  nullable = false
}
