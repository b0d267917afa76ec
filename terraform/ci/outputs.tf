output "role_arns" {
  description = "Per environment: pull_request, plan, deploy and publish role ARNs, for the workflow's AWS_PR_PLAN_ROLE_ARN_<ENV>, AWS_PLAN_ROLE_ARN_<ENV> and each GitHub environment's AWS_DEPLOY_ROLE_ARN and AWS_PUBLISH_ROLE_ARN."
  value       = { for env, m in module.roles : env => m.role_arns }
}
