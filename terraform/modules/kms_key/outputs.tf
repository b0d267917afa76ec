output "arn" {
  description = "ARN of the key."
  value       = aws_kms_key.this.arn
}

output "alias_name" {
  description = "Alias of the key."
  value       = aws_kms_alias.this.name
}

output "policy_json" {
  description = "The key policy (JSON)."
  value       = aws_kms_key.this.policy
}
