variable "name" {
  description = "Name of the queue (a standard queue: EventBridge takes no FIFO dead-letter queue)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,80}$", var.name))
    error_message = "name must be 1-80 characters of [A-Za-z0-9_-] (a standard SQS queue name: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html); got \"${var.name}\"."
  }
}

variable "rule_arns" {
  description = "ARNs of the EventBridge rules whose targets send here: the only aws:SourceArn the queue admits."
  type        = list(string)

  validation {
    condition     = length(var.rule_arns) > 0
    error_message = "rule_arns must name at least one rule: a queue policy cannot admit an empty list of sources."
  }
}

variable "what" {
  description = "What an undelivered event means, for the alarm's description (e.g. \"failed-run and slow-run pages of gi-prod-orders\")."
  type        = string
}

variable "alarm_topic_arn" {
  description = "The on-call SNS topic the not-empty alarm pages."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN; got \"${var.alarm_topic_arn}\"."
  }
}

variable "runbook_base_url" {
  description = "The on-call runbook the alarm links as `<base>#event-delivery-failed`."
  type        = string
  default     = "https://github.com/example/glue-incremental/blob/main/docs/runbook.md"
  nullable    = false
}

variable "tags" {
  description = "Tags applied to the queue and its alarm."
  type        = map(string)
  default     = {}
}
