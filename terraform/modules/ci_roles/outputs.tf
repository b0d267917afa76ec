output "role_arns" {
  description = "Role ARNs keyed pull_request (when created), plan, deploy and publish: the workflow's AWS_PR_PLAN_ROLE_ARN_<ENV>, AWS_PLAN_ROLE_ARN_<ENV> and the environment's AWS_DEPLOY_ROLE_ARN (apply) and AWS_PUBLISH_ROLE_ARN (deploy)."
  value       = { for k, r in aws_iam_role.this : k => r.arn }
}

output "oidc_provider_arn" {
  description = "The GitHub OIDC provider the roles trust."
  value       = local.provider
}
