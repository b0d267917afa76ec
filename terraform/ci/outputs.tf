output "role_arns" {
  description = "Per environment: pull_request (first environment only), plan and deploy role ARNs, for the workflow's variables."
  value       = { for env, m in module.roles : env => m.role_arns }
}
