output "name" {
  description = "Name of the watermarks table (pass it to jobs as --watermarks_table)."
  value       = aws_dynamodb_table.this.name
}

output "arn" {
  description = "ARN of the watermarks table, the only DynamoDB resource job roles are granted."
  value       = aws_dynamodb_table.this.arn
}

output "deletion_protection_enabled" {
  description = "Whether DeleteTable is refused (so environment tests can assert it without reaching into the module)."
  value       = aws_dynamodb_table.this.deletion_protection_enabled
}

output "history_expiry_attribute" {
  description = "The TTL attribute history items expire by (null when history_ttl_enabled is false)."
  value       = var.history_ttl_enabled ? "expires_at" : null
}

output "kms_key_arn" {
  description = "Customer managed key encrypting the table; null: the AWS managed key."
  value       = var.kms_key_arn
}
