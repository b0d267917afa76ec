# One dashboard per environment: a row per pipeline with what on-call looks at
# first (records new/read/written, watermark lag, late files, failed runs),
# under one widget holding every alarm's state.
locals {
  dashboard_alarm_arns = flatten([for k in keys(var.pipelines) : values(module.alarms[k].alarm_arns)])

  dashboard_rows = [
    for index, k in sort(keys(var.pipelines)) : [
      {
        type = "metric", x = 0, y = 6 + index * 6, width = 6, height = 6
        properties = {
          title   = "${k}: records"
          region  = data.aws_region.current.name
          stat    = "Sum"
          period  = 300
          metrics = [for m in ["RecordsNew", "RecordsRead", "RecordsWritten"] : [var.metrics_namespace, m, "JobName", local.job_names[k]]]
        }
      },
      {
        type = "metric", x = 6, y = 6 + index * 6, width = 6, height = 6
        properties = {
          title   = "${k}: watermark lag (s)"
          region  = data.aws_region.current.name
          stat    = "Maximum"
          period  = 300
          metrics = [[var.metrics_namespace, "WatermarkLagSeconds", "JobName", local.job_names[k]]]
        }
      },
      {
        type = "metric", x = 12, y = 6 + index * 6, width = 6, height = 6
        properties = {
          title   = "${k}: late files skipped"
          region  = data.aws_region.current.name
          stat    = "Sum"
          period  = 300
          metrics = [[var.metrics_namespace, "LateFilesSkipped", "JobName", local.job_names[k]]]
        }
      },
      {
        # Each failed, timed-out or stopped run fires the job's failure rule once.
        type = "metric", x = 18, y = 6 + index * 6, width = 6, height = 6
        properties = {
          title   = "${k}: failed runs"
          region  = data.aws_region.current.name
          stat    = "Sum"
          period  = 300
          metrics = [["AWS/Events", "TriggeredRules", "RuleName", "${local.job_names[k]}-run-failed"]]
        }
      },
    ]
  ]
}

data "aws_region" "current" {}

resource "aws_cloudwatch_dashboard" "this" {
  count = var.dashboard_enabled ? 1 : 0

  dashboard_name = "${var.name_prefix}-pipelines"
  dashboard_body = jsonencode({
    widgets = concat(
      [
        {
          type = "alarm", x = 0, y = 0, width = 24, height = 6
          properties = {
            title  = "Alarms of every pipeline"
            alarms = local.dashboard_alarm_arns
          }
        },
      ],
      flatten(local.dashboard_rows),
    )
  })
}
