output "environment" {
  description = "Which environment this state is (deploy and status check it against --env)."
  value       = var.environment
}

output "platform" {
  description = "What deploy, status and the demo read (modules/incremental_pipeline's `platform`)."
  value       = module.pipeline.platform
}

output "oncall_role_arn" {
  description = "Role the on-call assumes for `status` and `watermarks` (docs/runbook.md)."
  value       = module.pipeline.oncall_role_arn
}

output "analyst_role_arn" {
  description = "Role analysts assume to query the targets in the Athena workgroup."
  value       = module.pipeline.analyst_role_arn
}
