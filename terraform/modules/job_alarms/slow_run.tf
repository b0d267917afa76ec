# Slow-run warning: Glue emits "Glue Job Run Status" for a STARTING, RUNNING or
# STOPPING run that passed its job's NotifyDelayAfter (modules/glue_job
# notify_delay_after), so on-call hears of a slow run before the timeout kills it.
# https://docs.aws.amazon.com/glue/latest/dg/automating-awsglue-with-cloudwatch-events.html
locals {
  run_slow_page_template = replace(replace(jsonencode({
    AlarmName        = "${var.job_name}-run-slow"
    AlarmDescription = "Glue job ${var.job_name} run <run> is still <state> past its delay threshold, before its timeout. Runbook: ${var.runbook_base_url}#run-slow"
    AWSAccountId     = "<account>"
    NewStateValue    = "ALARM"
    OldStateValue    = "OK"
    NewStateReason   = "Glue job <job> run <run> is still <state>: <message>"
    StateChangeTime  = "<time>"
    Region           = "<region>"
    Trigger = {
      Namespace  = "AWS/Glue"
      MetricName = "JobRunStatus"
      Dimensions = [{ name = "JobName", value = "<job>" }, { name = "JobRunId", value = "<run>" }]
    }
  }), "\\u003c", "<"), "\\u003e", ">")
}

resource "aws_cloudwatch_event_rule" "run_slow" {
  count = var.slow_run_warning_enabled ? 1 : 0

  name        = "${var.job_name}-run-slow"
  description = "Glue job ${var.job_name} run is still going past its NotifyDelayAfter."
  tags        = var.tags

  event_pattern = jsonencode({
    source        = ["aws.glue"]
    "detail-type" = ["Glue Job Run Status"]
    detail        = { jobName = [var.job_name] }
  })
}

resource "aws_cloudwatch_event_target" "run_slow" {
  count = var.slow_run_warning_enabled ? 1 : 0

  rule      = aws_cloudwatch_event_rule.run_slow[0].name
  target_id = "oncall"
  arn       = var.alarm_topic_arn

  # As run_failed: retried, then parked in the dead-letter queue, never dropped.
  retry_policy {
    maximum_event_age_in_seconds = var.event_retry.maximum_event_age_in_seconds
    maximum_retry_attempts       = var.event_retry.maximum_retry_attempts
  }

  dead_letter_config {
    arn = module.dead_letters[0].arn
  }


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
    input_template = local.run_slow_page_template
  }
}
