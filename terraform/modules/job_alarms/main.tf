locals {
  # Mirrors glue_incremental.metrics (DIMENSION, RECORDS_NEW, RECORDS_READ,
  # WATERMARK_LAG, METRIC_CONTRACT statistics); tests/terraform/test_terraform.py
  # compares the deployed alarm with the Python constants.
  dimension     = "JobName"
  records_new   = "RecordsNew"
  records_read  = "RecordsRead"
  watermark_lag = "WatermarkLagSeconds"
  # CloudWatch periods above 30 s are whole minutes: a sub-minute schedule rounds up.
  missed_raw       = var.schedule_period_seconds + var.missed_run_grace_seconds
  missed_window    = contains([10, 20, 30], local.missed_raw) ? local.missed_raw : ceil(local.missed_raw / 60) * 60
  failure_states   = ["FAILED", "TIMEOUT", "STOPPED", "ERROR"]
  alarm_topic_arns = [var.alarm_topic_arn]

  # Counts every run publishes (0 included) that page as soon as one run reports any.
  count_alarms = {
    for key, alarm in {
      late_files = {
        metric      = "LateFilesSkipped"
        enabled     = var.count_alarms.late_files
        description = "files older than the bookmark band appeared and were not read: widen --lookback, then reload the affected prefixes."
      }
      null_watermarks = {
        metric      = "NullWatermarkRows"
        enabled     = var.count_alarms.null_watermarks
        description = "source rows have a null watermark column: they are re-read on every run (or stop it with --null_watermarks fail); fix them at the source."
      }
      future_watermarks = {
        metric      = "FutureWatermarkRows"
        enabled     = var.count_alarms.future_watermarks
        description = "source rows are dated after the run's start + --max_future_skew: loaded and re-read until their time comes, the cursor held back; fix the writer's clock or data."
      }
      metric_publish_failures = {
        metric      = "MetricPublishFailures"
        enabled     = true
        description = "a committed run could not publish its metrics: the other alarms are blind for it; check the role's cloudwatch:PutMetricData and --metrics_namespace."
      }
    } : key => alarm if alarm.enabled
  }

  # Appended to every alarm description: the page on-call receives carries it.
  runbook = var.runbook_url == null ? "" : " Runbook: ${var.runbook_url}"
}

resource "aws_cloudwatch_metric_alarm" "zero_records" {
  alarm_name        = "${var.job_name}-zero-records"
  alarm_description = "Glue job ${var.job_name} loaded no new records in ${var.zero_records_evaluation_periods} consecutive run period(s): upstream stalled, or the watermark skipped past the data. (RecordsNew: boundary and lookback re-reads do not count.)${local.runbook}"

  namespace   = var.metrics_namespace
  metric_name = local.records_new
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "Maximum"
  period      = var.schedule_period_seconds

  evaluation_periods  = var.zero_records_evaluation_periods
  datapoints_to_alarm = var.zero_records_evaluation_periods
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  # Every run publishes RecordsNew, even 0; no datapoint means no run, which
  # is the missed-run alarm's page, not this one's.
  treat_missing_data = "notBreaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = var.schedule_period_seconds * var.zero_records_evaluation_periods <= (var.schedule_period_seconds < 3600 ? 86400 : 604800)
      error_message = "CloudWatch evaluates at most one day (periods under an hour) or seven days: ${var.zero_records_evaluation_periods} x ${var.schedule_period_seconds}s is too long."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "missed_run" {
  alarm_name        = "${var.job_name}-missed-run"
  alarm_description = "Glue job ${var.job_name} published no run metrics in ${local.missed_window}s: the trigger did not fire, or the run died before reporting.${local.runbook}"

  namespace   = var.metrics_namespace
  metric_name = local.records_read
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "SampleCount"
  period      = local.missed_window

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "LessThanThreshold"
  threshold           = 1
  # Deliberate: a window without a datapoint is exactly a window without a run.
  treat_missing_data = "breaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags
}

resource "aws_cloudwatch_metric_alarm" "watermark_stale" {
  alarm_name        = "${var.job_name}-watermark-stale"
  alarm_description = "Glue job ${var.job_name}'s committed watermark is more than ${var.watermark_lag_threshold_seconds}s behind: runs succeed but do not advance.${local.runbook}"

  namespace   = var.metrics_namespace
  metric_name = local.watermark_lag
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "Maximum"
  period      = var.schedule_period_seconds

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.watermark_lag_threshold_seconds
  # Lag is only reported once a watermark exists; absence is not staleness.
  treat_missing_data = "notBreaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags
}

resource "aws_cloudwatch_metric_alarm" "counts" {
  for_each = local.count_alarms

  alarm_name        = "${var.job_name}-${replace(each.key, "_", "-")}"
  alarm_description = "Glue job ${var.job_name}: ${each.value.description}${local.runbook}"

  namespace   = var.metrics_namespace
  metric_name = each.value.metric
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "Maximum"
  period      = var.schedule_period_seconds

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  # No run, no count: the missed-run alarm pages for that.
  treat_missing_data = "notBreaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags
}

resource "aws_cloudwatch_event_rule" "run_failed" {
  count = var.enable_failure_events ? 1 : 0

  name        = "${var.job_name}-run-failed"
  description = "Glue job ${var.job_name} run ended ${join("/", local.failure_states)}."
  tags        = var.tags

  event_pattern = jsonencode({
    source        = ["aws.glue"]
    "detail-type" = ["Glue Job State Change"]
    detail = {
      jobName = [var.job_name]
      state   = local.failure_states
    }
  })
}

resource "aws_cloudwatch_event_target" "run_failed" {
  count = var.enable_failure_events ? 1 : 0

  rule      = aws_cloudwatch_event_rule.run_failed[0].name
  target_id = "oncall"
  arn       = var.alarm_topic_arn

  # A one-line page instead of the raw event; the run id is what the
  # on-call engineer pastes into the Glue console.
  input_transformer {
    input_paths = {
      job     = "$.detail.jobName"
      run     = "$.detail.jobRunId"
      state   = "$.detail.state"
      message = "$.detail.message"
    }
    input_template = "\"Glue job <job> run <run> ended <state>: <message>\""
  }
}
