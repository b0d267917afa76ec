variable "scheduled_triggers" {
  description = "Triggers that start a job on a schedule, keyed by trigger name. `schedule` is AWS's six-field cron: `cron(Minutes Hours Day-of-month Month Day-of-week Year)` with `?` in exactly one of the two day fields."
  type = map(object({
    job_name    = string
    schedule    = string
    enabled     = optional(bool, true)
    arguments   = optional(map(string), {})
    description = optional(string)
  }))
  default = {}

  validation {
    condition = alltrue([
      for t in values(var.scheduled_triggers) :
      try((regex("^cron\\(([0-9*,/-]+) ([0-9*,/-]+) ([0-9*?,/LW-]+) ([0-9A-Za-z*,/-]+) ([0-9A-Za-z*?,/L#-]+) ([0-9*,/-]+)\\)$", t.schedule)[2] == "?") != (regex("^cron\\(([0-9*,/-]+) ([0-9*,/-]+) ([0-9*?,/LW-]+) ([0-9A-Za-z*,/-]+) ([0-9A-Za-z*?,/L#-]+) ([0-9*,/-]+)\\)$", t.schedule)[4] == "?"), false)
    ])
    error_message = "Each schedule must be AWS cron syntax cron(Minutes Hours Day-of-month Month Day-of-week Year) with ? in exactly one of the day fields, e.g. cron(15 2 * * ? *); invalid: ${join(", ", [for k, t in var.scheduled_triggers : "${k} = \"${t.schedule}\"" if !try((regex("^cron\\(([0-9*,/-]+) ([0-9*,/-]+) ([0-9*?,/LW-]+) ([0-9A-Za-z*,/-]+) ([0-9A-Za-z*?,/L#-]+) ([0-9*,/-]+)\\)$", t.schedule)[2] == "?") != (regex("^cron\\(([0-9*,/-]+) ([0-9*,/-]+) ([0-9*?,/LW-]+) ([0-9A-Za-z*,/-]+) ([0-9A-Za-z*?,/L#-]+) ([0-9*,/-]+)\\)$", t.schedule)[4] == "?"), false)])}."
  }

  validation {
    condition     = alltrue([for k in keys(var.scheduled_triggers) : can(regex("^[A-Za-z0-9_.-]{1,255}$", k))])
    error_message = "scheduled_triggers keys are trigger names of [A-Za-z0-9_.-]; got: ${join(", ", [for k in keys(var.scheduled_triggers) : "\"${k}\"" if !can(regex("^[A-Za-z0-9_.-]{1,255}$", k))])}."
  }
}

variable "conditional_triggers" {
  description = "Triggers that start a job when upstream jobs reach `state` (default SUCCEEDED), keyed by trigger name. With several upstream jobs, `logical` ANY starts on the first, AND waits for all (within one workflow run)."
  type = map(object({
    job_name           = string
    upstream_job_names = list(string)
    state              = optional(string, "SUCCEEDED")
    logical            = optional(string, "AND")
    enabled            = optional(bool, true)
    arguments          = optional(map(string), {})
    description        = optional(string)
  }))
  default = {}

  validation {
    condition     = alltrue([for t in values(var.conditional_triggers) : length(t.upstream_job_names) > 0])
    error_message = "Each conditional trigger needs at least one upstream job; empty: ${join(", ", [for k, t in var.conditional_triggers : k if length(t.upstream_job_names) == 0])}."
  }

  validation {
    condition     = alltrue([for t in values(var.conditional_triggers) : contains(["SUCCEEDED", "FAILED", "TIMEOUT", "STOPPED"], t.state)])
    error_message = "Conditional trigger state must be SUCCEEDED, FAILED, TIMEOUT or STOPPED; got: ${join(", ", [for k, t in var.conditional_triggers : "${k} = \"${t.state}\"" if !contains(["SUCCEEDED", "FAILED", "TIMEOUT", "STOPPED"], t.state)])}."
  }

  validation {
    condition     = alltrue([for t in values(var.conditional_triggers) : contains(["AND", "ANY"], t.logical)])
    error_message = "Conditional trigger logical must be AND or ANY; got: ${join(", ", [for k, t in var.conditional_triggers : "${k} = \"${t.logical}\"" if !contains(["AND", "ANY"], t.logical)])}."
  }

  validation {
    condition     = alltrue([for k in keys(var.conditional_triggers) : can(regex("^[A-Za-z0-9_.-]{1,255}$", k))])
    error_message = "conditional_triggers keys are trigger names of [A-Za-z0-9_.-]; got: ${join(", ", [for k in keys(var.conditional_triggers) : "\"${k}\"" if !can(regex("^[A-Za-z0-9_.-]{1,255}$", k))])}."
  }
}

variable "workflow" {
  description = "Group every trigger in one Glue workflow (one graph and run history per pipeline run). Null leaves the triggers standalone."
  type = object({
    name                = string
    description         = optional(string)
    max_concurrent_runs = optional(number, 1)
  })
  default = null

  validation {
    condition     = var.workflow == null || try(can(regex("^[A-Za-z0-9_.-]{1,255}$", var.workflow.name)) && var.workflow.max_concurrent_runs >= 1, false)
    error_message = "workflow.name must be 1-255 characters of [A-Za-z0-9_.-] and workflow.max_concurrent_runs >= 1; got ${jsonencode(var.workflow)}."
  }
}

variable "tags" {
  description = "Tags applied to the triggers and the workflow."
  type        = map(string)
  default     = {}
}
