locals {
  # Names from the variables, not the resources: every job argument is then
  # known at plan (terraform console, the environment contract test). The
  # jobs still depend on the bucket and table through their roles' ARNs.
  bucket        = var.scripts_bucket_name
  database_name = coalesce(var.catalog_database_name, replace(var.name_prefix, "-", "_"))

  job_names = { for k in keys(var.pipelines) : k => "${var.name_prefix}-${replace(k, "_", "-")}" }

  # --- the dependency graph ------------------------------------------------

  # Join sides by pipeline; an empty map for loads or malformed joins (the
  # variable's validations report those).
  join_sides = { for k, p in var.pipelines : k => try({ left = p.join.left, right = p.join.right }, {}) }

  # A side naming a pipeline reads that pipeline's committed state and target.
  side_upstreams = { for k, sides in local.join_sides : k => { for side, s in sides : side => s.pipeline if try(s.pipeline != null, false) } }
  upstreams      = { for k, p in var.pipelines : k => sort(distinct(concat(p.upstreams, values(local.side_upstreams[k]), values(local.custom_source_upstreams[k])))) }

  # A custom pipeline's sources naming a pipeline: upstreams read through their committed state, like join sides.
  custom_source_upstreams = { for k, p in var.pipelines : k => { for name, s in p.sources : name => s.pipeline if s.pipeline != null } }
  custom_sources_iceberg  = flatten([for k, ups in local.custom_source_upstreams : [for name, u in ups : "${k}.sources.${name} = ${u}" if contains(keys(local.iceberg_targets), u)]])

  ambiguous_sides      = flatten([for k, sides in local.join_sides : [for side, s in sides : "${k}.join.${side}" if(s.path == null) == (s.pipeline == null)]])
  unknown_upstreams    = flatten([for k, ups in local.upstreams : [for u in ups : "${k} -> ${u}" if !contains(keys(var.pipelines), u)]])
  join_sides_not_loads = flatten([for k, sides in local.side_upstreams : [for side, u in sides : "${k}.join.${side} = ${u} (a ${var.pipelines[u].kind})" if try(var.pipelines[u].kind != "load", false)]])
  # A side reading an Iceberg table needs Glue table permissions the join's role is not given yet.
  join_sides_iceberg = flatten([for k, sides in local.side_upstreams : [for side, u in sides : "${k}.join.${side} = ${u}" if contains(keys(local.iceberg_targets), u)]])
  # A history target holds every version of a key: a join by key would match each of them.
  join_sides_history = flatten([for k, sides in local.side_upstreams : [for side, u in sides : "${k}.join.${side} = ${u}" if try(var.pipelines[u].history != null, false)]])

  # Transitive upstreams by repeated squaring: reach_64 covers chains up to 64
  # pipelines long. A pipeline in its own reach is on a cycle.
  reach_1  = { for k, ups in local.upstreams : k => [for u in ups : u if contains(keys(var.pipelines), u)] }
  reach_2  = { for k, r in local.reach_1 : k => distinct(concat(r, flatten([for u in r : local.reach_1[u]]))) }
  reach_4  = { for k, r in local.reach_2 : k => distinct(concat(r, flatten([for u in r : local.reach_2[u]]))) }
  reach_8  = { for k, r in local.reach_4 : k => distinct(concat(r, flatten([for u in r : local.reach_4[u]]))) }
  reach_16 = { for k, r in local.reach_8 : k => distinct(concat(r, flatten([for u in r : local.reach_8[u]]))) }
  reach_32 = { for k, r in local.reach_16 : k => distinct(concat(r, flatten([for u in r : local.reach_16[u]]))) }
  reach_64 = { for k, r in local.reach_32 : k => distinct(concat(r, flatten([for u in r : local.reach_32[u]]))) }

  cyclic_pipelines = sort([for k, r in local.reach_64 : k if contains(r, k)])

  target_paths     = { for k, p in var.pipelines : k => "${trimsuffix(p.target.path, "/")}/" }
  iceberg_targets  = { for k, p in var.pipelines : k => p if p.target.format == "iceberg" }
  target_tables    = { for k, p in var.pipelines : k => coalesce(p.target.table, k) }
  targets_by_path  = { for k, path in local.target_paths : path => k... }
  targets_by_table = { for k, table in local.target_tables : table => k... }
  duplicate_targets = concat(
    [for path, ks in local.targets_by_path : "${join(" and ", ks)} write ${path}" if length(ks) > 1],
    [for table, ks in local.targets_by_table : "${join(" and ", ks)} register table ${table}" if length(ks) > 1],
  )

  # --- job arguments, derived ------------------------------------------------

  # A history target's valid_from/valid_to have the watermark column's type (timestamp when undeclared).
  watermark_types = {
    for k, p in var.pipelines : k => try([for c in p.target.columns : c.type if c.name == p.watermark_column][0], "timestamp")
  }

  derived_argument_names = [
    "--source", "--source_format", "--source_table", "--watermark_column", "--primary_key",
    "--left_path", "--right_path", "--left_format", "--right_format", "--join_keys", "--join_type",
    "--partition_by", "--partition_types", "--target_path", "--target_format", "--target_table",
    "--upstream_jobs", "--discovery", "--notification_queue_url", "--transform",
    "--release", "--history", "--history_columns",
  ]

  # A team's package: a file name deploy ships in every release (releases/<id>/), or an s3:// URI as given.
  package_uris = {
    for k, p in var.pipelines : k => startswith(p.transform.package, "s3://") ? p.transform.package : "s3://${local.bucket}/releases/${local.pipeline_releases[k]}/${p.transform.package}"
    if p.transform != null
  }

  custom_source_paths = {
    for k, p in var.pipelines : k => { for name, s in p.sources : name => s.pipeline != null ? lookup(local.target_paths, s.pipeline, "") : s.path if s.uri == null }
  }

  # A JDBC source arrives as the arguments glue_incremental.custom.jdbc_arguments declares;
  # its credentials are the pipeline's (secret_arn / connections, passed by glue_job).
  custom_jdbc_sources = {
    for k, p in var.pipelines : k => { for name, s in p.sources : name => s if s.uri != null }
  }

  custom_arguments = {
    for k, p in var.pipelines : k => merge(
      { for name, path in local.custom_source_paths[k] : "--${name}_path" => path },
      { for name, s in local.custom_jdbc_sources[k] : "--${name}_url" => s.uri },
      { for name, s in local.custom_jdbc_sources[k] : "--${name}_table" => s.table },
      { for name, s in p.sources : "--${name}_format" => s.format if s.format != null },
      { for name, u in local.custom_source_upstreams[k] : "--${coalesce(p.sources[name].upstream_argument, "${name}_upstream_job")}" => lookup(local.job_names, u, u) },
    ) if p.kind == "custom"
  }

  # Load pipelines whose S3 source announces new objects through SQS (modules/s3_notifications).
  notified_sources = { for k, p in var.pipelines : k => p.source.uri if p.kind == "load" && try(p.source.notifications, false) }
  notified_buckets = { for k, uri in local.notified_sources : split("/", trimprefix(uri, "s3://"))[0] => k... }

  side_paths = {
    for k, sides in local.join_sides : k => {
      for side, s in sides : side => s.pipeline != null ? lookup(local.target_paths, s.pipeline, "") : s.path
    }
  }

  partition_names = { for k, p in var.pipelines : k => [for part in p.target.partitions : part.name] }

  load_arguments = {
    for k, p in var.pipelines : k => merge(
      {
        "--source"           = p.source.uri
        "--watermark_column" = p.watermark_column
        "--primary_key"      = join(",", p.primary_key)
      },
      startswith(p.source.uri, "jdbc:") ? {} : { "--source_format" = p.source.format },
      p.source.table == null ? {} : { "--source_table" = p.source.table },
      !contains(keys(local.notified_sources), k) ? {} : {
        "--discovery"              = "notifications"
        "--notification_queue_url" = module.source_notifications[k].queue_url
      },
    ) if p.kind == "load" && p.source != null
  }

  join_arguments = {
    for k, p in var.pipelines : k => merge(
      {
        "--left_path"    = local.side_paths[k].left
        "--right_path"   = local.side_paths[k].right
        "--left_format"  = p.join.left.format
        "--right_format" = p.join.right.format
        "--join_keys"    = join(",", p.join.keys)
        "--join_type"    = p.join.type
      },
      # Derived, never configured: the upstream states the join reads are the
      # ones its role may read (upstream_state_names below).
      length(local.side_upstreams[k]) == 0 ? {} : {
        "--upstream_jobs" = join(",", [for side, u in local.side_upstreams[k] : "${side}=${lookup(local.job_names, u, u)}"])
      },
      length([for part in p.target.partitions : part if contains(["int", "bigint", "date"], part.type)]) == 0 ? {} : {
        "--partition_types" = join(",", [for part in p.target.partitions : "${part.name}:${part.type}" if contains(["int", "bigint", "date"], part.type)])
      },
    ) if p.kind == "join" && p.join != null
  }

  jobs = {
    for k, p in var.pipelines : k => {
      name   = local.job_names[k]
      script = p.kind == "custom" ? p.script : p.kind == "load" ? "incremental_load" : "incremental_join"
      arguments = merge(
        p.arguments,
        lookup(local.load_arguments, k, {}),
        lookup(local.join_arguments, k, {}),
        lookup(local.custom_arguments, k, {}),
        p.transform == null ? {} : { "--transform" = p.transform.function },
        p.history == null ? {} : { "--history" = "scd2" },
        try(length(p.history.columns), 0) == 0 ? {} : { "--history_columns" = join(",", p.history.columns) },
        p.target.format == "iceberg" ? {} : { "--target_path" = local.target_paths[k] },
        length(p.target.partitions) == 0 ? {} : { "--partition_by" = join(",", local.partition_names[k]) },
      )
      upstream_states = sort([for u in concat(values(local.side_upstreams[k]), values(local.custom_source_upstreams[k])) : lookup(local.job_names, u, u)])
      read_s3_uris = distinct(concat(
        p.kind == "load" ? [for u in [try(p.source.uri, "")] : u if startswith(u, "s3://")] : [for s in values(local.side_paths[k]) : s if startswith(s, "s3://")],
        [for s in values(local.custom_source_paths[k]) : s if startswith(s, "s3://")],
        p.read_s3_uris,
      ))
      write_s3_uris = [local.target_paths[k]]
    }
  }

  alarm_tuning = { for k, p in var.pipelines : k => merge(var.alarms, { for name, value in p.alarms : name => value if value != null }) }
}

# The map's graph rules, checked at plan before anything is created. They are
# preconditions rather than validations of var.pipelines because they need
# the derived graph (locals), which itself depends on the variable.
#
# No input: the resource never changes, so adding a pipeline plans nothing
# here; the preconditions are evaluated on every plan all the same.
resource "terraform_data" "pipeline_graph" {
  lifecycle {
    precondition {
      condition     = length(local.ambiguous_sides) == 0
      error_message = "each join side is either { path = \"s3://...\" } or { pipeline = \"<load pipeline>\" }, exactly one; invalid: ${join(", ", local.ambiguous_sides)}."
    }

    precondition {
      condition     = length(local.unknown_upstreams) == 0
      error_message = "unknown upstream pipeline: ${join(", ", local.unknown_upstreams)}."
    }

    precondition {
      condition     = length(local.join_sides_not_loads) == 0
      error_message = "a join side must name a load pipeline (its target is the side's input): ${join(", ", local.join_sides_not_loads)}."
    }

    precondition {
      condition     = length(local.join_sides_iceberg) == 0
      error_message = "a join side cannot name a pipeline with an Iceberg target yet (its role would need Glue table permissions on that table): ${join(", ", local.join_sides_iceberg)}."
    }

    precondition {
      condition     = length(local.join_sides_history) == 0
      error_message = "a join side cannot name a pipeline with history (its target holds every version of a key; the join would match each): ${join(", ", local.join_sides_history)}."
    }

    precondition {
      condition     = length(local.custom_sources_iceberg) == 0
      error_message = "a custom source cannot name a pipeline with an Iceberg target yet (its role would need Glue table permissions on that table): ${join(", ", local.custom_sources_iceberg)}."
    }

    precondition {
      condition     = alltrue([for ks in values(local.notified_buckets) : length(ks) == 1])
      error_message = "S3 keeps one notification configuration per bucket: at most one pipeline per bucket may set source.notifications; shared: ${join("; ", [for b, ks in local.notified_buckets : "${b} (${join(", ", ks)})" if length(ks) > 1])}."
    }

    precondition {
      condition     = length(local.cyclic_pipelines) == 0
      error_message = "dependency cycle: ${join(", ", local.cyclic_pipelines)} depend(s) on itself through its upstreams."
    }

    precondition {
      condition     = length(local.duplicate_targets) == 0
      error_message = "duplicate target: ${join("; ", local.duplicate_targets)}. Two pipelines writing one target would overwrite each other's partitions."
    }

    precondition {
      condition     = alltrue([for k, p in var.pipelines : length(local.upstreams[k]) > 0 || p.schedule != null])
      error_message = "a pipeline without upstreams needs a schedule (AWS cron): ${join(", ", [for k, p in var.pipelines : k if length(local.upstreams[k]) == 0 && p.schedule == null])}."
    }

    precondition {
      condition     = alltrue([for p in values(var.pipelines) : length(setintersection(keys(p.arguments), local.derived_argument_names)) == 0])
      error_message = "pipeline arguments must not set what the module derives (${join(", ", local.derived_argument_names)}): ${join(", ", flatten([for k, p in var.pipelines : [for a in setintersection(keys(p.arguments), local.derived_argument_names) : "${k} sets ${a}"]]))}."
    }
  }
}

module "watermarks_table" {
  source = "../watermarks_table"

  name                           = var.watermarks_table_name
  deletion_protection_enabled    = var.deletion_protection_enabled
  point_in_time_recovery_enabled = var.point_in_time_recovery_enabled
  kms_key_arn                    = local.table_key_arn
  kms_encryption_enabled         = var.watermarks_kms_encryption_enabled
  tags                           = var.tags
}

module "scripts_bucket" {
  source = "../scripts_bucket"

  bucket_name   = var.scripts_bucket_name
  kms_key_arn   = local.scripts_key_arn
  force_destroy = var.scripts_bucket_force_destroy
  tags          = var.tags

  # Only the deploy role writes code (docs/releases.md).
  code_writer_role_arns = var.scripts_writer_role_arns
}

data "aws_caller_identity" "current" {}

module "job" {
  source   = "../glue_job"
  for_each = var.pipelines

  name                 = local.jobs[each.key].name
  description          = coalesce(each.value.description, "glue_incremental ${each.value.kind} pipeline ${each.key} (${var.name_prefix})")
  script_location      = local.script_locations[each.key]
  library_location     = local.library_locations[each.key]
  temp_dir             = "s3://${local.bucket}/tmp/${local.jobs[each.key].name}/"
  worker_type          = each.value.size.worker_type
  number_of_workers    = each.value.size.number_of_workers
  timeout              = each.value.size.timeout
  max_retries          = each.value.size.max_retries
  execution_class      = each.value.size.execution_class
  auto_scaling_enabled = each.value.size.auto_scaling
  bookmark_option      = each.value.bookmark_option
  default_arguments    = merge(local.jobs[each.key].arguments, local.release_arguments[each.key])
  extra_py_files       = compact([lookup(local.package_uris, each.key, null)])

  # The slow-run warning (job_alarms run_slow) comes at 3/4 of the timeout unless set.
  notify_delay_after = coalesce(each.value.size.slow_run_after, max(1, floor(each.value.size.timeout * 3 / 4)))

  # The job creates the table in the environment's database on its first run.
  iceberg_target = each.value.target.format != "iceberg" ? null : {
    account_id = data.aws_caller_identity.current.account_id
    region     = data.aws_region.current.name
    database   = local.database_name
    table      = local.target_tables[each.key]
    warehouse  = local.target_paths[each.key]
  }

  # A Parquet load or join keeps its catalog table's columns in step with schema evolution.
  catalog_table = each.value.target.format == "iceberg" || !contains(["load", "join"], each.value.kind) ? null : {
    account_id = data.aws_caller_identity.current.account_id
    region     = data.aws_region.current.name
    database   = local.database_name
    table      = local.target_tables[each.key]
  }

  jdbc_credentials = { secret_arn = each.value.secret_arn, connection_names = local.pipeline_connections[each.key] }
  vpc_network      = local.pipeline_networks[each.key]

  job_run_queuing_enabled  = var.job_run_queuing_enabled
  watermarks_table_name    = var.watermarks_table_name
  watermarks_table_arn     = module.watermarks_table.arn
  upstream_state_names     = local.jobs[each.key].upstream_states
  lease_seconds            = var.lease_seconds
  metrics_namespace        = var.metrics_namespace
  read_s3_uris             = local.jobs[each.key].read_s3_uris
  write_s3_uris            = local.jobs[each.key].write_s3_uris
  kms_key_arns             = local.job_kms_key_arns
  bookmark_kms_key_arn     = var.encryption.security_configuration.create ? try(local.data_key_arns[0], null) : null
  log_kms_key_arn          = local.logs_key_arn
  security_configuration   = local.security_configuration_name
  permissions_boundary_arn = var.permissions_boundary_arn
  log_retention_days       = var.log_retention_days
  tags                     = var.tags
}

module "source_notifications" {
  source   = "../s3_notifications"
  for_each = local.notified_sources

  name       = "${local.job_names[each.key]}-source-events"
  source_uri = each.value
  # The role policy is attached below: the job's arguments need the queue URL first.
  job_role_name              = null
  kms_key_arn                = var.notifications_kms_key_arn
  visibility_timeout_seconds = min(43200, max(var.lease_seconds, var.pipelines[each.key].size.timeout * 60))
  tags                       = var.tags
}

resource "aws_iam_role_policy" "source_notifications" {
  for_each = local.notified_sources

  name   = "${local.job_names[each.key]}-source-events"
  role   = module.job[each.key].role_name
  policy = module.source_notifications[each.key].job_policy_json
}

# Standalone conditional triggers rather than Glue workflows: a workflow has a
# single start trigger, so two loads on their own schedules could not feed one
# join without sharing a schedule; and the join does not need a workflow run's
# bookkeeping to be correct, because it reads each side from its own bookmark
# bounded by the upstream's committed state (--upstream_jobs). One trigger per
# pipeline also keeps adding a pipeline from touching any other resource.
module "triggers" {
  source = "../glue_triggers"
  count  = var.triggers_enabled ? 1 : 0

  scheduled_triggers = {
    for k, p in var.pipelines : "${local.job_names[k]}-schedule" => {
      job_name    = module.job[k].job_name
      schedule    = p.schedule
      description = "Starts pipeline ${k} on its schedule."
    } if length(local.upstreams[k]) == 0
  }

  conditional_triggers = {
    for k, p in var.pipelines : "${local.job_names[k]}-after-upstreams" => {
      job_name           = module.job[k].job_name
      upstream_job_names = [for u in local.reach_1[k] : module.job[u].job_name]
      logical            = p.trigger_logical
      description        = "Starts pipeline ${k} when ${join(", ", local.reach_1[k])} SUCCEEDED."
    } if length(local.reach_1[k]) > 0 && var.orchestration == "triggers"
  }

  tags = var.tags
}

module "oncall" {
  source = "../oncall"

  name                = "${var.name_prefix}-oncall"
  subscriptions       = var.oncall_subscriptions
  kms_key_arn         = var.oncall_kms_key_arn
  key_admin_role_arns = var.key_admin_role_arns
  runbook_base_url    = var.runbook_base_url
  tags                = var.tags
}

module "alarms" {
  source   = "../job_alarms"
  for_each = var.pipelines

  job_name                        = module.job[each.key].job_name
  alarm_topic_arn                 = module.oncall.topic_arn
  metrics_namespace               = var.metrics_namespace
  schedule_period_seconds         = local.alarm_tuning[each.key].schedule_period_seconds
  missed_run_grace_seconds        = local.alarm_tuning[each.key].missed_run_grace_seconds
  zero_records_evaluation_periods = local.alarm_tuning[each.key].zero_records_evaluation_periods
  watermark_lag_threshold_seconds = local.alarm_tuning[each.key].watermark_lag_threshold_seconds
  enable_failure_events           = var.failure_events_enabled
  slow_run_warning_enabled        = var.failure_events_enabled
  event_retry                     = var.event_retry
  runbook_base_url                = var.runbook_base_url
  tags                            = var.tags
}
