locals {
  # Mirrors glue_incremental.metrics (DIMENSION, RECORDS_READ, WATERMARK_LAG,
  # METRIC_CONTRACT statistics); tests/terraform/test_terraform.py compares
  # the deployed alarm with the Python constants.
  dimension     = "JobName"
  records_read  = "RecordsRead"
  watermark_lag = "WatermarkLagSeconds"
  # CloudWatch periods above 30 s are whole minutes: a sub-minute schedule rounds up.
  missed_raw       = var.schedule_period_seconds + var.missed_run_grace_seconds
  missed_window    = contains([10, 20, 30], local.missed_raw) ? local.missed_raw : ceil(local.missed_raw / 60) * 60
  failure_states   = ["FAILED", "TIMEOUT", "STOPPED", "ERROR"]
  alarm_topic_arns = [var.alarm_topic_arn]
}

resource "aws_cloudwatch_metric_alarm" "zero_records" {
  alarm_name        = "${var.job_name}-zero-records"
  alarm_description = "Glue job ${var.job_name} read no records in ${var.zero_records_evaluation_periods} consecutive run period(s): upstream stalled, or the watermark skipped past the data."

  namespace   = var.metrics_namespace
  metric_name = local.records_read
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "Maximum"
  period      = var.schedule_period_seconds

  evaluation_periods  = var.zero_records_evaluation_periods
  datapoints_to_alarm = var.zero_records_evaluation_periods
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  # Every run publishes RecordsRead, even 0; no datapoint means no run, which
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
  alarm_description = "Glue job ${var.job_name} published no run metrics in ${local.missed_window}s: the trigger did not fire, or the run died before reporting."

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
  alarm_description = "Glue job ${var.job_name}'s committed watermark is more than ${var.watermark_lag_threshold_seconds}s behind: runs succeed but do not advance."

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
