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

variable "watermarks_kms_encryption_enabled" {
  description = "Encrypt the watermarks table with its KMS key. false (DynamoDB's AWS owned key) is for DynamoDB Local only, which does not describe a table's encryption back: with it every re-apply would fail."
  type        = bool
  default     = true
  nullable    = false
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

variable "release" {
  description = "The release every pipeline runs unless it sets its own `release`: the id `deploy --print-release` prints (its scripts, library and team packages under s3://<bucket>/releases/<id>/). Required: there are no mutable aliases (docs/releases.md)."
  type        = string
  nullable    = false

  # deploy.deployment_version: 16 hex digits of a sha256 over every file.
  validation {
    condition     = can(regex("^[0-9a-f]{16}$", var.release))
    error_message = "release must be a release id `deploy --print-release` printed (16 lowercase hex digits); got \"${var.release}\"."
  }
}

variable "key_admin_role_arns" {
  description = "The roles that apply this environment (the CI deploy role): each key the module creates names them for the apply's actions on it (modules/kms_key `admin_role_arns`), so their identity policies need no admin action on other keys. Empty: only the account administers the keys (local)."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "scripts_writer_role_arns" {
  description = "The roles (the CI publish role) that alone may write or delete the scripts bucket's code prefixes (modules/scripts_bucket `code_writer_role_arns`); empty: no such bucket policy statement."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "pipelines" {
  description = <<-EOT
    The environment's pipelines, keyed by name (`[a-z][a-z0-9_]*`, at most 40 characters; the Glue job is `<name_prefix>-<name>`).
    Adding a pipeline is adding one entry: it gets its Glue job and least-privilege role, its alarms, its trigger and its catalog table.

    kind = "load": `source` (`uri` s3://... or jdbc:..., `format` for files, `table` for JDBC), `watermark_column`, `primary_key`.
    `source.notifications = true` (s3:// sources, one such pipeline per bucket): S3 event notifications to an SQS queue
    (modules/s3_notifications) and `--discovery notifications`; otherwise the job lists S3 by key order (`--discovery listing`).
    kind = "join": `join.left` and `join.right`, each either `{ path = "s3://..." }` or `{ pipeline = "<a load pipeline>" }`, `join.keys`, `join.type`.
    A pipeline with no upstream runs on `schedule` (AWS cron). One with upstreams (explicit `upstreams`, plus every join side that names
    a pipeline) is started by a conditional trigger when they SUCCEEDED; the join's `--upstream_jobs` and its role's read grant are derived
    from the same sides, so they cannot disagree.
    `target`: `path`, `table` (default: the pipeline name), `columns` (data columns, Glue types) and `partitions` (in order; each with its
    Glue type and Athena partition projection: `date` with `range`/`format`, `integer` with `range`, `enum` with `values`, or `injected`).
    `target.format = "iceberg"` (load pipelines): the job writes the Iceberg table `<database>.<table>` (Glue Data Catalog, warehouse
    `path`), creating it on its first run, so the module registers no Parquet table for it (glue_job's `iceberg_target`).
    `arguments`: further job arguments (`--lookback`, `--partition_moves`, ...); `--upstream_jobs` and what this module derives are refused.
    `alarms`: overrides of the environment's alarm tuning.
    JDBC pipelines (a load's `source.uri` or a custom source's `uri` jdbc:...): `secret_arn` (a Secrets Manager secret with username/password; the role reads exactly it) and/or
    `connections` (Glue connection names; the role may GetConnection exactly them); `network` (the connection's subnets and security groups)
    when the connection is in a VPC, which lets the role manage the run's network interfaces there.
    `size.execution_class` (STANDARD or FLEX) and `size.auto_scaling` (--enable-auto-scaling); `size.slow_run_after`: minutes after
    which a still-running run pages (`<job>-run-slow`), default 3/4 of `size.timeout`.
    `transform` (load and join pipelines): `function` (`package.module:function`, a DataFrame -> DataFrame applied to the increment
    before it is merged, docs/transforms.md) and `package` (the team's .zip or .whl: a file name `deploy` uploads to
    `s3://<scripts bucket>/releases/<release>/<name>`, or an s3:// URI); sets `--transform`, appends the package to
    `--extra-py-files`, and the role may read exactly that object.
    `history` (load pipelines): the target keeps every version of a key (`--history scd2`, docs/history.md), a version
    opened when one of `history.columns` changes (`--history_columns`; default every column of the row but the watermark); a Parquet target's
    catalog table gains `valid_from`, `valid_to` (the watermark column's type) and `is_current`; an Iceberg target's table is
    created by the job with them.
    kind = "custom": a script of glue_scripts/ (`script`, its file name without `.py`) on the library's custom job API. `sources`,
    keyed by name, each `{ path = "s3://..." }` or `{ pipeline = "<a parquet load or custom pipeline>" }` (+ `format`), become
    `--<name>_path` (and `--<name>_format`); a source naming a pipeline makes it an upstream (conditional trigger, read grant
    on its target and committed state) and passes its job name as `--<upstream_argument>` (default `<name>_upstream_job`).
    A source `{ uri = "jdbc:...", table = "schema.table" }` reads a database table: `--<name>_url` and `--<name>_table`
    (glue_incremental.custom's `jdbc_options`/`jdbc_table`/`jdbc_reference`); the pipeline's `secret_arn`, `connections` and
    `network` then give its credentials and network path, and its role's grants, exactly as for a JDBC load.
    The role reads exactly the sources and writes exactly `target.path` (`--target_path`); `arguments` are the script's own.
  EOT
  # environments/aws repeats this type (and those of alarms, oncall_subscriptions and
  # encryption): tests/unit/test_environment_variable_types.py keeps them equal.
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

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.history == null || p.kind == "load"])
    error_message = "history is for load pipelines (Parquet or Iceberg targets); invalid: ${join(", ", [for k, p in var.pipelines : k if !(p.history == null || p.kind == "load")])}."
  }

  validation {
    condition     = length(var.pipelines) > 0
    error_message = "pipelines is empty: an environment declares at least one pipeline."
  }

  validation {
    condition     = alltrue([for k in keys(var.pipelines) : can(regex("^[a-z][a-z0-9_]{0,39}$", k))])
    error_message = "pipeline names must be [a-z][a-z0-9_]*, at most 40 characters (they name the Glue job, its role and its table); invalid: ${join(", ", [for k in keys(var.pipelines) : "\"${k}\"" if !can(regex("^[a-z][a-z0-9_]{0,39}$", k))])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : contains(["load", "join", "custom"], p.kind)])
    error_message = "pipeline kind must be load, join or custom; invalid: ${join(", ", [for k, p in var.pipelines : "${k} (kind = \"${p.kind}\")" if !contains(["load", "join", "custom"], p.kind)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.kind != "custom" || (try(can(regex("^[a-z][a-z0-9_]{0,99}$", p.script)), false) && !contains(["incremental_load", "incremental_join"], p.script == null ? "" : p.script) && length(p.sources) > 0 && p.source == null && p.join == null)])
    error_message = "a custom pipeline needs script (a glue_scripts/ file name without .py, not a generic job's) and at least one of sources, and no source or join; invalid: ${join(", ", [for k, p in var.pipelines : k if p.kind == "custom" && !(try(can(regex("^[a-z][a-z0-9_]{0,99}$", p.script)), false) && !contains(["incremental_load", "incremental_join"], p.script == null ? "" : p.script) && length(p.sources) > 0 && p.source == null && p.join == null)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.kind == "custom" || (p.script == null && length(p.sources) == 0)])
    error_message = "script and sources belong to custom pipelines; invalid: ${join(", ", [for k, p in var.pipelines : k if p.kind != "custom" && !(p.script == null && length(p.sources) == 0)])}."
  }

  validation {
    condition     = alltrue(flatten([for p in values(var.pipelines) : [for name, s in p.sources : can(regex("^[a-z][a-z0-9_]{0,39}$", name)) && length(compact([s.path, s.pipeline, s.uri])) == 1 && (s.path == null || can(regex("^s3://", s.path))) && (s.uri == null || can(regex("^jdbc:", s.uri))) && ((s.uri == null) == (s.table == null)) && (s.upstream_argument == null || s.pipeline != null) && (s.uri == null || s.format == null) && contains(["parquet", "json", "csv", "iceberg", "none"], coalesce(s.format, "none"))]]))
    error_message = "each custom source is keyed [a-z][a-z0-9_]* and is exactly one of { path = \"s3://...\" }, { pipeline = \"<pipeline>\" } or { uri = \"jdbc:...\", table = \"schema.table\" } (table with uri only); upstream_argument needs pipeline; format (files only) is parquet, json, csv or iceberg; invalid: ${join(", ", flatten([for k, p in var.pipelines : [for name, s in p.sources : "${k}.sources.${name}" if !(can(regex("^[a-z][a-z0-9_]{0,39}$", name)) && length(compact([s.path, s.pipeline, s.uri])) == 1 && (s.path == null || can(regex("^s3://", s.path))) && (s.uri == null || can(regex("^jdbc:", s.uri))) && ((s.uri == null) == (s.table == null)) && (s.upstream_argument == null || s.pipeline != null) && (s.uri == null || s.format == null) && contains(["parquet", "json", "csv", "iceberg", "none"], coalesce(s.format, "none")))]]))}."
  }

  # A source's arguments are --<name>_path, --<name>_url, ...: one named `target` would be
  # silently replaced by the target's own --target_path.
  validation {
    condition     = alltrue([for p in values(var.pipelines) : !contains(keys(p.sources), "target")])
    error_message = "a custom source cannot be named target (its --target_path is the pipeline's target); invalid: ${join(", ", [for k, p in var.pipelines : "${k}.sources.target" if contains(keys(p.sources), "target")])}."
  }

  # The job takes a JDBC table as [catalog.][schema.]table, each part an identifier or a
  # double-quoted name (glue_incremental.sources.jdbc.table_parts); anything else would be
  # accepted here and fail only on the job's first run.
  validation {
    condition     = alltrue(flatten([for p in values(var.pipelines) : [for t in concat(p.kind == "load" ? [try(p.source.table, null)] : [], [for s in values(p.sources) : s.table]) : can(regex("^(?:[A-Za-z_][A-Za-z0-9_$]*|\"(?:[^\"]|\"\")+\")(?:\\.(?:[A-Za-z_][A-Za-z0-9_$]*|\"(?:[^\"]|\"\")+\")){0,2}$", t)) if t != null]]))
    error_message = "a JDBC table is [catalog.][schema.]table, each part letters, digits, _ and $ (not starting with a digit) or double-quoted; invalid: ${join(", ", flatten([for k, p in var.pipelines : [for t in concat(p.kind == "load" ? [try(p.source.table, null)] : [], [for s in values(p.sources) : s.table]) : "${k}: ${t}" if t != null && !can(regex("^(?:[A-Za-z_][A-Za-z0-9_$]*|\"(?:[^\"]|\"\")+\")(?:\\.(?:[A-Za-z_][A-Za-z0-9_$]*|\"(?:[^\"]|\"\")+\")){0,2}$", t))]]))}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.transform == null ? true : (p.kind != "custom" && can(regex("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$", p.transform.function)) && can(regex("^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/)?[A-Za-z0-9._/+=-]+\\.(zip|whl)$", p.transform.package)))])
    error_message = "transform (load and join pipelines) needs function = \"package.module:function\" and package = a .zip or .whl (a file name deploy uploads under packages/, or an s3:// URI; no commas); invalid: ${join(", ", [for k, p in var.pipelines : k if !(p.transform == null ? true : (p.kind != "custom" && can(regex("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$", p.transform.function)) && can(regex("^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/)?[A-Za-z0-9._/+=-]+\\.(zip|whl)$", p.transform.package))))])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.kind != "load" || (p.source != null && p.watermark_column != null && length(p.primary_key) > 0 && p.join == null)])
    error_message = "a load pipeline needs source, watermark_column and primary_key, and no join; invalid: ${join(", ", [for k, p in var.pipelines : k if p.kind == "load" && !(p.source != null && p.watermark_column != null && length(p.primary_key) > 0 && p.join == null)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.kind != "join" || (p.join != null && p.source == null && length(p.target.partitions) > 0)])
    error_message = "a join pipeline needs join (left, right, keys), target.partitions, and no source; invalid: ${join(", ", [for k, p in var.pipelines : k if p.kind == "join" && !(p.join != null && p.source == null && length(p.target.partitions) > 0)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.target.format == "parquet" || (p.target.format == "iceberg" && p.kind == "load")])
    error_message = "target.format must be parquet, or iceberg for a load pipeline (Iceberg join outputs and sides are not wired through this module yet); invalid: ${join(", ", [for k, p in var.pipelines : "${k} (${p.kind}, \"${p.target.format}\")" if !(p.target.format == "parquet" || (p.target.format == "iceberg" && p.kind == "load"))])}."
  }

  validation {
    condition = alltrue(flatten([for p in values(var.pipelines) : [for part in p.target.partitions : (
      part.projection == "injected" ||
      (part.projection == "date" && part.range != null && part.format != null) ||
      (part.projection == "integer" && part.range != null) ||
      (part.projection == "enum" && try(length(part.values) > 0, false))
    )]]))
    error_message = "target.partitions projection must be date (with range and format), integer (with range), enum (with values) or injected; invalid: ${join(", ", flatten([for k, p in var.pipelines : [for part in p.target.partitions : "${k}.${part.name} (${part.projection})" if !(part.projection == "injected" || (part.projection == "date" && part.range != null && part.format != null) || (part.projection == "integer" && part.range != null) || (part.projection == "enum" && try(length(part.values) > 0, false)))]]))}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : !try(p.source.notifications, false) || (p.kind == "load" && try(startswith(p.source.uri, "s3://"), false))])
    error_message = "source.notifications needs a load pipeline reading an s3:// source (S3 event notifications to SQS); invalid: ${join(", ", [for k, p in var.pipelines : k if try(p.source.notifications, false) && !(p.kind == "load" && try(startswith(p.source.uri, "s3://"), false))])}."
  }

  # A pipeline reads JDBC when its load source or any of its custom sources is a jdbc: URI.
  validation {
    condition     = alltrue([for p in values(var.pipelines) : (p.secret_arn == null && length(p.connections) == 0 && p.network == null) || ((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null])))])
    error_message = "secret_arn, connections and network belong to pipelines reading a jdbc: source (a load's source.uri or a custom source's uri); invalid: ${join(", ", [for k, p in var.pipelines : k if !((p.secret_arn == null && length(p.connections) == 0 && p.network == null) || ((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null]))))])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : !((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null]))) || p.secret_arn != null || length(p.connections) > 0])
    error_message = "a jdbc: source needs its credentials from secret_arn (Secrets Manager) or connections (a Glue connection), never in the URL or arguments; missing: ${join(", ", [for k, p in var.pipelines : k if((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null]))) && p.secret_arn == null && length(p.connections) == 0])}."
  }

  # Without a secret the job logs in through its connection (glue_job passes --connection_name
  # only when there is exactly one): several connections would leave it no credentials.
  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.secret_arn != null || length(p.connections) <= 1])
    error_message = "a pipeline without secret_arn logs in through its one connection (--connection_name): with several connections give secret_arn; invalid: ${join(", ", [for k, p in var.pipelines : k if p.secret_arn == null && length(p.connections) > 1])}."
  }

  # A password in a URL is visible in GetJob, CloudTrail and Terraform state (the same
  # forms glue_incremental.sources.jdbc.redact_url removes from its messages).
  validation {
    condition     = alltrue(flatten([for p in values(var.pipelines) : [for u in concat(p.kind == "load" ? [try(p.source.uri, "")] : [], [for s in values(p.sources) : s.uri if s.uri != null]) : !can(regex("(?i)(password|pwd)=|//[^/@:?;]*:[^/]*@|^jdbc:oracle:[a-z0-9]+:[^/@:]+/[^@]*@", u))]]))
    error_message = "a jdbc: URI must not carry a password (it would be readable in GetJob, CloudTrail and Terraform state): give secret_arn or connections; invalid: ${join(", ", flatten([for k, p in var.pipelines : [for u in concat(p.kind == "load" ? [try(p.source.uri, "")] : [], [for s in values(p.sources) : s.uri if s.uri != null]) : k if can(regex("(?i)(password|pwd)=|//[^/@:?;]*:[^/]*@|^jdbc:oracle:[a-z0-9]+:[^/@:]+/[^@]*@", u))]]))}."
  }

  # modules/glue_network's connection is a NETWORK connection: a path, no credentials.
  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.network_name == null || (p.secret_arn != null && p.network == null && ((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null]))))])
    error_message = "network_name (a network of `networks`, created by modules/glue_network) belongs to a pipeline reading a jdbc: source, with secret_arn (its NETWORK connection carries no credentials) and without network; invalid: ${join(", ", [for k, p in var.pipelines : k if p.network_name != null && !(p.secret_arn != null && p.network == null && ((p.kind == "load" && try(startswith(p.source.uri, "jdbc:"), false)) || (p.kind == "custom" && anytrue([for s in values(p.sources) : s.uri != null]))))])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.network == null || length(p.connections) > 0])
    error_message = "network describes a Glue connection's VPC: a pipeline with network needs connections; invalid: ${join(", ", [for k, p in var.pipelines : k if p.network != null && length(p.connections) == 0])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.size.slow_run_after == null || try(p.size.slow_run_after >= 1 && floor(p.size.slow_run_after) == p.size.slow_run_after && p.size.slow_run_after < p.size.timeout, false)])
    error_message = "size.slow_run_after is the whole minutes after which a still-running run pages (Glue NotifyDelayAfter, https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html#aws-glue-api-jobs-job-NotificationProperty), at least 1 and below size.timeout; invalid: ${join(", ", [for k, p in var.pipelines : "${k} (${p.size.slow_run_after} >= timeout ${p.size.timeout})" if p.size.slow_run_after != null && !try(p.size.slow_run_after >= 1 && floor(p.size.slow_run_after) == p.size.slow_run_after && p.size.slow_run_after < p.size.timeout, false)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pipelines) : p.release == null || can(regex("^[0-9a-f]{16}$", p.release))])
    error_message = "a pipeline's release must be a release id `deploy` printed (16 lowercase hex digits); invalid: ${join(", ", [for k, p in var.pipelines : "${k} (\"${p.release}\")" if p.release != null && !can(regex("^[0-9a-f]{16}$", p.release))])}."
  }
}

variable "runbook_base_url" {
  description = "The on-call runbook every alarm and page links, as `<base>#<alarm key with - for _>` (modules/job_alarms); null: the repository's docs/runbook.md."
  type        = string
  default     = null
}

variable "catalog_database_name" {
  description = "Glue Data Catalog database holding every target table; null uses the name prefix with `_` for `-`."
  type        = string
  default     = null

  validation {
    condition     = var.catalog_database_name == null || can(regex("^[a-z0-9_]{1,255}$", var.catalog_database_name))
    error_message = "catalog_database_name must be 1-255 characters of [a-z0-9_]; got \"${coalesce(var.catalog_database_name, "null")}\"."
  }
}

variable "athena_workgroup_enabled" {
  description = "Create the Athena workgroup. Off only where the endpoint cannot read workgroup tags back (emulators without an account id in ARNs)."
  type        = bool
  default     = true
}

variable "dashboard_enabled" {
  description = "Create the environment's CloudWatch dashboard."
  type        = bool
  default     = true
}

variable "lease_seconds" {
  description = "Run lease duration passed to every job as non-overridable --lease_seconds."
  type        = number
  default     = 900
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the run metrics (glue_incremental.run.metrics.NAMESPACE)."
  type        = string
  default     = "GlueIncremental"
}

variable "log_retention_days" {
  description = "Retention of the jobs' log groups."
  type        = number
  default     = 365
}

variable "alarms" {
  description = "Alarm tuning every pipeline starts from (a pipeline's `alarms` overrides it): the schedule interval (alarm period), missed-run grace, consecutive empty runs before paging, and the watermark lag that counts as stale."
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

variable "oncall_state" {
  description = "The environment's Terraform state, as its <env>.backend.hcl names it (bucket, key), and the state bucket's customer managed key if it has one (kms_key_arn): the on-call role may read that object, so `status --env`, `watermarks --env` and `target --env` work as the on-call alone (they read the state's outputs). Null: the on-call reads no state (name the table with `watermarks --table`)."
  type = object({
    bucket      = string
    key         = string
    kms_key_arn = optional(string)
  })
  default = null

  validation {
    condition = var.oncall_state == null || (
      can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", try(var.oncall_state.bucket, ""))) &&
      can(regex("^[^/](.*[^/])?$", try(var.oncall_state.key, ""))) && !strcontains(try(var.oncall_state.key, ""), "//") &&
      (try(var.oncall_state.kms_key_arn, null) == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", try(var.oncall_state.kms_key_arn, ""))))
    )
    error_message = "oncall_state must be the environment's <env>.backend.hcl bucket (an S3 bucket name) and key (not starting or ending with /, no //), and kms_key_arn a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>) or null; got ${jsonencode(var.oncall_state)}."
  }
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

variable "orchestration" {
  description = "How dependents start after their upstreams SUCCEEDED: `events` (EventBridge on every run's state change, however started, so a rerun by hand of a failed upstream starts them; modules/glue_event_chain) or `triggers` (Glue conditional triggers, which fire only for runs a trigger started)."
  type        = string
  default     = "triggers"

  validation {
    condition     = contains(["events", "triggers"], var.orchestration)
    error_message = "orchestration must be events or triggers; got \"${var.orchestration}\"."
  }
}

variable "failure_events_enabled" {
  description = "Page on FAILED/TIMEOUT/STOPPED/ERROR runs through EventBridge."
  type        = bool
  default     = true
}

variable "networks" {
  description = <<-EOT
    VPC networks modules/glue_network creates for JDBC pipelines, keyed by the name a pipeline gives as `network_name`:
    `vpc_id`, `subnet_id` and its `availability_zone` (the Glue NETWORK connection's), `database` (`port`, `cidr_blocks`: what
    the job's security group may reach), `route_table_ids` (for the S3 and DynamoDB gateway endpoints it creates) and
    `existing_endpoints` (s3, dynamodb, secretsmanager, logs, monitoring => vpce-... the VPC already has; those are not created).
    Validated in modules/glue_network. docs/jdbc-networking.md.
  EOT
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

variable "event_retry" {
  description = "EventBridge's retry policy for every rule target (failed-run and slow-run pages, the dependents' state machine): how long (60-86,400 s) and how often (0-185) a failed delivery is retried before the event goes to its module's dead-letter queue (`<job>-event-dead-letters`, `<name_prefix>-start-dependents-dead-letters`) (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html). Validated in modules/job_alarms and modules/glue_event_chain."
  type = object({
    maximum_event_age_in_seconds = optional(number, 3600)
    maximum_retry_attempts       = optional(number, 20)
  })
  default  = {}
  nullable = false
}

variable "tags" {
  description = "Tags applied to every resource."
  type        = map(string)
  default     = {}
}

variable "notifications_kms_key_arn" {
  description = "Customer key for the source-event queues of pipelines with `source.notifications`; null: SQS-managed SSE."
  type        = string
  default     = null
}

variable "encryption" {
  description = <<-EOT
    Encryption of the environment. `create_keys`: create customer managed keys (modules/kms_key) for the data (lake and
    Glue-written S3 objects, bookmarks), the watermarks table, the scripts bucket and the jobs' log groups, each where
    the matching existing key (`data_kms_key_arns`, `watermarks_kms_key_arn`, `scripts_bucket_kms_key_arn`,
    `log_kms_key_arn`) is not given. Their policies let exactly the jobs' roles (and, for scripts, table and data, the
    `key_users` roles: CI deploy, operators) use them; the logs key only CloudWatch Logs for this environment's groups.
    `security_configuration`: `create` a Glue security configuration (S3 SSE-KMS and job-bookmark CSE-KMS with the data
    key) or give the `name` of an existing one; its CloudWatch encryption stays off because the jobs' own log groups are
    created encrypted with the logs key (Glue's would use log groups outside the role's log permissions).
  EOT
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
  default  = {}
  nullable = false

  validation {
    condition     = !(var.encryption.security_configuration.create && var.encryption.security_configuration.name != null)
    error_message = "encryption.security_configuration: create one or name an existing one, not both."
  }
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary of every job role; null: none."
  type        = string
  default     = null
}
