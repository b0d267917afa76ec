mock_provider "aws" {
  mock_resource "aws_sqs_queue" {
    defaults = { arn = "arn:aws:sqs:eu-west-1:123456789012:orders-load-event-dead-letters" }
  }
}

variables {
  job_name                        = "orders-load"
  alarm_topic_arn                 = "arn:aws:sns:eu-west-1:123456789012:gi-oncall"
  schedule_period_seconds         = 3600
  watermark_lag_threshold_seconds = 10800
}

run "every_alarm_pages_the_on_call_topic" {
  assert {
    condition = alltrue([for a in concat([aws_cloudwatch_metric_alarm.zero_records, aws_cloudwatch_metric_alarm.missed_run, aws_cloudwatch_metric_alarm.watermark_stale], values(aws_cloudwatch_metric_alarm.counts)) :
    a.alarm_actions == toset(["arn:aws:sns:eu-west-1:123456789012:gi-oncall"]) && a.ok_actions == toset(["arn:aws:sns:eu-west-1:123456789012:gi-oncall"])])
    error_message = "Every alarm's alarm_actions and ok_actions must be exactly the on-call topic."
  }

  assert {
    condition     = aws_cloudwatch_event_target.run_failed[0].arn == "arn:aws:sns:eu-west-1:123456789012:gi-oncall"
    error_message = "Failed runs must be routed to the on-call topic."
  }
}

run "zero_record_alarm_follows_the_metric_contract" {
  assert {
    condition = (aws_cloudwatch_metric_alarm.zero_records.namespace == "GlueIncremental" &&
      aws_cloudwatch_metric_alarm.zero_records.metric_name == "RecordsNew" &&
      aws_cloudwatch_metric_alarm.zero_records.dimensions == tomap({ JobName = "orders-load" }) &&
    aws_cloudwatch_metric_alarm.zero_records.statistic == "Maximum")
    error_message = "The zero-record alarm must watch GlueIncremental/RecordsNew{JobName=<job>} with Maximum: RecordsRead counts boundary and lookback re-reads and never reaches 0 for a JDBC job."
  }

  assert {
    condition = (aws_cloudwatch_metric_alarm.zero_records.comparison_operator == "LessThanOrEqualToThreshold" &&
      aws_cloudwatch_metric_alarm.zero_records.threshold == 0 &&
      aws_cloudwatch_metric_alarm.zero_records.period == 3600 &&
    aws_cloudwatch_metric_alarm.zero_records.treat_missing_data == "ignore")
    error_message = "The zero-record alarm must fire on RecordsNew <= 0 per schedule period, leave missing data to the missed-run alarm and keep its state until a run reports (ignore)."
  }
}

run "missed_run_alarm_treats_silence_as_breaching" {
  assert {
    condition = (aws_cloudwatch_metric_alarm.missed_run.statistic == "SampleCount" &&
      aws_cloudwatch_metric_alarm.missed_run.comparison_operator == "LessThanThreshold" &&
      aws_cloudwatch_metric_alarm.missed_run.threshold == 1 &&
      aws_cloudwatch_metric_alarm.missed_run.period == 3600 + 3600 &&
    aws_cloudwatch_metric_alarm.missed_run.treat_missing_data == "breaching")
    error_message = "The missed-run alarm must count RecordsRead samples over schedule + grace and treat no data as a missed run."
  }
}

run "stale_watermark_alarm_uses_the_lag_threshold" {
  assert {
    condition = (aws_cloudwatch_metric_alarm.watermark_stale.metric_name == "WatermarkLagSeconds" &&
      aws_cloudwatch_metric_alarm.watermark_stale.statistic == "Maximum" &&
      aws_cloudwatch_metric_alarm.watermark_stale.comparison_operator == "GreaterThanThreshold" &&
    aws_cloudwatch_metric_alarm.watermark_stale.threshold == 10800)
    error_message = "The staleness alarm must fire when WatermarkLagSeconds (Maximum) exceeds the threshold."
  }
}

run "failed_timed_out_and_stopped_runs_page" {
  assert {
    condition = jsondecode(aws_cloudwatch_event_rule.run_failed[0].event_pattern) == {
      source        = ["aws.glue"]
      "detail-type" = ["Glue Job State Change"]
      detail        = { jobName = ["orders-load"], state = ["FAILED", "TIMEOUT", "STOPPED", "ERROR"] }
    }
    error_message = "The rule must match this job's FAILED, TIMEOUT, STOPPED and ERROR state changes."
  }
}

run "failure_events_can_be_turned_off_for_emulators" {
  variables {
    enable_failure_events = false
  }

  assert {
    condition     = length(aws_cloudwatch_event_rule.run_failed) == 0 && length(aws_cloudwatch_event_target.run_failed) == 0
    error_message = "enable_failure_events = false must drop the rule and its target."
  }

  assert {
    condition     = length(module.dead_letters) == 0
    error_message = "Without a rule there is no dead-letter queue (its policy could admit no source)."
  }
}

run "each_page_target_retries_then_parks_an_undelivered_event_in_the_dead_letter_queue" {
  variables {
    slow_run_warning_enabled = true
    event_retry              = { maximum_event_age_in_seconds = 600 }
  }

  assert {
    condition = alltrue([for t in concat(aws_cloudwatch_event_target.run_failed, aws_cloudwatch_event_target.run_slow) : (
      t.dead_letter_config[0].arn == module.dead_letters[0].arn &&
      t.retry_policy[0].maximum_event_age_in_seconds == 600 && t.retry_policy[0].maximum_retry_attempts == 20
    )]) && length(aws_cloudwatch_event_target.run_slow) == 1
    error_message = "The failed-run and slow-run targets retry as configured, then send the event to the dead-letter queue instead of dropping it."
  }

  assert {
    condition = { for k, a in aws_cloudwatch_metric_alarm.failed_invocations : k => "${a.namespace}/${a.metric_name} RuleName=${a.dimensions.RuleName} -> ${join(",", a.alarm_actions)}" } == {
      run_failed = "AWS/Events/FailedInvocations RuleName=orders-load-run-failed -> arn:aws:sns:eu-west-1:123456789012:gi-oncall"
      run_slow   = "AWS/Events/FailedInvocations RuleName=orders-load-run-slow -> arn:aws:sns:eu-west-1:123456789012:gi-oncall"
    }
    error_message = "Each rule has a FailedInvocations alarm (AWS/Events, RuleName) paging the on-call topic."
  }

  assert {
    condition     = length(output.event_rule_arns) == 2 && output.delivery_alarm_names.run_failed == "orders-load-run-failed-failed-invocations" && output.dead_letter_queue_name == "orders-load-event-dead-letters" && output.dead_letter_alarm_name == "orders-load-event-dead-letters-not-empty"
    error_message = "The job's own dead-letter queue, its alarm and the delivery alarms are published."
  }
}

run "rejects_more_retries_than_eventbridge_allows" {
  command = plan

  variables {
    event_retry = { maximum_retry_attempts = 200 }
  }

  expect_failures = [var.event_retry]
}

run "rejects_period_cloudwatch_cannot_evaluate" {
  command = plan

  variables {
    schedule_period_seconds = 90
  }

  expect_failures = [var.schedule_period_seconds]
}

run "rejects_an_evaluation_range_cloudwatch_cannot_hold" {
  command = plan

  variables {
    schedule_period_seconds         = 86400
    zero_records_evaluation_periods = 8
  }

  expect_failures = [aws_cloudwatch_metric_alarm.zero_records]
}

run "late_files_null_and_future_watermarks_and_publish_failures_page" {
  assert {
    condition = (
      { for k, a in aws_cloudwatch_metric_alarm.counts : k => a.metric_name } == {
        late_files              = "LateFilesSkipped"
        null_watermarks         = "NullWatermarkRows"
        future_watermarks       = "FutureWatermarkRows"
        metric_publish_failures = "MetricPublishFailures"
      }
    )
    error_message = "Late files, null watermarks, future watermarks and metric-publish failures must each have an alarm on their runtime metric."
  }

  assert {
    condition = alltrue([for a in values(aws_cloudwatch_metric_alarm.counts) :
      a.namespace == "GlueIncremental" && a.dimensions == tomap({ JobName = "orders-load" }) &&
      a.statistic == "Maximum" && a.comparison_operator == "GreaterThanThreshold" && a.threshold == 0 &&
      a.period == 3600 && a.treat_missing_data == "notBreaching" &&
    a.alarm_actions == toset(["arn:aws:sns:eu-west-1:123456789012:gi-oncall"])])
    error_message = "Each count alarm must page the on-call topic as soon as one run reports more than 0."
  }

  assert {
    condition     = output.alarm_names.future_watermarks == "orders-load-future-watermarks"
    error_message = "The count alarms must be in alarm_names."
  }
}

run "count_alarms_can_be_turned_off_but_not_the_publish_failure_one" {
  variables {
    count_alarms = { null_watermarks = false }
  }

  assert {
    condition     = keys(aws_cloudwatch_metric_alarm.counts) == ["future_watermarks", "late_files", "metric_publish_failures"]
    error_message = "count_alarms.null_watermarks = false must drop only that alarm."
  }
}

run "every_alarm_and_the_failure_page_link_their_own_runbook_section" {
  command = plan

  variables {
    runbook_base_url = "https://git.example.com/platform/docs/runbook.md"
  }

  assert {
    condition = alltrue(concat(
      [for key, a in {
        zero_records    = aws_cloudwatch_metric_alarm.zero_records
        missed_run      = aws_cloudwatch_metric_alarm.missed_run
        watermark_stale = aws_cloudwatch_metric_alarm.watermark_stale
      } : endswith(a.alarm_description, " Runbook: https://git.example.com/platform/docs/runbook.md#${replace(key, "_", "-")}")],
      [for key, a in aws_cloudwatch_metric_alarm.counts : endswith(a.alarm_description, " Runbook: https://git.example.com/platform/docs/runbook.md#${replace(key, "_", "-")}")],
    ))
    error_message = "Every alarm description must end with its runbook section, <base>#<alarm key with - for _>, so the page carries it."
  }

  assert {
    condition     = strcontains(jsondecode(aws_cloudwatch_event_target.run_failed[0].input_transformer[0].input_template).AlarmDescription, "https://git.example.com/platform/docs/runbook.md#run-failed")
    error_message = "The failed-run page must link the run-failed runbook section."
  }
}

run "the_runbook_defaults_to_the_repository_docs" {
  command = plan

  assert {
    condition     = output.runbook_links.missed_run == "https://github.com/example/glue-incremental/blob/main/docs/runbook.md#missed-run"
    error_message = "Without runbook_base_url the links point into the repository's docs/runbook.md."
  }
}

run "the_failure_page_is_a_cloudwatch_alarm_notification" {
  command = plan

  assert {
    condition = (
      jsondecode(aws_cloudwatch_event_target.run_failed[0].input_transformer[0].input_template).AlarmName == "orders-load-run-failed" &&
      jsondecode(aws_cloudwatch_event_target.run_failed[0].input_transformer[0].input_template).NewStateValue == "ALARM" &&
      jsondecode(aws_cloudwatch_event_target.run_failed[0].input_transformer[0].input_template).NewStateReason == "Glue job <job> run <run> ended <state>: <message>"
    )
    error_message = "The failed-run page must be JSON shaped like a CloudWatch alarm notification (AlarmName, NewStateValue, NewStateReason) with EventBridge placeholders, not a bare string."
  }
}

run "a_missed_run_window_longer_than_a_day_is_several_periods_all_empty" {
  command = plan

  variables {
    schedule_period_seconds  = 86400
    missed_run_grace_seconds = 7200
  }

  assert {
    condition = (
      aws_cloudwatch_metric_alarm.missed_run.period == 46800 &&
      aws_cloudwatch_metric_alarm.missed_run.evaluation_periods == 2 &&
      aws_cloudwatch_metric_alarm.missed_run.datapoints_to_alarm == 2 &&
      aws_cloudwatch_metric_alarm.missed_run.treat_missing_data == "breaching"
    )
    error_message = "A 93,600 s missed-run window must be 2 periods of 46,800 s (CloudWatch refuses periods over 86,400 s), both breaching before it pages."
  }
}

run "accepts_the_20_second_high_resolution_period" {
  command = plan

  variables {
    schedule_period_seconds  = 20
    missed_run_grace_seconds = 0
  }

  assert {
    condition     = aws_cloudwatch_metric_alarm.zero_records.period == 20 && aws_cloudwatch_metric_alarm.missed_run.period == 20
    error_message = "PutMetricAlarm accepts 10, 20 and 30 s periods."
  }
}

run "rejects_a_runbook_base_url_with_a_fragment" {
  command = plan

  variables {
    runbook_base_url = "https://git.example.com/runbook.md#orders"
  }

  expect_failures = [var.runbook_base_url]
}

run "a_run_past_its_delay_threshold_pages_before_the_timeout" {
  variables {
    slow_run_warning_enabled = true
    runbook_base_url         = "https://git.example.com/platform/docs/runbook.md"
  }

  assert {
    condition = jsondecode(aws_cloudwatch_event_rule.run_slow[0].event_pattern) == {
      source        = ["aws.glue"]
      "detail-type" = ["Glue Job Run Status"]
      detail        = { jobName = ["orders-load"] }
    }
    error_message = "The slow-run warning must match Glue's delay notification of this job only."
  }

  assert {
    condition     = aws_cloudwatch_event_target.run_slow[0].arn == "arn:aws:sns:eu-west-1:123456789012:gi-oncall" && strcontains(jsondecode(aws_cloudwatch_event_target.run_slow[0].input_transformer[0].input_template).AlarmDescription, "runbook.md#run-slow")
    error_message = "A slow run must page the on-call topic, linking the runbook's slow-run section."
  }
}
