output "json" {
  description = "The state machine definition (Amazon States Language, JSONata), JSON-encoded."
  value       = jsonencode(local.definition)
}
