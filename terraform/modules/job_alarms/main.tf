locals {
  # Mirrors glue_incremental.run.metrics (DIMENSION, RECORDS_NEW, RECORDS_READ,
  # WATERMARK_LAG, METRIC_CONTRACT statistics); tests/terraform/test_terraform_local.py
  # compares the deployed alarm with the Python constants.
  dimension     = "JobName"
  records_new   = "RecordsNew"
  records_read  = "RecordsRead"
  watermark_lag = "WatermarkLagSeconds"
  # CloudWatch periods above 30 s are whole minutes, and one period is at most a
  # day (docs/aws-limits.md): a longer missed-run window is split into N equal
  # periods of at most a day, and the alarm fires only when all N are empty.
  missed_raw       = var.schedule_period_seconds + var.missed_run_grace_seconds
  missed_count     = ceil(local.missed_raw / local.limits.max_period_seconds)
  missed_share     = local.missed_raw / local.missed_count
  missed_period    = contains([10, 20, 30], local.missed_share) ? local.missed_share : ceil(local.missed_share / 60) * 60
  missed_window    = local.missed_period * local.missed_count
  failure_states   = ["FAILED", "TIMEOUT", "STOPPED", "ERROR"]
  alarm_topic_arns = [var.alarm_topic_arn]

  # What the failed-run page says, as a CloudWatch alarm notification: placeholders
  # are <name> strings EventBridge fills in (outputs.run_failed_page_template);
  # jsonencode writes < and > as \u003c and \u003e, which EventBridge would not.
  run_failed_page_template = replace(replace(jsonencode({
    AlarmName        = "${var.job_name}-run-failed"
    AlarmDescription = "Glue job ${var.job_name} run <run> ended <state>. Runbook: ${var.runbook_base_url}#run-failed"
    AWSAccountId     = "<account>"
    NewStateValue    = "ALARM"
    OldStateValue    = "OK"
    NewStateReason   = "Glue job <job> run <run> ended <state>: <message>"
    StateChangeTime  = "<time>"
    Region           = "<region>"
    Trigger = {
      Namespace  = "AWS/Glue"
      MetricName = "JobRunState"
      Dimensions = [{ name = "JobName", value = "<job>" }, { name = "JobRunId", value = "<run>" }]
    }
  }), "\\u003c", "<"), "\\u003e", ">")

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

  # Every page links its own section of the runbook: `<base>#<alarm key with - for _>`.
  runbook_links = {
    for key in concat(["zero_records", "missed_run", "watermark_stale", "run_failed"], keys(local.count_alarms)) :
    key => "${var.runbook_base_url}#${replace(key, "_", "-")}"
  }

  # AWS-enforced limits (docs/aws-limits.md has the table and its sources).
  limits = {
    # PutMetricAlarm: Period is 10, 20, 30 or a multiple of 60; Period x
    # EvaluationPeriods at most 86,400 s for periods under an hour, 604,800 s
    # otherwise; AlarmDescription at most 1,024 characters.
    put_metric_alarm_url  = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html"
    max_period_seconds    = 86400
    max_description_chars = 1024
  }
  alarm_window_ok = {
    for name, alarm in {
      zero_records = { period = var.schedule_period_seconds, periods = var.zero_records_evaluation_periods }
      missed_run   = { period = local.missed_period, periods = local.missed_count }
      } : name => (
      (contains([10, 20, 30], alarm.period) || alarm.period % 60 == 0) &&
      alarm.period <= local.limits.max_period_seconds &&
      alarm.period * alarm.periods <= (alarm.period < 3600 ? 86400 : 604800)
    )
  }
}

resource "aws_cloudwatch_metric_alarm" "zero_records" {
  alarm_name        = "${var.job_name}-zero-records"
  alarm_description = "Glue job ${var.job_name} loaded no new records in ${var.zero_records_evaluation_periods} consecutive run period(s): upstream stalled, or the watermark skipped past the data. (RecordsNew: boundary and lookback re-reads do not count.) Runbook: ${local.runbook_links.zero_records}"

  namespace   = var.metrics_namespace
  metric_name = local.records_new
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "Maximum"
  period      = var.schedule_period_seconds

  evaluation_periods  = var.zero_records_evaluation_periods
  datapoints_to_alarm = var.zero_records_evaluation_periods
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  # Every run publishes RecordsNew, even 0; no datapoint means no run, which is the
  # missed-run alarm's page, not this one's. `ignore` keeps the current state through
  # periods without a run: a zero-record page stays in ALARM until a run brings records,
  # instead of resolving itself once its datapoint leaves the window
  # (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html).
  treat_missing_data = "ignore"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = local.alarm_window_ok.zero_records
      error_message = "CloudWatch evaluates at most one day (periods under an hour) or seven days: ${var.zero_records_evaluation_periods} x ${var.schedule_period_seconds}s is too long (${local.limits.put_metric_alarm_url})."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "missed_run" {
  alarm_name        = "${var.job_name}-missed-run"
  alarm_description = "Glue job ${var.job_name} published no run metrics in ${local.missed_window}s: the trigger did not fire, or the run died before reporting. Runbook: ${local.runbook_links.missed_run}"

  namespace   = var.metrics_namespace
  metric_name = local.records_read
  dimensions  = { (local.dimension) = var.job_name }
  statistic   = "SampleCount"
  period      = local.missed_period

  # N periods of at most a day, all of them empty: no run in the whole window.
  evaluation_periods  = local.missed_count
  datapoints_to_alarm = local.missed_count
  comparison_operator = "LessThanThreshold"
  threshold           = 1
  # Deliberate: a window without a datapoint is exactly a window without a run.
  treat_missing_data = "breaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = local.alarm_window_ok.missed_run
      error_message = "the missed-run window ${local.missed_count} x ${local.missed_period}s is outside what CloudWatch accepts (period 10, 20, 30 or a multiple of 60 up to 86,400 s; at most 7 days in all): ${local.limits.put_metric_alarm_url}."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "watermark_stale" {
  alarm_name        = "${var.job_name}-watermark-stale"
  alarm_description = "Glue job ${var.job_name}'s committed watermark is more than ${var.watermark_lag_threshold_seconds}s behind: runs succeed but do not advance. Runbook: ${local.runbook_links.watermark_stale}"

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
  alarm_description = "Glue job ${var.job_name}: ${each.value.description} Runbook: ${local.runbook_links[each.key]}"

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

  # A publish refused (topic key disabled, throttling) is retried, then parked in
  # the dead-letter queue instead of dropped; failed_invocations pages on it.
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
  retry_policy {
    maximum_event_age_in_seconds = var.event_retry.maximum_event_age_in_seconds
    maximum_retry_attempts       = var.event_retry.maximum_retry_attempts
  }

  dead_letter_config {
    arn = module.dead_letters[0].arn
  }


  # The page is shaped like a CloudWatch alarm notification (AlarmName,
  # NewStateValue, NewStateReason, ...), the payload paging services'
  # CloudWatch integrations parse; a bare string is dropped or shown raw.
  # EventBridge escapes the quoted placeholders, so a message with quotes or
  # newlines still yields valid JSON. The run id is what the on-call engineer
  # pastes into the Glue console.
  input_transformer {
    input_paths = {
      job     = "$.detail.jobName"
      run     = "$.detail.jobRunId"
      state   = "$.detail.state"
      message = "$.detail.message"
      time    = "$.time"
      region  = "$.region"
      account = "$.account"
    }
    input_template = local.run_failed_page_template
  }
}

# FailedInvocations: the page EventBridge could not publish after its retries (the event
# waits in the dead-letter queue). Sent only when not zero, so no datapoint is no
# failure. AWS/Events, dimension RuleName: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-monitoring.html
# It pages the same topic: the topic's other subscribers, or the next page, carry it.
resource "aws_cloudwatch_metric_alarm" "failed_invocations" {
  for_each = merge(
    { for r in aws_cloudwatch_event_rule.run_failed : "run_failed" => r.name },
    { for r in aws_cloudwatch_event_rule.run_slow : "run_slow" => r.name },
  )

  alarm_name        = "${each.value}-failed-invocations"
  alarm_description = "EventBridge could not deliver Glue job ${var.job_name}'s ${replace(each.key, "_", "-")} page to the on-call topic after its retries; the event waits in the dead-letter queue. Runbook: ${var.runbook_base_url}#event-delivery-failed"

  namespace   = "AWS/Events"
  metric_name = "FailedInvocations"
  dimensions  = { RuleName = each.value }
  statistic   = "Sum"
  period      = 300

  evaluation_periods  = 1
  datapoints_to_alarm = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"

  alarm_actions = local.alarm_topic_arns
  ok_actions    = local.alarm_topic_arns
  tags          = var.tags
}

# The pages EventBridge could not publish after the retries wait here (one queue per job,
# admitting exactly this job's rules), and page on-call while they do.
module "dead_letters" {
  source = "../event_dead_letters"
  count  = var.enable_failure_events || var.slow_run_warning_enabled ? 1 : 0

  name             = "${var.job_name}-event-dead-letters"
  rule_arns        = concat(aws_cloudwatch_event_rule.run_failed[*].arn, aws_cloudwatch_event_rule.run_slow[*].arn)
  what             = "failed-run or slow-run pages of Glue job ${var.job_name}"
  alarm_topic_arn  = var.alarm_topic_arn
  runbook_base_url = var.runbook_base_url
  tags             = var.tags
}
