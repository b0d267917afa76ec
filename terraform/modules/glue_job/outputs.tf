output "job_name" {
  description = "Name of the Glue job (its --JOB_NAME and its metrics' JobName dimension)."
  value       = aws_glue_job.this.name
}

output "job_arn" {
  description = "ARN of the Glue job."
  value       = aws_glue_job.this.arn
}

output "state_name" {
  description = "Watermark state name: the DynamoDB partition key this job writes."
  value       = local.state_name
}

output "role_arn" {
  description = "ARN of the job's IAM role."
  value       = aws_iam_role.this.arn
}

output "role_name" {
  description = "Name of the job's IAM role."
  value       = aws_iam_role.this.name
}

output "log_group_names" {
  description = "The job's CloudWatch log groups, keyed `error` (driver/system logs) and `output` (stdout/stderr)."
  value       = { for k, g in aws_cloudwatch_log_group.this : k => g.name }
}

output "default_arguments" {
  description = "Effective default arguments: the module's defaults with the caller's merged on top."
  value       = aws_glue_job.this.default_arguments
}

output "non_overridable_arguments" {
  description = "Arguments a run cannot override: watermarks table, state name and lease length."
  value       = aws_glue_job.this.non_overridable_arguments
}

output "run_arguments" {
  description = "Every argument a run gets from the job definition (module defaults, caller's default_arguments, non-overridable), known at plan: what the environment contract test parses with the job's own parser."
  value       = merge(local.default_arguments, var.default_arguments, local.non_overridable_arguments)
}

output "role_policy_json" {
  description = "The role's least-privilege inline policy document (JSON)."
  value       = aws_iam_role_policy.this.policy
}

output "security_configuration" {
  description = "Glue security configuration the job runs under; null: none."
  value       = aws_glue_job.this.security_configuration
}

output "log_kms_key_arn" {
  description = "KMS key encrypting the job's log groups; null: CloudWatch Logs' default encryption."
  value       = var.log_kms_key_arn
}
