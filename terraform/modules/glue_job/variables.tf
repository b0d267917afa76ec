variable "name" {
  description = "Glue job name. It is also the run's --JOB_NAME, the CloudWatch `JobName` dimension and, unless watermark_name is set, the watermark state name."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]{0,59}$", var.name))
    error_message = "name must be 1-60 characters of [A-Za-z0-9_.-] starting with a letter or digit (Glue allows 255, https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html, but the name is embedded in IAM role and log group names); got \"${var.name}\"."
  }
}

variable "description" {
  description = "Free-text description shown in the Glue console."
  type        = string
  default     = null

  validation {
    condition     = var.description == null || try(length(var.description) <= 2048, false)
    error_message = "description must be at most 2048 characters (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html); got ${try(length(var.description), 0)}."
  }
}

variable "script_location" {
  description = "S3 URI of the job script as deployed by CI, e.g. `s3://<bucket>/scripts/<version>/incremental_load.py`."
  type        = string

  validation {
    condition     = can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+\\.py$", var.script_location))
    error_message = "script_location must be an s3://<bucket>/<key>.py URI; got \"${var.script_location}\"."
  }
}

variable "library_location" {
  description = "S3 URI of the glue_incremental library zip, e.g. `s3://<bucket>/lib/<version>/glue_incremental.zip`; passed as --extra-py-files."
  type        = string

  validation {
    condition     = can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+\\.(zip|whl)$", var.library_location))
    error_message = "library_location must be an s3://<bucket>/<key>.zip (or .whl) URI; got \"${var.library_location}\"."
  }
}

variable "extra_py_files" {
  description = "S3 URIs of further Python packages (.zip or .whl) the job imports, e.g. a team's package holding its `--transform` function; appended to --extra-py-files after the library (a comma-separated list, https://docs.aws.amazon.com/glue/latest/dg/aws-glue-programming-python-libraries.html). The role may read exactly these objects."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for u in var.extra_py_files : can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^,]+\\.(zip|whl)$", u))])
    error_message = "extra_py_files entries must be s3://<bucket>/<key>.zip (or .whl) URIs without commas (Glue splits --extra-py-files on them); got: ${join(", ", [for u in var.extra_py_files : "\"${u}\"" if !can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^,]+\\.(zip|whl)$", u))])}."
  }
}

variable "temp_dir" {
  description = "S3 URI used as --TempDir; the role gets read/write on this prefix only. Use a per-job prefix under the scripts bucket's expiring `tmp/`."
  type        = string

  validation {
    condition     = can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+$", var.temp_dir))
    error_message = "temp_dir must be an s3://<bucket>/<prefix> URI with a non-empty prefix; got \"${var.temp_dir}\"."
  }
}

variable "glue_version" {
  description = "Glue runtime. Only 5.x: the library needs Python 3.11 and this module relies on Glue 5's real-time logging."
  type        = string
  default     = "5.1"

  validation {
    condition     = contains(["5.0", "5.1"], var.glue_version)
    error_message = "glue_version must be one of 5.0, 5.1; got \"${var.glue_version}\"."
  }
}

variable "worker_type" {
  description = "Glue Spark worker type. G.025X (streaming only) and Z.2X (Ray only) are not valid for these batch jobs."
  type        = string
  default     = "G.1X"

  validation {
    condition     = contains(["G.1X", "G.2X", "G.4X", "G.8X", "G.12X", "G.16X", "R.1X", "R.2X", "R.4X", "R.8X"], var.worker_type)
    error_message = "worker_type must be one of G.1X, G.2X, G.4X, G.8X, G.12X, G.16X, R.1X, R.2X, R.4X, R.8X; got \"${var.worker_type}\"."
  }
}

variable "number_of_workers" {
  description = "Number of workers (including the driver). Glue needs at least 2 for Spark jobs."
  type        = number
  default     = 2

  validation {
    condition     = var.number_of_workers >= 2 && var.number_of_workers <= 299 && floor(var.number_of_workers) == var.number_of_workers
    error_message = "number_of_workers must be a whole number from 2 to 299; got ${var.number_of_workers}."
  }
}

variable "execution_class" {
  description = "STANDARD for time-sensitive runs, FLEX for cheaper runs on spare capacity (start times vary)."
  type        = string
  default     = "STANDARD"

  validation {
    condition     = contains(["STANDARD", "FLEX"], var.execution_class)
    error_message = "execution_class must be STANDARD or FLEX; got \"${var.execution_class}\"."
  }
}

variable "timeout" {
  description = "Minutes after which Glue stops a run with TIMEOUT (which pages via the failure event rule)."
  type        = number
  default     = 120

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 10080 && floor(var.timeout) == var.timeout
    error_message = "timeout must be a whole number of minutes from 1 to 10080, Glue's 7-day maximum (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html); got ${var.timeout}."
  }
}

variable "max_retries" {
  description = "Automatic retries of a failed run. Retries are safe: a run only commits its watermark after its output is written."
  type        = number
  default     = 0

  validation {
    condition     = var.max_retries >= 0 && var.max_retries <= 10 && floor(var.max_retries) == var.max_retries
    error_message = "max_retries must be a whole number from 0 to 10; got ${var.max_retries}."
  }
}

variable "max_concurrent_runs" {
  description = "Concurrent runs allowed. Keep 1: two runs of one job race on its watermark (the DynamoDB lease is the second line of defence, not the first)."
  type        = number
  default     = 1

  validation {
    condition     = var.max_concurrent_runs >= 1 && var.max_concurrent_runs <= 1000 && floor(var.max_concurrent_runs) == var.max_concurrent_runs
    error_message = "max_concurrent_runs must be a whole number from 1 to 1000; got ${var.max_concurrent_runs}."
  }
}

variable "job_run_queuing_enabled" {
  description = "Queue runs that would exceed max_concurrent_runs instead of failing them. Disable only on emulators that do not implement it."
  type        = bool
  default     = true
}

variable "bookmark_option" {
  description = "Glue job bookmarks: enable, disable or pause (maps to --job-bookmark-option job-bookmark-<value>)."
  type        = string
  default     = "enable"

  validation {
    condition     = contains(["enable", "disable", "pause"], var.bookmark_option)
    error_message = "bookmark_option must be one of enable, disable, pause; got \"${var.bookmark_option}\"."
  }
}

variable "default_arguments" {
  description = "The job's own arguments (e.g. --source, --target_path). Merged after the module's defaults, so a key here overrides a default of the same name; keys that would defeat the role's scoping are rejected."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.default_arguments) : startswith(k, "--")])
    error_message = "default_arguments keys must start with \"--\"; got: ${join(", ", [for k in keys(var.default_arguments) : k if !startswith(k, "--")])}."
  }

  validation {
    condition     = length(setintersection(keys(var.default_arguments), ["--watermarks_table", "--watermark_name", "--lease_seconds", "--job-bookmark-option", "--metrics_namespace", "--custom-logGroup-prefix", "--TempDir", "--extra-py-files", "--spark-event-logs-path"])) == 0
    error_message = "default_arguments must not set ${join(", ", setintersection(keys(var.default_arguments), ["--watermarks_table", "--watermark_name", "--lease_seconds", "--job-bookmark-option", "--metrics_namespace", "--custom-logGroup-prefix", "--TempDir", "--extra-py-files", "--spark-event-logs-path"]))}: use the module variables (watermarks_table_name, watermark_name, lease_seconds, bookmark_option, metrics_namespace, temp_dir, library_location, spark_ui_enabled), which the IAM policy is scoped to."
  }

  validation {
    condition     = length(setintersection(keys(var.default_arguments), ["--source_password", "--source_secret_id"])) == 0
    error_message = "default_arguments must not set ${join(", ", setintersection(keys(var.default_arguments), ["--source_password", "--source_secret_id"]))}: a password there is visible in GetJob, CloudTrail and Terraform state (the job refuses --source_password); give jdbc_credentials.secret_arn (Secrets Manager) or jdbc_credentials.connection_names (Glue connection) instead."
  }

  validation {
    condition     = length(setintersection(keys(var.default_arguments), ["--enable-continuous-cloudwatch-log", "--enable-continuous-log-filter", "--continuous-log-logGroup", "--continuous-log-logStreamPrefix", "--continuous-log-conversionPattern"])) == 0
    error_message = "Glue 5 logs in real time and dropped continuous logging; remove ${join(", ", setintersection(keys(var.default_arguments), ["--enable-continuous-cloudwatch-log", "--enable-continuous-log-filter", "--continuous-log-logGroup", "--continuous-log-logStreamPrefix", "--continuous-log-conversionPattern"]))} from default_arguments."
  }
}

variable "watermarks_table_name" {
  description = "Name of the watermarks table (non-overridable --watermarks_table)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]{3,255}$", var.watermarks_table_name))
    error_message = "watermarks_table_name must be a DynamoDB table name; got \"${var.watermarks_table_name}\"."
  }
}

variable "watermarks_table_arn" {
  description = "ARN of the watermarks table; the role's DynamoDB permissions name only this table."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", var.watermarks_table_arn))
    error_message = "watermarks_table_arn must be a DynamoDB table ARN; got \"${var.watermarks_table_arn}\"."
  }
}

variable "watermark_name" {
  description = "Logical state name (non-overridable --watermark_name): the DynamoDB partition this job may write. Null uses the job name."
  type        = string
  default     = null

  validation {
    condition     = var.watermark_name == null || can(regex("^[A-Za-z0-9_.:-]{1,255}$", var.watermark_name))
    error_message = "watermark_name must be 1-255 characters of [A-Za-z0-9_.:-]; got \"${coalesce(var.watermark_name, "null")}\"."
  }
}

variable "upstream_state_names" {
  description = "State names of upstream jobs or pipelines whose committed watermarks this job reads (the job names in a join's `--upstream_jobs side=job,...`). Read-only access."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for s in var.upstream_state_names : can(regex("^[A-Za-z0-9_.:-]{1,255}$", s))])
    error_message = "upstream_state_names entries must be 1-255 characters of [A-Za-z0-9_.:-]; got: ${join(", ", [for s in var.upstream_state_names : "\"${s}\"" if !can(regex("^[A-Za-z0-9_.:-]{1,255}$", s))])}."
  }
}

variable "lease_seconds" {
  description = "Run lease duration in seconds (non-overridable --lease_seconds). Longer than the longest healthy run step, shorter than the schedule interval."
  type        = number
  default     = 900

  validation {
    condition     = var.lease_seconds >= 60 && var.lease_seconds <= 86400 && floor(var.lease_seconds) == var.lease_seconds
    error_message = "lease_seconds must be a whole number from 60 to 86400; got ${var.lease_seconds}."
  }
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the run metrics (--metrics_namespace); the only custom namespace the role may publish to."
  type        = string
  default     = "GlueIncremental"

  validation {
    condition     = can(regex("^[A-Za-z0-9._/#:-]{1,255}$", var.metrics_namespace)) && !startswith(var.metrics_namespace, "AWS/")
    error_message = "metrics_namespace must be 1-255 characters of [A-Za-z0-9._/#:-] and must not start with AWS/; got \"${var.metrics_namespace}\"."
  }
}

variable "enable_glue_metrics" {
  description = "Turn on Glue's own job and observability metrics and job run insights; also lets the role publish to the `Glue` namespace they use."
  type        = bool
  default     = true
}

variable "read_s3_uris" {
  description = "S3 URIs (bucket or bucket/prefix) the job reads: sources and, for a join, its inputs."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for u in var.read_s3_uris : can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$", u))])
    error_message = "read_s3_uris entries must be s3://<bucket>[/<prefix>] URIs; got: ${join(", ", [for u in var.read_s3_uris : "\"${u}\"" if !can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$", u))])}."
  }
}

variable "write_s3_uris" {
  description = "S3 URIs (bucket/prefix) the job writes; it may also read and delete there (Spark overwrites and commit protocol)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for u in var.write_s3_uris : can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+$", u))])
    error_message = "write_s3_uris entries must be s3://<bucket>/<prefix> URIs with a non-empty prefix (never a whole bucket); got: ${join(", ", [for u in var.write_s3_uris : "\"${u}\"" if !can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+$", u))])}."
  }
}

variable "kms_key_arns" {
  description = "KMS keys protecting the data, scripts or table the job touches (SSE-KMS); the role may use them to encrypt and decrypt."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.kms_key_arns : can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", k))])
    error_message = "kms_key_arns entries must be KMS key ARNs; got: ${join(", ", [for k in var.kms_key_arns : "\"${k}\"" if !can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", k))])}."
  }
}

variable "log_retention_days" {
  description = "Retention of the job's CloudWatch log groups."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653); got ${var.log_retention_days}."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key ARN for the job's log groups (its key policy must allow logs.<region>.amazonaws.com). Null keeps CloudWatch Logs' default encryption."
  type        = string
  default     = null

  validation {
    condition     = var.log_kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.log_kms_key_arn))
    error_message = "log_kms_key_arn must be a KMS key ARN; got \"${coalesce(var.log_kms_key_arn, "null")}\"."
  }
}

variable "security_configuration" {
  description = "Name of an existing Glue security configuration (S3/CloudWatch/bookmark encryption with a CMK). Null relies on the buckets' and table's own encryption."
  type        = string
  default     = null

  validation {
    condition     = var.security_configuration == null || can(regex("^[A-Za-z0-9_.-]{1,255}$", var.security_configuration))
    error_message = "security_configuration must be a Glue security configuration name; got \"${coalesce(var.security_configuration, "null")}\"."
  }
}

variable "role_name" {
  description = "Name of the job's IAM role. Null uses `glue-<name>`."
  type        = string
  default     = null

  validation {
    condition     = var.role_name == null || can(regex("^[A-Za-z0-9+=,.@_-]{1,64}$", var.role_name))
    error_message = "role_name must be 1-64 characters of [A-Za-z0-9+=,.@_-]; got \"${coalesce(var.role_name, "null")}\"."
  }
}

variable "permissions_boundary_arn" {
  description = "Optional IAM permissions boundary for the job role."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", var.permissions_boundary_arn))
    error_message = "permissions_boundary_arn must be an IAM policy ARN; got \"${coalesce(var.permissions_boundary_arn, "null")}\"."
  }
}

variable "tags" {
  description = "Tags applied to every resource of the module."
  type        = map(string)
  default     = {}
}

variable "iceberg_target" {
  description = "Optional Iceberg target in the Glue Data Catalog: adds --datalake-formats iceberg, the glue_catalog --conf settings, --target_format/--target_table, and Glue table permissions on exactly that table and its side tables (<table>__delivery, <table>__tombstone). The job creates them as it needs them; the database must exist. The warehouse prefix must also be in write_s3_uris."
  type = object({
    account_id = string
    region     = string
    database   = string
    table      = string
    warehouse  = string
  })
  default = null

  validation {
    condition     = var.iceberg_target == null || can(regex("^[a-z_][a-z0-9_]{0,254}$", var.iceberg_target.database)) && can(regex("^[a-z_][a-z0-9_]{0,243}$", var.iceberg_target.table))
    error_message = "iceberg_target database and table must be lower-case Glue identifiers ([a-z_][a-z0-9_]*), the table at most 244 characters (its side table <table>__tombstone within Glue's 255: https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-catalog-tables.html)."
  }

  validation {
    condition     = var.iceberg_target == null || can(regex("^[0-9]{12}$", var.iceberg_target.account_id)) && can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.iceberg_target.region))
    error_message = "iceberg_target account_id must be 12 digits and region an AWS region name."
  }

  validation {
    condition     = var.iceberg_target == null || can(regex("^s3://[^/]+/.+", var.iceberg_target.warehouse))
    error_message = "iceberg_target warehouse must be an s3://bucket/prefix URI."
  }
}

variable "jdbc_credentials" {
  description = "Where a JDBC job reads its credentials. secret_arn: a Secrets Manager secret (JSON username/password) passed as --source_secret_id; the role may GetSecretValue on exactly it. connection_names: Glue connections set as the job's connections (the role may GetConnection on them); with one, it is passed as --connection_name."
  type = object({
    secret_arn       = optional(string)
    connection_names = optional(list(string), [])
  })
  default = {}

  validation {
    condition     = var.jdbc_credentials.secret_arn == null || can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$", var.jdbc_credentials.secret_arn))
    error_message = "jdbc_credentials.secret_arn must be one Secrets Manager secret ARN (no wildcard); got \"${coalesce(var.jdbc_credentials.secret_arn, "null")}\"."
  }

  validation {
    condition     = alltrue([for name in var.jdbc_credentials.connection_names : can(regex("^[A-Za-z0-9_.-]{1,255}$", name))])
    error_message = "jdbc_credentials.connection_names must be Glue connection names ([A-Za-z0-9_.-], no wildcard)."
  }
}

variable "vpc_network" {
  description = "Subnets and security groups of the job's VPC connection (its Glue connection's physical requirements). Set, the role may create, tag and delete the run's network interfaces there, as Glue needs; null for connections outside a VPC or none."
  type = object({
    subnet_ids         = list(string)
    security_group_ids = list(string)
  })
  default = null

  validation {
    condition     = var.vpc_network == null || try(length(var.vpc_network.subnet_ids) > 0 && alltrue([for id in var.vpc_network.subnet_ids : can(regex("^subnet-[0-9a-f]{8,17}$", id))]) && length(var.vpc_network.security_group_ids) > 0 && alltrue([for id in var.vpc_network.security_group_ids : can(regex("^sg-[0-9a-f]{8,17}$", id))]), false)
    error_message = "vpc_network needs at least one subnet-... id and one sg-... id (no wildcard)."
  }
}

variable "spark_ui_enabled" {
  description = "Write Spark UI event logs to `<temp_dir>/spark-ui/` (--enable-spark-ui, --spark-event-logs-path); the role's temp-prefix grant covers them."
  type        = bool
  default     = true
}

variable "auto_scaling_enabled" {
  description = "Let Glue scale workers between 2 and number_of_workers per stage (--enable-auto-scaling)."
  type        = bool
  default     = false
}

variable "notify_delay_after" {
  description = "Minutes after a run starts at which Glue emits a \"Glue Job Run Status\" event if the run is still STARTING/RUNNING/STOPPING (the slow-run warning, before `timeout`); null: none."
  type        = number
  default     = null

  # https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html#aws-glue-api-jobs-job-NotificationProperty
  validation {
    condition     = var.notify_delay_after == null || try(var.notify_delay_after >= 1 && floor(var.notify_delay_after) == var.notify_delay_after, false)
    error_message = "notify_delay_after must be a whole number of minutes >= 1 (NotificationProperty.NotifyDelayAfter, https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-job.html#aws-glue-api-jobs-job-NotificationProperty); got ${coalesce(var.notify_delay_after, -1)}."
  }
}

variable "catalog_table" {
  description = "Optional Glue Data Catalog table of a Parquet target: adds --catalog_table and glue:GetTable/UpdateTable on exactly that table, so a run adds the columns a schema change brought (the load's and the join's --schema_evolution)."
  type = object({
    account_id = string
    region     = string
    database   = string
    table      = string
  })
  default = null

  validation {
    condition     = var.catalog_table == null || can(regex("^[a-z0-9_]{1,255}$", var.catalog_table.database)) && can(regex("^[a-z0-9_]{1,255}$", var.catalog_table.table))
    error_message = "catalog_table database and table must be 1-255 characters of [a-z0-9_]."
  }

  validation {
    condition     = var.catalog_table == null || can(regex("^[0-9]{12}$", var.catalog_table.account_id)) && can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.catalog_table.region))
    error_message = "catalog_table account_id must be 12 digits and region an AWS region name."
  }
}

variable "bookmark_kms_key_arn" {
  description = "The key the security configuration encrypts job bookmarks with (CSE-KMS); the role gets kms:Encrypt on it. Must be one of kms_key_arns. Null: bookmarks are not encrypted with a customer managed key."
  type        = string
  default     = null
}
