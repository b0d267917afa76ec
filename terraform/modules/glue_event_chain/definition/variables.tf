variable "comment" {
  description = "The definition's Comment (glue_event_chain names its role there, which defers the provider's plan-time validation to apply)."
  type        = string
}
