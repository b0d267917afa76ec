# The start-dependents state machine's definition, with no provider and no resource:
# `terraform console` evaluates it offline, so tests/integration/test_state_machine.py
# executes exactly what glue_event_chain deploys (on LocalStack's Step Functions).
#
# JSONata: the latest run of every upstream (GetJobRuns lists the newest first);
# the finished run counts as SUCCEEDED whatever the lookup says (it may lag).
locals {
  definition = {
    Comment       = var.comment
    QueryLanguage = "JSONata"
    StartAt       = "LatestRuns"
    States = {
      LatestRuns = {
        Type  = "Map"
        Items = "{% $states.input.upstreams %}"
        ItemProcessor = {
          ProcessorConfig = { Mode = "INLINE" }
          StartAt         = "LatestRun"
          States = {
            LatestRun = {
              Type      = "Task"
              Resource  = "arn:aws:states:::aws-sdk:glue:getJobRuns"
              Arguments = { JobName = "{% $states.input %}", MaxResults = 1 }
              Output    = "{% {'job': $states.input, 'state': $states.result.JobRuns[0].JobRunState} %}"
              End       = true
            }
          }
        }
        Output = "{% $merge([$states.input, {'latest': $states.result}]) %}"
        Next   = "AllowedToStart"
      }
      AllowedToStart = {
        Type = "Choice"
        Choices = [{
          Condition = "{% $states.input.logical = 'ANY' or $count($states.input.latest[job != $states.input.finished and state != 'SUCCEEDED']) = 0 %}"
          Next      = "StartJob"
        }]
        Default = "WaitForTheOtherUpstreams"
      }
      StartJob = {
        Type      = "Task"
        Resource  = "arn:aws:states:::glue:startJobRun"
        Arguments = { JobName = "{% $states.input.job %}" }
        End       = true
      }
      WaitForTheOtherUpstreams = {
        Type    = "Succeed"
        Comment = "Another upstream's latest run has not SUCCEEDED: its own success (a rerun included) starts the job."
      }
    }
  }
}
