locals {
  bucket = module.scripts_bucket.bucket_name

  load_name = "${var.name_prefix}-incremental-load"
  join_name = "${var.name_prefix}-incremental-join"

  jobs = {
    incremental_load = merge(var.load_job, {
      name            = local.load_name
      script          = "incremental_load"
      upstream_states = []
      arguments       = var.load_job.arguments
    })
    incremental_join = merge(var.join_job, {
      name   = local.join_name
      script = "incremental_join"
      # Derived, not configured: the state the join reads (--upstream_jobs,
      # side=job) must be the state its role may read. The load job's state
      # name is its job name (no watermark_name override).
      upstream_states = [local.load_name]
      arguments       = merge(var.join_job.arguments, { "--upstream_jobs" = "${var.join_job.load_side}=${local.load_name}" })
    })
  }
}

module "watermarks_table" {
  source = "../watermarks_table"

  name                           = var.watermarks_table_name
  deletion_protection_enabled    = var.deletion_protection_enabled
  point_in_time_recovery_enabled = var.point_in_time_recovery_enabled
  kms_key_arn                    = var.watermarks_kms_key_arn
  tags                           = var.tags
}

module "scripts_bucket" {
  source = "../scripts_bucket"

  bucket_name   = var.scripts_bucket_name
  kms_key_arn   = var.scripts_bucket_kms_key_arn
  force_destroy = var.scripts_bucket_force_destroy
  tags          = var.tags
}

module "job" {
  source   = "../glue_job"
  for_each = local.jobs

  name              = each.value.name
  description       = "glue_incremental ${each.value.script} (${var.name_prefix})"
  script_location   = "s3://${local.bucket}/scripts/${var.artifact_version}/${each.value.script}.py"
  library_location  = "s3://${local.bucket}/lib/${var.artifact_version}/glue_incremental.zip"
  temp_dir          = "s3://${local.bucket}/tmp/${each.value.name}/"
  worker_type       = each.value.worker_type
  number_of_workers = each.value.number_of_workers
  timeout           = each.value.timeout
  max_retries       = each.value.max_retries
  bookmark_option   = each.value.bookmark_option
  default_arguments = each.value.arguments

  job_run_queuing_enabled = var.job_run_queuing_enabled
  watermarks_table_name   = module.watermarks_table.name
  watermarks_table_arn    = module.watermarks_table.arn
  upstream_state_names    = each.value.upstream_states
  lease_seconds           = var.lease_seconds
  metrics_namespace       = var.metrics_namespace
  read_s3_uris            = each.value.read_s3_uris
  write_s3_uris           = each.value.write_s3_uris
  kms_key_arns            = distinct(concat(compact([var.scripts_bucket_kms_key_arn, var.watermarks_kms_key_arn]), var.data_kms_key_arns))
  log_retention_days      = var.log_retention_days
  tags                    = var.tags
}

module "triggers" {
  source = "../glue_triggers"
  count  = var.triggers_enabled ? 1 : 0

  workflow = var.workflow_enabled ? { name = "${var.name_prefix}-incremental" } : null

  scheduled_triggers = {
    "${local.load_name}-schedule" = {
      job_name = module.job["incremental_load"].job_name
      schedule = var.load_job.schedule
    }
  }

  conditional_triggers = {
    "${local.join_name}-after-load" = {
      job_name           = module.job["incremental_join"].job_name
      upstream_job_names = [module.job["incremental_load"].job_name]
    }
  }

  tags = var.tags
}

module "oncall" {
  source = "../oncall"

  name          = "${var.name_prefix}-oncall"
  subscriptions = var.oncall_subscriptions
  kms_key_arn   = var.oncall_kms_key_arn
  tags          = var.tags
}

module "alarms" {
  source   = "../job_alarms"
  for_each = module.job

  job_name                        = each.value.job_name
  alarm_topic_arn                 = module.oncall.topic_arn
  metrics_namespace               = var.metrics_namespace
  schedule_period_seconds         = var.alarms.schedule_period_seconds
  missed_run_grace_seconds        = var.alarms.missed_run_grace_seconds
  zero_records_evaluation_periods = var.alarms.zero_records_evaluation_periods
  watermark_lag_threshold_seconds = var.alarms.watermark_lag_threshold_seconds
  enable_failure_events           = var.failure_events_enabled
  tags                            = var.tags
}
