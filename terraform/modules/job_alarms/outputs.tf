output "alarm_names" {
  description = "Alarm names keyed zero_records, missed_run, watermark_stale, and the enabled count alarms (late_files, null_watermarks, future_watermarks, metric_publish_failures)."
  value = merge(
    {
      zero_records    = aws_cloudwatch_metric_alarm.zero_records.alarm_name
      missed_run      = aws_cloudwatch_metric_alarm.missed_run.alarm_name
      watermark_stale = aws_cloudwatch_metric_alarm.watermark_stale.alarm_name
    },
    { for key, alarm in aws_cloudwatch_metric_alarm.counts : key => alarm.alarm_name },
  )
}

output "alarm_arns" {
  description = "Alarm ARNs, keyed as alarm_names."
  value = merge(
    {
      zero_records    = aws_cloudwatch_metric_alarm.zero_records.arn
      missed_run      = aws_cloudwatch_metric_alarm.missed_run.arn
      watermark_stale = aws_cloudwatch_metric_alarm.watermark_stale.arn
    },
    { for key, alarm in aws_cloudwatch_metric_alarm.counts : key => alarm.arn },
  )
}

output "failure_event_rule_name" {
  description = "Name of the EventBridge rule paging on failed runs, or null when enable_failure_events is false."
  value       = try(aws_cloudwatch_event_rule.run_failed[0].name, null)
}

output "alarm_descriptions" {
  description = "Alarm descriptions (what the page says, runbook link included) keyed zero_records, missed_run, watermark_stale."
  value = {
    zero_records    = aws_cloudwatch_metric_alarm.zero_records.alarm_description
    missed_run      = aws_cloudwatch_metric_alarm.missed_run.alarm_description
    watermark_stale = aws_cloudwatch_metric_alarm.watermark_stale.alarm_description
  }
}

output "runbook_links" {
  description = "Runbook link of every page, keyed as alarm_names plus run_failed: `<runbook_base_url>#<key with - for _>`."
  value       = local.runbook_links
}

output "run_failed_page_template" {
  description = "The failed-run page's input template: a CloudWatch alarm notification (JSON) with EventBridge placeholders."
  value       = local.run_failed_page_template
}

output "event_rule_arns" {
  description = "ARNs of this job's EventBridge rules (failed run, slow run; those enabled): its dead-letter queue admits exactly these as aws:SourceArn."
  value       = concat(aws_cloudwatch_event_rule.run_failed[*].arn, aws_cloudwatch_event_rule.run_slow[*].arn)
}

output "delivery_alarm_names" {
  description = "The FailedInvocations alarm of each enabled rule, keyed run_failed and run_slow (runbook anchor event-delivery-failed)."
  value       = { for key, alarm in aws_cloudwatch_metric_alarm.failed_invocations : key => alarm.alarm_name }
}

output "dead_letter_queue_name" {
  description = "The queue (`<job>-event-dead-letters`) where pages EventBridge could not publish wait, or null without a rule."
  value       = try(module.dead_letters[0].name, null)
}

output "dead_letter_alarm_name" {
  description = "The alarm paging while that queue is not empty, or null without a rule."
  value       = try(module.dead_letters[0].alarm_name, null)
}
